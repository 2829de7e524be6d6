package telegram

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// NewHTTPClient returns the client the transport uses: timeout must exceed
// the long-poll timeout (the library sets none, and a request stuck on a
// dead connection would otherwise hang forever); proxy picks the proxy per
// request (ProxyFromEnv).
func NewHTTPClient(timeout time.Duration, proxy func(*http.Request) (*url.URL, error)) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = proxy
	return &http.Client{Timeout: timeout, Transport: tr}
}

// ProxyFromEnv returns a proxy function reading HTTPS_PROXY (for https
// URLs), HTTP_PROXY (for http URLs), NO_PROXY (or their lowercase forms)
// and, unlike net/http's ProxyFromEnvironment, falling back to ALL_PROXY,
// which curl users set. Schemes http, https, socks5 and socks5h work
// (net/http dials socks5 itself; both resolve names on the proxy, which
// matters where the local resolver is poisoned for api.telegram.org). As in
// net/http, requests to localhost and loopback addresses bypass the proxy.
// NO_PROXY is a comma-separated list of host names (matching subdomains
// too) or "*". getenv is os.Getenv outside tests.
func ProxyFromEnv(getenv func(string) string) func(*http.Request) (*url.URL, error) {
	get := func(key string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return getenv(strings.ToLower(key))
	}
	all, httpsProxy, httpProxy := get("ALL_PROXY"), get("HTTPS_PROXY"), get("HTTP_PROXY")
	noProxy := strings.Split(get("NO_PROXY"), ",")
	return func(r *http.Request) (*url.URL, error) {
		raw := httpProxy
		if r.URL.Scheme == "https" {
			raw = httpsProxy
		}
		if raw == "" {
			raw = all
		}
		if raw == "" || bypassProxy(r.URL.Hostname(), noProxy) {
			return nil, nil
		}
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("telegram: invalid proxy address %q, e.g. socks5://127.0.0.1:1080", raw)
		}
		return u, nil
	}
}

func bypassProxy(host string, noProxy []string) bool {
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, p := range noProxy {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if p == "*" {
			return true
		}
		p = strings.TrimPrefix(p, "*")
		p = strings.TrimPrefix(p, ".")
		if host == p || strings.HasSuffix(host, "."+p) {
			return true
		}
	}
	return false
}

// ctxDoer gives the library's context-free requests a context (so Run's
// cancellation ends a held long poll at once) and takes the token out of
// the URL that net/http puts in its errors.
type ctxDoer struct {
	ctx   context.Context
	c     *http.Client
	token string
}

func (d ctxDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req.WithContext(d.ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = scrub(ue.URL, d.token)
		}
		return nil, err
	}
	return resp, nil
}

// scrub replaces the bot token in s: library and net/http errors carry the
// request URL, which has the token in its path.
func scrub(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<token>")
}

// Backoff is a capped exponential backoff with jitter: the n-th retry waits
// between half and all of Min·2^(n-1), at most Max.
type Backoff struct {
	Min, Max time.Duration
}

func (b Backoff) delay(attempt int) time.Duration {
	d := b.Min
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if d <= 1 {
		return d
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)))
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
