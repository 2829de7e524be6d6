package main

import (
	"io"
	"net/netip"
	"strings"
	"testing"
)

// TestParseConfig_TrustedProxies: GPULEDGER_TRUSTED_PROXIES is parsed
// into prefixes; a bad entry is an error naming the variable and the
// entry; unset, none is trusted (X-Forwarded-For is ignored).
func TestParseConfig_TrustedProxies(t *testing.T) {
	parse := func(v string) ([]netip.Prefix, error) {
		cfg, _, err := parseConfig("serve", nil, func(k string) string {
			if k == "GPULEDGER_TRUSTED_PROXIES" {
				return v
			}
			return ""
		}, io.Discard)
		return cfg.TrustedProxies, err
	}
	t.Run("Unset", func(t *testing.T) {
		if got, err := parse(""); err != nil || len(got) != 0 {
			t.Fatalf("got %v, %v; want none", got, err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		got, err := parse("127.0.0.1, 10.0.0.0/8")
		if err != nil || len(got) != 2 || got[0] != netip.MustParsePrefix("127.0.0.1/32") || got[1] != netip.MustParsePrefix("10.0.0.0/8") {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("ErrBad", func(t *testing.T) {
		_, err := parse("127.0.0.1, nginx")
		if err == nil || !strings.Contains(err.Error(), "GPULEDGER_TRUSTED_PROXIES") || !strings.Contains(err.Error(), `"nginx"`) {
			t.Fatalf("err = %v, want one naming the variable and the entry", err)
		}
	})
}
