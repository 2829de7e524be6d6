package agent

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// handlerTransport serves requests in-process, so reporter tests run inside
// a synctest bubble with fake time.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func newTestReporter(hub *hubtest.Hub, h http.Handler) (*Reporter, *[]wire.HeartbeatResponse) {
	var seq uint64
	var resps []wire.HeartbeatResponse
	if h == nil {
		h = hub.Handler()
	}
	r := &Reporter{
		Server:   "http://hub.test",
		Token:    hub.Token,
		Client:   &http.Client{Transport: handlerTransport{h}, Timeout: 5 * time.Second},
		Interval: 30 * time.Second,
		Queue:    4,
		Cut: func() wire.HeartbeatRequest {
			seq++
			return wire.HeartbeatRequest{Version: wire.Version, Seq: seq, Verdict: wire.VerdictIdle}
		},
		OnResponse: func(resp wire.HeartbeatResponse) { resps = append(resps, resp) },
	}
	return r, &resps
}

func seqs(hbs []wire.HeartbeatRequest) []uint64 {
	var out []uint64
	for _, h := range hbs {
		out = append(out, h.Seq)
	}
	return out
}

func TestReporter_Interval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hub := hubtest.New("tok", "box1")
		r, resps := newTestReporter(hub, nil)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(95 * time.Second)
		synctest.Wait()
		if got := seqs(hub.Heartbeats()); len(got) != 3 {
			t.Fatalf("heartbeats %v after 95 s at 30 s", got)
		}
		if len(*resps) != 3 || (*resps)[0].Rental != "box1" {
			t.Fatalf("responses %+v", *resps)
		}
		cancel()
		<-done
		if got := seqs(hub.Heartbeats()); len(got) != 4 {
			t.Fatalf("no final heartbeat on stop: %v", got)
		}
	})
}

func TestReporter_ServerDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hub := hubtest.New("tok", "box1")
		r, _ := newTestReporter(hub, nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go r.Run(ctx)
		// Down for 6 heartbeat intervals: the queue (4) keeps the newest.
		hub.FailNext(1000, http.StatusServiceUnavailable)
		time.Sleep(6*30*time.Second + time.Second)
		synctest.Wait()
		if n := len(hub.Heartbeats()); n != 0 {
			t.Fatalf("%d heartbeats recorded while failing", n)
		}
		hub.FailNext(0, 0)
		time.Sleep(backoffMax + 30*time.Second)
		synctest.Wait()
		got := hub.Heartbeats()
		// The queue held the newest 4 (how many more were cut before the
		// jittered retry fired varies); everything older was dropped and
		// counted, and nothing after the first delivered one was lost.
		if len(got) < 4 || got[0].Dropped != got[0].Seq-1 || got[0].Dropped < 2 {
			t.Fatalf("after recovery: seqs %v, first dropped %d", seqs(got), got[0].Dropped)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Seq != got[i-1].Seq+1 {
				t.Fatalf("not in order: %v", seqs(got))
			}
		}
	})
}

func TestReporter_LyingServer(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
		perm    bool
	}{
		{"Garbage", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>oops")) }, "bad response", false},
		{"Huge", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"orders":[` + strings.Repeat(" ", wire.MaxBodyBytes+10) + `]}`))
		}, "over", false},
		{"5xx", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 502) }, "status 502", false},
		{"Unauthorized", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "unknown token", 401) }, "status 401", true},
		{"TooMany", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "slow down", 429) }, "status 429", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hub := hubtest.New("tok", "box1")
			r, _ := newTestReporter(hub, tt.handler)
			_, err := r.Send(t.Context(), wire.HeartbeatRequest{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
			if isPerm := errorsIsPermanent(err); isPerm != tt.perm {
				t.Fatalf("permanent %v, want %v", isPerm, tt.perm)
			}
		})
	}
	t.Run("PermanentDropsNotRetries", func(t *testing.T) {
		hub := hubtest.New("tok", "box1")
		r, _ := newTestReporter(hub, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad body", 400) }))
		r.enqueue(r.Cut())
		if _, failed := r.flush(t.Context()); failed || len(r.queue) != 0 || r.Dropped() != 1 {
			t.Fatalf("failed %v queue %d dropped %d", failed, len(r.queue), r.Dropped())
		}
	})
	t.Run("TokenNotInLogs", func(t *testing.T) {
		var buf bytes.Buffer
		hub := hubtest.New("s3cret-token-value", "box1")
		r, _ := newTestReporter(hub, nil)
		r.Server = "http://s3cret-token-value.invalid:1" // a token leaking into an error
		r.Client = &http.Client{Timeout: time.Second}
		r.Log = newTextLogger(&buf)
		r.enqueue(r.Cut())
		r.flush(t.Context())
		if strings.Contains(buf.String(), "s3cret-token-value") {
			t.Fatalf("token logged: %s", buf.String())
		}
	})
}

func TestJitter(t *testing.T) {
	for range 1000 {
		d := jitter(10 * time.Second)
		if d < 5*time.Second || d > 10*time.Second {
			t.Fatal(d)
		}
	}
	d := time.Duration(0)
	for range 20 {
		d = nextBackoff(d)
	}
	if d != backoffMax {
		t.Fatal(d)
	}
}
