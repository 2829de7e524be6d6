package connsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestSync_NewInstance(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t)
		started := t0.Add(-2 * time.Hour)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", started))
		e.connect("runpod")
		e.round()
		r := e.rental("box1")
		if r.PlatformID != "abc123" || r.GPU != "A40" || r.GPUCount != 2 || !r.Priced || r.Price.Amount.String() != "0.79" ||
			r.Price.Unit != ledger.UnitHour || r.Currency != ledger.USD || !r.StartedAt().Equal(started) {
			t.Fatalf("rental = %+v", r)
		}
		if r.Mode == "" {
			t.Fatalf("no billing mode from the profile: %+v", r)
		}
		ms := e.snd.take()
		if len(ms) != 1 || !ms[0].Silent || !strings.Contains(ms[0].Text, "/undo") || !strings.Contains(ms[0].Text, "box1") {
			t.Fatalf("messages = %q", texts(ms))
		}
		before := e.snapshot()
		e.round()
		e.round()
		if got := e.snapshot(); got != before {
			t.Fatalf("steady rounds changed the ledger:\n%s\n%s", before, got)
		}
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("steady rounds said %q", texts(ms))
		}
	})
	t.Run("StartedLongAgo", func(t *testing.T) {
		// A pod the platform says started 40 days ago is counted from
		// ledger.MaxBootAge back, and the line says so rather than
		// calling the start approximate.
		e := newEnv(t)
		e.rp.SetPods(pod("old1", "old", "RUNNING", "0.79", t0.Add(-40*24*time.Hour)))
		e.connect("runpod")
		e.round()
		r := e.rental("old")
		if want := t0.Add(-ledger.MaxBootAge); !r.StartedAt().Equal(want) {
			t.Fatalf("started at %s, want %s", r.StartedAt(), want)
		}
		ms := e.snd.take()
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "started earlier") || strings.Contains(ms[0].Text, "first listed") {
			t.Fatalf("messages = %q", texts(ms))
		}
	})
	t.Run("NameFallback", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("XYZ98765", "my pod!", "RUNNING", "0.5", t0))
		e.connect("runpod")
		e.round()
		r := e.rental("runpod-xyz987")
		if r.PlatformID != "XYZ98765" {
			t.Fatalf("rental = %+v", r)
		}
	})
	t.Run("Unpriced", func(t *testing.T) {
		e := newEnv(t)
		p := runpodfake.NewPod("np1", "nop", "RUNNING", nil, "A40", 1, t0)
		e.rp.SetPods(p)
		e.connect("runpod")
		e.round()
		if r := e.rental("nop"); r.Priced {
			t.Fatalf("rental priced without a listed price: %+v", r)
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "/price") {
			t.Fatalf("messages = %q", texts(ms))
		}
	})
	t.Run("StoppedAndTerminated", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("s1", "halted", "EXITED", "0.79", t0.Add(-time.Hour)), pod("d1", "dead", "TERMINATED", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		r := e.rental("halted")
		if r.State() != ledger.Stopped || !r.StartedAt().Equal(t0) {
			t.Fatalf("stopped pod logged as %+v", r)
		}
		if _, err := e.db.Rental(e.ctx, uid, "dead"); err == nil {
			t.Fatal("a terminated pod was logged")
		}
	})
	t.Run("StoppedOneUndo", func(t *testing.T) {
		// A pod first listed stopped is one journaled action: one /undo
		// removes it, and the next rounds do not create it again.
		e := newEnv(t)
		e.rp.SetPods(pod("s1", "halted", "EXITED", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		if r := e.rental("halted"); r.State() != ledger.Stopped {
			t.Fatalf("stopped pod logged as %s", r.State())
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "/undo removes it") || strings.Contains(ms[0].Text, "twice") {
			t.Fatalf("announcement %q; want one line saying /undo removes it", texts(ms))
		}
		res, err := e.db.Undo(e.ctx, ledger.Action{UserID: uid, At: e.clk.Now()})
		if err != nil || res.Kind != ledger.ActionSync {
			t.Fatalf("first /undo = %+v, %v; want the sync itself", res, err)
		}
		if n := len(e.book().Rentals); n != 0 {
			t.Fatalf("%d rentals after one /undo, want 0: %s", n, e.snapshot())
		}
		e.snd.take()
		e.round()
		if len(e.book().Rentals) != 0 {
			t.Fatalf("an undone stopped rental came back: %s", e.snapshot())
		}
	})
	t.Run("UndoneNeverAgain", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0))
		e.connect("runpod")
		e.round()
		if _, err := e.db.Undo(e.ctx, ledger.Action{UserID: uid, At: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		e.snd.take()
		e.round()
		e.round()
		if len(e.book().Rentals) != 0 {
			t.Fatalf("an undone synced rental came back: %s", e.snapshot())
		}
	})
}

func TestSync_StateChange(t *testing.T) {
	t.Run("StopAtPlatformTime", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		e.snd.take()
		stopAt := e.clk.Now().Add(-10 * time.Second).Truncate(time.Second)
		p := pod("abc123", "box1", "EXITED", "0.79", t0.Add(-time.Hour))
		p["lastStatusChange"] = "Exited by User: " + runpodfake.JSDate(stopAt)
		e.rp.SetPods(p)
		e.agent.m[e.rental("box1").ID] = ledger.AgentState{Verdict: ledger.VerdictBusy}
		e.round()
		r := e.rental("box1")
		if r.State() != ledger.Stopped || !r.LastEventAt().Equal(stopAt) {
			t.Fatalf("after the platform's stop: %s at %s, want stopped at %s", r.State(), r.LastEventAt(), stopAt)
		}
		ms := e.snd.take()
		if len(ms) != 1 || !ms[0].Silent || !strings.Contains(ms[0].Text, "platform's time") || !strings.Contains(ms[0].Text, "busy") {
			t.Fatalf("messages = %q", texts(ms))
		}
		// /undo of the synced stop is not redone by the next poll.
		if _, err := e.db.Undo(e.ctx, ledger.Action{UserID: uid, At: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		e.round()
		e.round()
		if r := e.rental("box1"); r.State() != ledger.Running {
			t.Fatalf("the undone stop was redone: %s", r.State())
		}
		// Resume, then terminate.
		p2 := pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour))
		p2["lastStatusChange"] = "x"
		e.rp.SetPods(p2)
		e.round() // running again on the platform; the ledger is running already
		if r := e.rental("box1"); r.State() != ledger.Running || len(r.Events) != 1 {
			t.Fatalf("after the platform's resume: %s, %d events", r.State(), len(r.Events))
		}
		p3 := pod("abc123", "box1", "TERMINATED", "0.79", t0.Add(-time.Hour))
		p3["lastStatusChange"] = "x"
		e.rp.SetPods(p3)
		e.round()
		if r := e.rental("box1"); r.State() != ledger.Released {
			t.Fatalf("after the platform's termination: %s", r.State())
		}
	})
	t.Run("FutureStateSince", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		e.snd.take()
		p := pod("abc123", "box1", "EXITED", "0.79", t0.Add(-time.Hour))
		p["lastStatusChange"] = "Exited by User: " + runpodfake.JSDate(e.clk.Now().Add(3*time.Hour))
		e.rp.SetPods(p)
		poll := e.clk.Now()
		e.round()
		r := e.rental("box1")
		if r.State() != ledger.Stopped || !r.LastEventAt().Equal(poll) {
			t.Fatalf("a stop placed in the future: %s at %s, want at the poll %s", r.State(), r.LastEventAt(), poll)
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "approximate") {
			t.Fatalf("messages = %q", texts(ms))
		}
	})
}

func TestSync_Missing(t *testing.T) {
	t.Run("ReleasedAfterThreeLists", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		lastSeen := e.clk.Now().Truncate(time.Second)
		e.round()
		e.snd.take()
		e.rp.SetPods() // an empty list after a full one
		e.round()
		e.round()
		if r := e.rental("box1"); r.State() != ledger.Running {
			t.Fatalf("released after two empty lists: %s", r.State())
		}
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("empty lists said %q", texts(ms))
		}
		e.round()
		r := e.rental("box1")
		if at, ok := r.ReleasedAt(); !ok || !at.Equal(lastSeen) {
			t.Fatalf("after three empty lists: %s, released at %s, want %s", r.State(), at, lastSeen)
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "approximate") {
			t.Fatalf("messages = %q", texts(ms))
		}
		// It reappears: told once, not logged again.
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.round()
		e.round()
		if n := len(e.book().Rentals); n != 1 {
			t.Fatalf("%d rentals after the reappearance, want 1", n)
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "again") {
			t.Fatalf("messages = %q", texts(ms))
		}
	})
	t.Run("OneListAfterLongGap", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		e.rp.SetPods()
		for i := 0; i < 2; i++ {
			e.clk.Add(time.Hour) // a server asleep: the span is long, the lists few
			e.round()
		}
		if r := e.rental("box1"); r.State() != ledger.Running {
			t.Fatalf("released after two empty lists over two hours: %s", r.State())
		}
	})
	t.Run("Flapping", func(t *testing.T) {
		e := newEnv(t)
		p := pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour))
		e.rp.SetPods(p)
		e.connect("runpod")
		e.round()
		e.snd.take()
		before := e.snapshot()
		for i := 0; i < 8; i++ {
			if i%3 == 2 {
				e.rp.SetPods(p)
			} else {
				e.rp.SetPods()
			}
			e.round()
		}
		if got := e.snapshot(); got != before {
			t.Fatalf("a flapping instance changed the ledger:\n%s\n%s", before, got)
		}
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("flapping said %q", texts(ms))
		}
	})
}

func TestSync_Price(t *testing.T) {
	e := newEnv(t)
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	e.snd.take()
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.89", t0.Add(-time.Hour)))
	e.round()
	e.round()
	ms := e.snd.take()
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "/price box1 0.89/h") {
		t.Fatalf("messages = %q", texts(ms))
	}
	if r := e.rental("box1"); r.Price.Amount.String() != "0.79" || len(r.Events) != 1 {
		t.Fatalf("the ledger was rewritten: %+v", r)
	}
	// Back to the ledger's price: nothing to say; a new price: told.
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.round()
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.99", t0.Add(-time.Hour)))
	e.round()
	if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "0.99") {
		t.Fatalf("messages = %q", texts(ms))
	}
}
