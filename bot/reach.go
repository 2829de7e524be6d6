package bot

import (
	"net/netip"
	"net/url"
	"strings"
)

// reach is where an address the server hands out can be opened from.
type reach int

const (
	reachAny     reach = iota // a public address, or any host name but localhost
	reachLocal                // loopback, localhost or unspecified: the server's machine only
	reachPrivate              // a private or link-local address: its own network only
)

// urlReach says where raw can be opened from, and its port (the scheme's
// when it names none), for a warning that suggests a tunnel to it. A host
// name other than localhost is reachAny: the server cannot know where a
// name resolves from the machine that opens it (a rented host, a phone).
// An address that does not parse is reachAny too: nothing true can be
// said about it.
func urlReach(raw string) (reach, string) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return reachAny, ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return reachLocal, port
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		switch {
		case a.IsLoopback() || a.IsUnspecified():
			return reachLocal, port
		case a.IsPrivate() || a.IsLinkLocalUnicast():
			return reachPrivate, port
		}
	}
	return reachAny, port
}
