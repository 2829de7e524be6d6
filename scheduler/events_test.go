package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// mismatchNotes returns the GPU-mismatch notes sent so far, in order.
func mismatchNotes(s *testkit.Sender) []string {
	var out []string
	for _, m := range s.Sent() {
		if strings.Contains(m.Text, "Check what you are paying for") {
			out = append(out, m.Text)
		}
	}
	return out
}

// waitUntil polls cond until it holds, failing the test after a minute
// (a bound for a stuck consumer, not a timing the test relies on).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestScheduler_RunHandlesEvents: the events the hub publishes before the
// scheduler's Run starts are kept and handled by Run, in the order they
// were published, through the sender Run is given; once Run has returned,
// the bus no longer waits on the scheduler.
func TestScheduler_RunHandlesEvents(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	bus := events.New(events.Config{})
	s, err := scheduler.New(scheduler.Config{Store: e.db, Hub: e.hub, Buttons: testButtons(), Events: bus,
		Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.db.RentalByID(ctx, e.rid)
	if err != nil {
		t.Fatal(err)
	}
	first := ledger.GPUMismatched{Rental: r, Diff: ledger.GPUDiff{SeenModel: "NVIDIA A100", LoggedModel: "RTX 4090"}}
	second := ledger.GPUMismatched{Rental: r, Diff: ledger.GPUDiff{SeenCount: 1, PaidCount: 2}}
	for _, ev := range []ledger.AgentEvent{first, second} {
		if err := bus.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}

	sent := &testkit.Sender{}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx, sent) }()
	waitUntil(t, "two GPU notes", func() bool { return len(mismatchNotes(sent)) >= 2 })
	notes := mismatchNotes(sent)
	if len(notes) != 2 || !strings.Contains(notes[0], "A100") || !strings.Contains(notes[1], "only 1 of the 2") {
		t.Fatalf("notes out of order or wrong: %q", notes)
	}
	if got := e.chat.Sent(); len(got) != 0 {
		t.Fatalf("sent through another sender than Run's: %v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, first); !errors.Is(err, events.ErrClosed) && err != nil {
		t.Fatalf("publish after Run: %v", err)
	}
}

// TestScheduler_RunNeedsSender: Run refuses to start with no way to the
// chat, and with two.
func TestScheduler_RunNeedsSender(t *testing.T) {
	e := newEnv(t, nil)
	s, err := scheduler.New(scheduler.Config{Store: e.db, Buttons: testButtons(), NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), nil); err == nil {
		t.Fatal("Run started without a sender")
	}
	if err := e.s.Run(context.Background(), &testkit.Sender{}); err == nil {
		t.Fatal("Run took a second sender beside the Config's")
	}
}
