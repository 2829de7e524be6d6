package runpod_test

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
	"github.com/gpuledger/gpuledger/connector/runpod"
)

// TestRedirect_KeyStaysWithOrigin: the configured API answers every
// request with a redirect to another origin (another port of the same
// host). Each call fails with ErrBadAnswer saying so, and the other
// origin receives no request at all, so the key never reaches it.
func TestRedirect_KeyStaysWithOrigin(t *testing.T) {
	const secret = "rpa_REDIRECTKEY0123456789"
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
	hc := &http.Client{Timeout: 5 * time.Second}
	c, err := runpod.New(runpod.Config{APIKey: secret, BaseURL: origin.URL + "/v1", GraphQLURL: origin.URL + "/graphql", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"Check":     func() error { return c.Check(ctx) },
		"Instances": func() error { _, err := c.Instances(ctx); return err },
		"Balance":   func() error { _, err := c.Balance(ctx); return err },
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
