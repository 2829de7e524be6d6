package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// TestReporter_RetryAfter: a hub that answers "ignored, retry after
// 3600 s" gets no heartbeat for an hour after each answer, and the
// heartbeats not sent meanwhile are not sent in a burst afterwards.
func TestReporter_RetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		retry := 3600
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			at = append(at, time.Now())
			ra := retry
			mu.Unlock()
			json.NewEncoder(w).Encode(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolIgnored, RetryAfter: ra}})
		})
		r, _ := newTestReporter(hubtest.New("x", ""), h)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		time.Sleep(3*time.Hour + time.Minute)
		synctest.Wait()
		mu.Lock()
		got := append([]time.Time(nil), at...)
		mu.Unlock()
		// The first at 30 s, then one an hour: 4 in 3 h 1 min.
		if len(got) != 4 {
			t.Fatalf("%d heartbeats in 3 h under retry_after 3600, want 4: %v", len(got), got[:min(len(got), 6)])
		}
		for i := 1; i < len(got); i++ {
			if gap := got[i].Sub(got[i-1]); gap < time.Hour {
				t.Fatalf("heartbeat %d came %s after the one before, under the hub's retry_after", i, gap)
			}
		}
		// Without a retry_after the interval is back.
		mu.Lock()
		retry = 0
		mu.Unlock()
		time.Sleep(time.Hour + 2*time.Minute)
		synctest.Wait()
		mu.Lock()
		n := len(at)
		mu.Unlock()
		if n < 4+3 {
			t.Fatalf("%d heartbeats after retry_after ended, want the 30 s interval again", n-4)
		}
	})
}

// TestReporter_RetryAfterCapped: a retry_after above an hour waits an
// hour: a hub cannot silence an agent for days.
func TestReporter_RetryAfterCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			mu.Unlock()
			json.NewEncoder(w).Encode(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolHeld, RetryAfter: 86400 * 7}})
		})
		r, _ := newTestReporter(hubtest.New("x", ""), h)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		time.Sleep(2*time.Hour + time.Minute)
		synctest.Wait()
		mu.Lock()
		got := n
		mu.Unlock()
		if got != 3 {
			t.Fatalf("%d heartbeats in 2 h under a week's retry_after, want 3 (capped at an hour)", got)
		}
	})
}

// TestReporter_RefusedSwitchesToken: a 409 (or 401/403) on the current
// token is offered to OnRefused; when it switches the token, the same
// heartbeat goes again at once with the new one, and nothing is logged as
// a dropped heartbeat.
func TestReporter_RefusedSwitchesToken(t *testing.T) {
	for _, code := range []int{http.StatusConflict, http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				mu.Lock()
				seen = append(seen, tok)
				mu.Unlock()
				if tok == "bound-token" {
					http.Error(w, "this token belongs to another instance", code)
					return
				}
				json.NewEncoder(w).Encode(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolWaiting}})
			})
			r, resps := newTestReporter(hubtest.New("x", ""), h)
			cur := NewToken("bound-token")
			r.Current = cur
			var refusedErr error
			r.OnRefused = func(err error) bool {
				refusedErr = err
				if cur.Get() == "enrol-abc" {
					return false
				}
				cur.Set("enrol-abc")
				return true
			}
			r.enqueue(r.Cut())
			if _, failed := r.flush(t.Context()); failed {
				t.Fatal("flush failed after the switch")
			}
			if len(seen) != 2 || seen[0] != "bound-token" || seen[1] != "enrol-abc" {
				t.Fatalf("tokens sent %v, want the bound one then the enrolment one", seen)
			}
			if refusedErr == nil || !strings.Contains(refusedErr.Error(), "another instance") {
				t.Fatalf("OnRefused got %v", refusedErr)
			}
			if len(*resps) != 1 || r.Dropped() != 0 {
				t.Fatalf("responses %d dropped %d", len(*resps), r.Dropped())
			}
		})
	}
}

// TestReporter_FinalHeartbeat: the last heartbeat, cut when ctx ends,
// goes through Final (which adds the shutdown report).
func TestReporter_FinalHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hub := hubtest.New("tok", "box1")
		r, _ := newTestReporter(hub, nil)
		r.Final = func(hb *wire.HeartbeatRequest) { hb.Shutdown = &wire.Shutdown{At: time.Now(), Host: true} }
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(65 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		hbs := hub.Heartbeats()
		if len(hbs) != 3 {
			t.Fatalf("%d heartbeats", len(hbs))
		}
		for _, hb := range hbs[:2] {
			if hb.Shutdown != nil {
				t.Fatalf("a shutdown report before the stop: %+v", hb)
			}
		}
		if s := hbs[2].Shutdown; s == nil || !s.Host {
			t.Fatalf("final heartbeat's shutdown %+v", s)
		}
	})
}
