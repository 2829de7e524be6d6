package lambdafake

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServer_Auth: the fake takes the key both ways Lambda documents
// (Bearer, and basic auth with the key as user and no password) and
// answers anything else with Lambda's invalid-key envelope.
func TestServer_Auth(t *testing.T) {
	s := New("k1", Instance{ID: "a1", Status: "active", Price: 75})
	defer s.Close()
	for _, c := range []struct {
		name   string
		set    func(*http.Request)
		status int
	}{
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer k1") }, 200},
		{"basic", func(r *http.Request) { r.SetBasicAuth("k1", "") }, 200},
		{"basic with a password", func(r *http.Request) { r.SetBasicAuth("k1", "x") }, 401},
		{"wrong key", func(r *http.Request) { r.Header.Set("Authorization", "Bearer k2") }, 401},
		{"none", func(*http.Request) {}, 401},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/instances", nil)
		c.set(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, b)
		}
		if c.status == 401 && !strings.Contains(string(b), `"code":"global/invalid-api-key"`) {
			t.Errorf("%s: %s", c.name, b)
		}
		if c.status == 200 && !strings.Contains(string(b), `"price_cents_per_hour":75`) {
			t.Errorf("%s: %s", c.name, b)
		}
	}
}
