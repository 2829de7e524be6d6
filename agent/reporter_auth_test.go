package agent

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
)

// TestReporter_UnknownTokenBacksOff: a hub that no longer knows the token
// (revoked, rental released) answers 401 to every heartbeat. The agent
// says once what to do, backs off to an hour between tries, and a
// different answer resets it.
func TestReporter_UnknownTokenBacksOff(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const secret = "s3cret-revoked-token"
				hub := hubtest.New("the-right-token", "box1")
				var mu sync.Mutex
				var at []time.Time
				status := code
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					at = append(at, time.Now())
					st := status
					mu.Unlock()
					if st != http.StatusOK {
						http.Error(w, "unknown agent token: get one with /agent NAME", st)
						return
					}
					r.Header.Set("Authorization", "Bearer the-right-token")
					hub.Handler().ServeHTTP(w, r)
				})
				r, _ := newTestReporter(hub, h)
				r.Token = secret
				var logs syncWriter
				logs.w = &strings.Builder{}
				r.Log = newTextLogger(&logs)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error)
				go func() { done <- r.Run(ctx) }()
				defer func() { cancel(); <-done }()
				start := time.Now()
				time.Sleep(3 * time.Hour)
				synctest.Wait()

				mu.Lock()
				n := len(at)
				var gaps []time.Duration
				for i := 1; i < len(at); i++ {
					gaps = append(gaps, at[i].Sub(at[i-1]))
				}
				mu.Unlock()
				// 30 s, 1, 2, 4, 8, 16, 32 min, then hourly: 10 tries in 3 h
				// (360 at the interval).
				if n > 12 {
					t.Fatalf("%d heartbeats in 3 h against a 401: no backoff (gaps %v)", n, gaps)
				}
				if len(gaps) < 2 || gaps[len(gaps)-1] != time.Hour {
					t.Fatalf("gaps %v: want doubling up to 1h", gaps)
				}
				out := logs.String()
				lines := 0
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
						lines++
					}
				}
				if lines != 1 || !strings.Contains(out, "/agent NAME") || !strings.Contains(out, "does not know this agent's token") {
					t.Fatalf("want one plain warning naming /agent NAME, got %d:\n%s", lines, out)
				}
				if strings.Contains(out, secret) {
					t.Fatalf("token logged:\n%s", out)
				}

				// The hub knows the token again: the next try gets
				// through and the interval is back to 30 s.
				mu.Lock()
				status = http.StatusOK
				before := len(at)
				mu.Unlock()
				time.Sleep(time.Hour + 5*time.Minute)
				synctest.Wait()
				mu.Lock()
				after := len(at) - before
				mu.Unlock()
				if after < 5 || len(hub.Heartbeats()) < 5 {
					t.Fatalf("after recovery: %d tries, %d heartbeats accepted in 65 min (since %s)", after, len(hub.Heartbeats()), time.Since(start))
				}
			})
		})
	}
}
