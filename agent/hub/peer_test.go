package hub_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/netip"
	"testing"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
)

func TestParseTrustedProxies(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		got, err := hub.ParseTrustedProxies(" 10.0.0.5, 192.168.0.0/16,::1 ,,::ffff:10.1.0.0/112")
		want := []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32"), netip.MustParsePrefix("192.168.0.0/16"),
			netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.1.0.0/16")}
		if err != nil || len(got) != len(want) {
			t.Fatalf("ParseTrustedProxies = %v, %v; want %v", got, err, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("entry %d = %v, want %v", i, got[i], want[i])
			}
		}
	})
	t.Run("Empty", func(t *testing.T) {
		if got, err := hub.ParseTrustedProxies(""); err != nil || len(got) != 0 {
			t.Fatalf("ParseTrustedProxies(\"\") = %v, %v", got, err)
		}
	})
	for _, bad := range []string{"proxy.example", "10.0.0.5/8", "10.0.0.0/33", "fe80::1%eth0", "10.0.0.1:80", "*"} {
		t.Run("ErrBad/"+bad, func(t *testing.T) {
			if got, err := hub.ParseTrustedProxies("10.0.0.1," + bad); err == nil {
				t.Fatalf("ParseTrustedProxies(%q) = %v, want an error", bad, got)
			}
		})
	}
}

// TestHeartbeat_Peer: the address a heartbeat came from is the TCP
// peer's; X-Forwarded-For counts only from a trusted proxy, and then the
// right-most hop that is not one.
func TestHeartbeat_Peer(t *testing.T) {
	loop := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct {
		name    string
		trusted []netip.Prefix
		xff     []string
		want    string
	}{
		{"NoProxyNoHeader", nil, nil, "127.0.0.1"},
		{"UntrustedPeerHeaderIgnored", nil, []string{"198.51.100.7"}, "127.0.0.1"},
		{"TrustedProxy", loop, []string{"198.51.100.7"}, "198.51.100.7"},
		{"RightmostUntrusted", loop, []string{"203.0.113.9, 198.51.100.7, 10.0.0.2"}, "198.51.100.7"},
		{"HeadersJoined", loop, []string{"203.0.113.9", "198.51.100.7"}, "198.51.100.7"},
		{"WithPort", loop, []string{"[2001:db8::1]:4711"}, "2001:db8::1"},
		{"Malformed", loop, []string{"198.51.100.7, not-an-ip"}, ""},
		{"TrustedNoHeader", loop, nil, "127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, hub.Config{TrustedProxies: c.trusted})
			b, _ := json.Marshal(hb(wire.VerdictBusy, 0))
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+e.token)
			for _, v := range c.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("heartbeat: %d", res.StatusCode)
			}
			st, _ := e.hub.AgentState(e.rid)
			if st.Peer != c.want {
				t.Fatalf("peer %q, want %q", st.Peer, c.want)
			}
		})
	}
}
