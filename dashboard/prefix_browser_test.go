package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/internal/browser"
)

// TestBrowser_BehindPrefix opens a one-time link in headless Chromium,
// with the hub behind a proxy that serves it under /ledger and strips the
// prefix. The page must come up signed in, every request it makes must
// carry the prefix, and its CSV button must fetch the month's export
// through it. Before, the login redirected to /app/ and the cookie's Path
// was /app/, so such a set-up showed a 404.
func TestBrowser_BehindPrefix(t *testing.T) {
	br := browser.Start(t) // skips without Chromium, saying why
	hub := httptest.NewUnstartedServer(nil)
	public := "http://" + hub.Listener.Addr().String() + "/ledger"
	e := newEnv(t, func(c *dashboard.Config) { c.PublicURL = public })
	e.fill(1)
	var (
		mu   sync.Mutex
		seen []string // path and status of every request that reached the hub
	)
	inner := http.StripPrefix("/ledger", e.h)
	hub.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		inner.ServeHTTP(rec, r)
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+http.StatusText(rec.code))
		mu.Unlock()
	})
	hub.Start()
	t.Cleanup(hub.Close)

	link, _, err := e.srv.Link(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := br.Open(t, link, browser.Options{Viewport: browser.Phone})
	if s := p.WaitState(); s != "ready" {
		t.Fatalf("state %q, want ready; page: %s", s, p.Text("main"))
	}
	if got := browser.Eval[string](p, `location.pathname`); got != "/ledger"+dashboard.PathApp {
		t.Errorf("the page is at %q, want /ledger%s", got, dashboard.PathApp)
	}
	browser.Eval[bool](p, `(document.querySelector('[data-test="csv"]').click(), true)`)
	want := "/ledger" + dashboard.PathExport + " OK"
	browser.Eval[bool](p, `new Promise(function (r) { setTimeout(function () { r(true) }, 300) })`)
	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	if !slices.Contains(got, want) {
		t.Errorf("requests %v: no %q", got, want)
	}
	for _, s := range got {
		if !strings.HasPrefix(s, "/ledger/") || !strings.HasSuffix(s, " OK") && !strings.HasSuffix(s, " See Other") {
			t.Errorf("request %q: every request should go through the prefix and succeed", s)
		}
	}
	if note := p.Text(`[data-test="csv-note"]`); note != "" {
		t.Errorf("CSV note %q after the download, want none", note)
	}
	p.CheckClean(nil)
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) { w.code = code; w.ResponseWriter.WriteHeader(code) }
