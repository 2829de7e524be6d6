// Package connectortest holds the checks every platform connector's tests
// run alike.
package connectortest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
)

// KeyStaysWithOrigin checks that a connector never carries its key to
// another origin: the configured API (origin, the URL handed to dial)
// answers every request with a redirect to another port of the same host.
// Check, Instances and, with balance (the platform has one), Balance must each fail
// with ErrBadAnswer saying so, no error may hold the key, and the other
// origin must receive no request at all. dial makes the connector under
// test with secret as its key.
func KeyStaysWithOrigin(t *testing.T, secret string, balance bool, dial func(origin string, hc *http.Client) (connector.Client, error)) {
	t.Helper()
	var mu sync.Mutex
	var reached []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.String()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	c, err := dial(origin.URL, &http.Client{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"Check":     func() error { return c.Check(ctx) },
		"Instances": func() error { _, err := c.Instances(ctx); return err },
	}
	if balance {
		calls["Balance"] = func() error { _, err := c.Balance(ctx); return err }
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, connector.ErrBadAnswer) || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%s: err = %v, want ErrBadAnswer saying the API redirected", name, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the key is in the error: %v", name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reached) != 0 {
		t.Errorf("the other origin was sent %q", reached)
	}
}
