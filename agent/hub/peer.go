package hub

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The address a heartbeat came from is one of the facts that show a
// rental's agent runs on the platform instance the rental is bound to
// (ledger.Corroborate): a stolen token used elsewhere reports from
// another address. The hub takes the TCP peer; X-Forwarded-For only when
// that peer is a proxy the operator named (Config.TrustedProxies), since
// anyone can send the header.

// ParseTrustedProxies parses GPULEDGER_TRUSTED_PROXIES: IP addresses and
// CIDR prefixes separated by commas ("10.0.0.5, 192.168.0.0/16,
// ::1"); "" is none. A bad entry is an error that names it; a prefix
// with host bits set (10.0.0.5/8) is refused as a likely typo.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxies: %q is not an IP address or CIDR prefix", f)
			}
			if p.Masked() != p {
				return nil, fmt.Errorf("trusted proxies: %q has bits set past its prefix length: did you mean %s?", f, p.Masked())
			}
			if p.Addr().Is4In6() {
				p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
			}
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("trusted proxies: %q is not an IP address or CIDR prefix", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// peerAddr returns the address r came from, "" when it cannot be told:
// the TCP peer (r.RemoteAddr); when that peer is a trusted proxy, the
// right-most X-Forwarded-For entry that is not itself a trusted proxy
// (each proxy appends the address it was reached from, so entries left
// of the nearest untrusted one are the client's own claims). A malformed
// entry met on the way makes the address unknown, never the proxy's.
func (h *Hub) peerAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	peer = peer.Unmap().WithZone("")
	if !h.trusted(peer) {
		return peer.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return ""
		}
		if !h.trusted(a) {
			return a.String()
		}
		peer = a
	}
	// Every hop is a trusted proxy: the left-most is the client.
	return peer.String()
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a
// port ("1.2.3.4:5678", "[2001:db8::1]:443").
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

func (h *Hub) trusted(a netip.Addr) bool {
	for _, p := range h.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
