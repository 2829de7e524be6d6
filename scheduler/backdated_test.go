package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// logBackdated records, at the clock's now, a rental without an agent
// that the user says started ago before.
func (e *env) logBackdated(name string, ago time.Duration) *ledger.Rental {
	e.t.Helper()
	now := e.clk.Now()
	r, err := e.db.CreateRental(context.Background(), ledger.Action{UserID: 1, At: now}, ledger.Rental{Name: name, Platform: "runpod", GPU: "H100", GPUCount: 1,
		Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("2.00"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: now.Add(-ago)}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// about returns the texts sent (new messages and edits) that name name.
func (e *env) about(name string) []string {
	var out []string
	for _, m := range e.chat.Sent() {
		if strings.Contains(m.Text, "<b>"+name+"</b>") {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestLongRun_BackdatedRentalNotNaggedAtOnce: a rental logged now that
// started four weeks ago is not "still using it?" at the next tick; the
// long-run time counts from when the user logged it.
func TestLongRun_BackdatedRentalNotNaggedAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	e.logBackdated("l1", 28*24*time.Hour+10*time.Hour)
	e.clk.Add(30 * time.Second)
	e.tick()
	e.clk.Add(11 * time.Hour)
	e.tick()
	if got := e.about("l1"); len(got) != 0 {
		t.Fatalf("a rental logged 11h ago was nagged: %q", got)
	}
	e.clk.Add(time.Hour)
	e.tick()
	got := e.about("l1")
	if len(got) != 1 || !strings.Contains(got[0], "<b>l1</b> has been running 28d22h") {
		t.Fatalf("after 12h logged, long-run reminders = %q", got)
	}
}

// TestMarkReleased_OffersTheTime: "I released it" records the release
// now and says how to give the real time if it was earlier; following
// that advice (undo, then release at the time) leaves the release there.
func TestMarkReleased_OffersTheTime(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.clk.Add(time.Hour)
	r := e.logBackdated("l1", 2*time.Hour)
	e.clk.Add(12 * time.Hour)
	e.tick()
	if got := e.about("l1"); len(got) != 1 {
		t.Fatalf("long-run card = %q", got)
	}
	toast, err := e.s.MarkReleased(ctx, 1, r.ID, "tg:update:released")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"l1", "23:00", "/undo", "/release l1 at"} {
		if !strings.Contains(toast, w) {
			t.Errorf("toast %q does not contain %q", toast, w)
		}
	}
	got := e.about("l1")
	if last := got[len(got)-1]; !strings.Contains(last, "released at 23:00") || !strings.Contains(last, "/release l1 at TIME") || !strings.Contains(last, "/undo") {
		t.Errorf("closed card = %q", last)
	}
	// The advice works: undo reverses the button's release ...
	res, err := e.db.Undo(ctx, ledger.Action{UserID: 1, At: e.clk.Now()})
	if err != nil || res.Kind != ledger.ActionRelease || res.Name != "l1" {
		t.Fatalf("undo = %+v, %v", res, err)
	}
	// ... and the release can be given its time.
	at := e.clk.Now().Add(-3 * time.Hour)
	x, err := e.db.AppendEvent(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}, "l1", ledger.Event{Kind: ledger.EventRelease, At: at})
	if err != nil || x.State() != ledger.Released || !x.Events[len(x.Events)-1].At.Equal(at) {
		t.Fatalf("release at %s: %+v, %v", at, x, err)
	}
}

// TestLongRun_BackdatedResumeNotNaggedAtOnce: an old rental, stopped
// weeks ago, resumed now "at" two days ago is not "still using it?" at
// the next tick; the long-run time counts from when the user logged the
// resume, as it does for a backdated start.
func TestLongRun_BackdatedResumeNotNaggedAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.clk.Add(time.Hour)
	e.logBackdated("l1", 0)
	e.clk.Add(time.Hour)
	if _, err := e.db.AppendEvent(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}, "l1", ledger.Event{Kind: ledger.EventStop, At: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(20 * 24 * time.Hour)
	if _, err := e.db.AppendEvent(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}, "l1", ledger.Event{Kind: ledger.EventResume, At: e.clk.Now().Add(-48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	longRun := func() []string {
		var out []string
		for _, m := range e.about("l1") {
			if strings.Contains(m, "has been running") {
				out = append(out, m)
			}
		}
		return out
	}
	e.clk.Add(30 * time.Second)
	e.tick()
	e.clk.Add(11 * time.Hour)
	e.tick()
	if got := longRun(); len(got) != 0 {
		t.Fatalf("a resume logged 11h ago was nagged: %q", got)
	}
	e.clk.Add(time.Hour)
	e.tick()
	got := longRun()
	if len(got) != 1 || !strings.Contains(got[0], "<b>l1</b> has been running 2d12h") {
		t.Fatalf("after 12h logged, long-run reminders = %q", got)
	}
}
