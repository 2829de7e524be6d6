package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestStatusOf checks the hub's one table from ledger codes to HTTP
// statuses, code by code.
func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{ledger.Errorf(ledger.EINVALID, "bad"), http.StatusBadRequest},
		{ledger.Errorf(ledger.ENOTFOUND, "none"), http.StatusNotFound},
		{ledger.Errorf(ledger.ECONFLICT, "taken"), http.StatusConflict},
		{ledger.Errorf(ledger.EDUPLICATE, "again"), http.StatusConflict},
		{ledger.Errorf(ledger.EUNAUTHORIZED, "no"), http.StatusForbidden},
		{ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable"), http.StatusServiceUnavailable},
		{ledger.Errorc(ledger.EFULL, "disk_full"), http.StatusServiceUnavailable},
		{fmt.Errorf("wrapped: %w", ledger.Errorf(ledger.ENOTFOUND, "none")), http.StatusNotFound},
		{errors.New("a bug"), http.StatusInternalServerError},
		{context.Canceled, http.StatusServiceUnavailable},
		{nil, http.StatusOK},
	} {
		if got := hub.StatusOf(c.err); got != c.want {
			t.Errorf("StatusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// failing is the real store with chosen methods failing.
type failing struct {
	hub.Store
	mu      sync.Mutex
	token   error // TokenByHash
	order   error // Order
	saveErr error // SaveIdle
}

func (f *failing) set(fn func(f *failing)) { f.mu.Lock(); fn(f); f.mu.Unlock() }

func (f *failing) TokenByHash(ctx context.Context, h [32]byte) (ledger.AgentToken, error) {
	f.mu.Lock()
	err := f.token
	f.mu.Unlock()
	if err != nil {
		return ledger.AgentToken{}, err
	}
	return f.Store.TokenByHash(ctx, h)
}

func (f *failing) Order(ctx context.Context, id string) (ledger.Order, error) {
	f.mu.Lock()
	err := f.order
	f.mu.Unlock()
	if err != nil {
		return ledger.Order{}, err
	}
	return f.Store.Order(ctx, id)
}

// TestHandlers_StatusFromCode sends heartbeats, order results and install
// script requests while the store fails: each handler answers the status
// the table gives the store's code (a busy ledger 503, a bug 500), and
// the agent's JSON error says which.
func TestHandlers_StatusFromCode(t *testing.T) {
	e := newEnv(t, hub.Config{})
	f := &failing{Store: e.db}
	h, err := hub.New(hub.Config{Store: f, Now: e.clk.Now, TokenTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	dl, err := hub.NewDownloads(hub.DownloadConfig{Binary: t.TempDir() + "/none", PublicURL: "http://ledger.example:8477/", Tokens: h.Tokens()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h.Handler())
	dl.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.srv = srv

	unavailable := ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable")
	bug := errors.New("sqlite: scan: a bug")
	body, _ := json.Marshal(hb(wire.VerdictBusy, 0))
	for _, c := range []struct {
		name string
		err  error
		want int
	}{{"EUNAVAILABLE", unavailable, http.StatusServiceUnavailable}, {"EINTERNAL", bug, http.StatusInternalServerError}} {
		t.Run("heartbeat/"+c.name, func(t *testing.T) {
			e.clk.Add(time.Minute) // past the token cache
			f.set(func(f *failing) { f.token = c.err })
			defer f.set(func(f *failing) { f.token = nil })
			code, b := e.post(wire.PathHeartbeat, e.token, body)
			if code != c.want {
				t.Errorf("heartbeat while the token lookup fails with %v: %d %s, want %d", c.err, code, b, c.want)
			}
		})
		t.Run("install/"+c.name, func(t *testing.T) {
			f.set(func(f *failing) { f.token = c.err })
			defer f.set(func(f *failing) { f.token = nil })
			res, err := http.Get(srv.URL + "/agent/install.sh?token=" + e.token)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Errorf("install.sh while the token lookup fails with %v: %d, want %d", c.err, res.StatusCode, c.want)
			}
		})
		t.Run("result/"+c.name, func(t *testing.T) {
			f.set(func(f *failing) { f.order = c.err })
			defer f.set(func(f *failing) { f.order = nil })
			got := e.result(e.token, wire.OrderResult{OrderID: "o1", Outcome: wire.OutcomeRejectedInvalid})
			if got != c.want {
				t.Errorf("order result while the order lookup fails with %v: %d, want %d", c.err, got, c.want)
			}
		})
	}
	t.Run("result/ENOTFOUND", func(t *testing.T) {
		if got := e.result(e.token, wire.OrderResult{OrderID: "o1", Outcome: wire.OutcomeRejectedInvalid}); got != http.StatusNotFound {
			t.Errorf("result for an unknown order: %d, want 404", got)
		}
	})
}
