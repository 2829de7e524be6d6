package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

type recorder struct {
	mu  sync.Mutex
	got []wire.OrderResult
}

func (r *recorder) report(_ context.Context, res wire.OrderResult) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, res)
	return nil
}

func (r *recorder) outcomes() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []string
	for _, g := range r.got {
		s = append(s, g.Outcome)
	}
	return strings.Join(s, ",")
}

// newExecutor returns an executor whose sampler reads a simulate file set
// to state ("idle", "busy" or "missing").
func newExecutor(t *testing.T, state string) (*Executor, *recorder, *hubtest.Hub, string) {
	t.Helper()
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	if state != "missing" {
		copyFile(t, "testdata/sim/"+state+".json", sim)
	}
	rec := &recorder{}
	hub := hubtest.New("tok-1", "box1")
	e := &Executor{
		Token:      "tok-1",
		Rental:     func() string { return "box1" },
		Nonces:     newState(t, filepath.Join(dir, "state")),
		Sampler:    &Sampler{GPU: &SimulateSource{Path: sim}, Thresholds: DefaultThresholds},
		ReleaseCmd: "echo released > " + filepath.Join(dir, "marker"),
		Report:     rec.report,
	}
	return e, rec, hub, dir
}

func TestExecutor_HandleOrder(t *testing.T) {
	ctx := context.Background()
	t.Run("OK/ReleaseWritesMarker", func(t *testing.T) {
		e, rec, hub, dir := newExecutor(t, "idle")
		e.PreReleaseCmd = "test \"$GPULEDGER_ORDER_ACTION\" = stop"
		if out := e.HandleOrder(ctx, hub.NewOrder(wire.ActionStop, time.Minute)); out != wire.OutcomeDone {
			t.Fatalf("outcome %s (%s)", out, rec.outcomes())
		}
		if b, err := os.ReadFile(filepath.Join(dir, "marker")); err != nil || string(b) != "released\n" {
			t.Fatalf("marker %q %v", b, err)
		}
		if rec.outcomes() != "release_started,done" {
			t.Fatal(rec.outcomes())
		}
	})
	rejects := []struct {
		name string
		mut  func(h *hubtest.Hub, o *wire.Order)
		want string
	}{
		{"Unsigned", func(_ *hubtest.Hub, o *wire.Order) { o.Signature = "" }, wire.OutcomeRejectedSignature},
		{"Tampered", func(_ *hubtest.Hub, o *wire.Order) { o.Action = wire.ActionRelease }, wire.OutcomeRejectedSignature},
		{"Expired", func(h *hubtest.Hub, o *wire.Order) {
			o.IssuedAt, o.ExpiresAt = o.IssuedAt.Add(-time.Hour), o.ExpiresAt.Add(-time.Hour)
			o.Signature = wire.SignOrder(h.Token, *o)
		}, wire.OutcomeRejectedExpired},
		{"WrongRental", func(h *hubtest.Hub, o *wire.Order) { o.Rental = "box2"; o.Signature = wire.SignOrder(h.Token, *o) }, wire.OutcomeRejectedRental},
		{"OtherToken", func(_ *hubtest.Hub, o *wire.Order) { o.Signature = wire.SignOrder("tok-2", *o) }, wire.OutcomeRejectedSignature},
	}
	for _, tt := range rejects {
		t.Run("Err/"+tt.name, func(t *testing.T) {
			e, rec, hub, dir := newExecutor(t, "idle")
			o := hub.NewOrder(wire.ActionStop, time.Minute)
			tt.mut(hub, &o)
			if out := e.HandleOrder(ctx, o); out != tt.want {
				t.Fatalf("outcome %s, want %s", out, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
				t.Fatal("released on a rejected order")
			}
			if rec.outcomes() != tt.want {
				t.Fatalf("reported %s", rec.outcomes())
			}
		})
	}
	t.Run("Err/Replayed", func(t *testing.T) {
		e, rec, hub, dir := newExecutor(t, "idle")
		e.ReleaseCmd = "echo x >> " + filepath.Join(dir, "marker")
		o := hub.NewOrder(wire.ActionStop, time.Minute)
		e.HandleOrder(ctx, o)
		if out := e.HandleOrder(ctx, o); out != wire.OutcomeRejectedReplay {
			t.Fatal(out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "marker")); string(b) != "x\n" {
			t.Fatalf("release ran %q", b)
		}
		if rec.outcomes() != "release_started,done" {
			t.Fatal(rec.outcomes())
		}
	})
	refusals := []struct {
		name, state string
		setup       func(t *testing.T, e *Executor)
		want        string
	}{
		{"Busy", "busy", nil, wire.OutcomeRefusedBusy},
		{"Unknown", "missing", nil, wire.OutcomeRefusedUnknown},
		{"NoReleaseCmd", "idle", func(_ *testing.T, e *Executor) { e.ReleaseCmd = "" }, wire.OutcomeRefusedNoCommand},
		{"JobAlive", "idle", func(t *testing.T, e *Executor) {
			j, err := StartJob(t.Context(), []string{"sleep", "30"}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			e.Job = j
		}, wire.OutcomeRefusedJob},
		{"PreReleaseFails", "idle", func(_ *testing.T, e *Executor) { e.PreReleaseCmd = "exit 3" }, wire.OutcomePreReleaseFailed},
		{"PreReleaseTimesOut", "idle", func(_ *testing.T, e *Executor) {
			e.PreReleaseCmd, e.PreReleaseTimeout = "sleep 30", 100*time.Millisecond
		}, wire.OutcomePreReleaseFailed},
	}
	for _, tt := range refusals {
		t.Run("Refused/"+tt.name, func(t *testing.T) {
			e, rec, hub, dir := newExecutor(t, tt.state)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			if out := e.HandleOrder(ctx, hub.NewOrder(wire.ActionRelease, time.Minute)); out != tt.want {
				t.Fatalf("outcome %s, want %s", out, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
				t.Fatal("released")
			}
			if rec.outcomes() != tt.want {
				t.Fatalf("reported %s", rec.outcomes())
			}
		})
	}
	t.Run("ReleaseFails", func(t *testing.T) {
		e, rec, hub, _ := newExecutor(t, "idle")
		e.ReleaseCmd = "echo nope >&2; exit 7"
		if out := e.HandleOrder(ctx, hub.NewOrder(wire.ActionStop, time.Minute)); out != wire.OutcomeReleaseFailed {
			t.Fatal(out)
		}
		rec.mu.Lock()
		last := rec.got[len(rec.got)-1]
		rec.mu.Unlock()
		if *last.ExitCode != 7 || !strings.Contains(last.Message, "nope") {
			t.Fatalf("%+v", last)
		}
	})
}

func TestLease(t *testing.T) {
	log := newTextLogger(&strings.Builder{})
	l := newLease(30 * time.Minute)
	now := time.Now()
	if l.check(now, true, log) || l.check(now.Add(25*time.Minute), true, log) || !l.warned10 {
		t.Fatal("early release or no warning")
	}
	if !l.check(now.Add(31*time.Minute), true, log) {
		t.Fatal("no release at the deadline")
	}
	if l.check(now.Add(31*time.Minute+time.Second), true, log) {
		t.Fatal("retried at once")
	}
	l.done(wire.OutcomeRefusedBusy, log)
	if !l.check(now.Add(33*time.Minute), true, log) {
		t.Fatal("no retry after a busy refusal")
	}
	l.done(wire.OutcomeDone, log)
	if l.check(now.Add(40*time.Minute), true, log) {
		t.Fatal("released twice")
	}
	l2 := newLease(time.Minute)
	if l2.check(now.Add(2*time.Minute), false, log) {
		t.Fatal("release without a command")
	}
	ext := time.Now().Add(time.Hour)
	l2.setServer(&ext)
	if l2.check(now.Add(2*time.Minute), true, log) {
		t.Fatal("server extension ignored")
	}
}

// TestExecutor_ReplayState: the nonce record lives in the state file, so
// a restarted agent (a new Executor on the same directory) refuses a
// replay; an order older than the record is refused and said why; a state
// that cannot be written refuses every order before anything runs.
func TestExecutor_ReplayState(t *testing.T) {
	ctx := context.Background()
	t.Run("Err/ReplayAfterRestart", func(t *testing.T) {
		e, rec, hub, dir := newExecutor(t, "idle")
		e.ReleaseCmd = "echo x >> " + filepath.Join(dir, "marker")
		o := hub.NewOrder(wire.ActionStop, time.Minute)
		if out := e.HandleOrder(ctx, o); out != wire.OutcomeDone {
			t.Fatal(out, rec.outcomes())
		}
		st := newState(t, filepath.Join(dir, "state"))
		e2 := &Executor{Token: e.Token, Rental: e.Rental, Nonces: st, RecordSince: st.Since(), Sampler: e.Sampler,
			ReleaseCmd: e.ReleaseCmd, Report: rec.report}
		if out := e2.HandleOrder(ctx, o); out != wire.OutcomeRejectedReplay {
			t.Fatalf("replay after restart: %s", out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "marker")); string(b) != "x\n" {
			t.Fatalf("release ran %q", b)
		}
	})
	t.Run("Err/IssuedBeforeRecord", func(t *testing.T) {
		e, rec, hub, dir := newExecutor(t, "idle")
		hub.Now = func() time.Time { return time.Now().Add(-time.Minute) }
		o := hub.NewOrder(wire.ActionStop, 10*time.Minute)
		e.RecordSince = time.Now().Add(-30 * time.Second) // the state file is newer than the order
		if out := e.HandleOrder(ctx, o); out != wire.OutcomeRejectedReplay {
			t.Fatal(out)
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatal("released")
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.got) != 1 || !strings.Contains(rec.got[0].Message, "send it again") {
			t.Fatalf("not reported with the reason: %+v", rec.got)
		}
	})
	t.Run("OK/RecordBegunUnderAClockAhead", func(t *testing.T) {
		// The agent first started while the host's clock ran a day
		// ahead; the clock was corrected since. A fresh order runs.
		e, rec, hub, _ := newExecutor(t, "idle")
		e.RecordSince = time.Now().Add(24 * time.Hour)
		if out := e.HandleOrder(ctx, hub.NewOrder(wire.ActionStop, time.Minute)); out != wire.OutcomeDone {
			t.Fatal(out, rec.outcomes())
		}
	})
	t.Run("Err/StateUnwritable", func(t *testing.T) {
		e, rec, hub, dir := newExecutor(t, "idle")
		os.WriteFile(filepath.Join(dir, "f"), nil, 0o600)
		st, _ := OpenState(filepath.Join(dir, "f", "state"), time.Now())
		e.Nonces = st
		var logs strings.Builder
		e.Log = newTextLogger(&logs)
		if out := e.HandleOrder(ctx, hub.NewOrder(wire.ActionStop, time.Minute)); out != wire.OutcomeRefusedState {
			t.Fatal(out)
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatal("released without a replay record")
		}
		if rec.outcomes() != wire.OutcomeRefusedState || !strings.Contains(logs.String(), "--state-dir") {
			t.Fatalf("reported %s; log %s", rec.outcomes(), logs.String())
		}
	})
}
