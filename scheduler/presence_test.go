package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// beatPeople posts idle heartbeats covering the idle streak (as beat
// does) that report the given people connected.
func (e *env) beatPeople(idle time.Duration, ss ...wire.Session) wire.HeartbeatResponse {
	e.t.Helper()
	e.people = ss
	defer func() { e.people = nil }()
	return e.beat(wire.VerdictIdle, idle, nil)
}

var sshRoot = wire.Session{Kind: wire.SessionSSH, Client: "1.2.3.4", User: "root"}

// idleStop sets box1 to stop after 30 min and runs it idle, with people
// connected, for hours: every tick sees a fresh heartbeat.
func idleStop(t *testing.T, e *env, p ledger.AutoPolicy, people ...wire.Session) (orders int) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.db.SetAutoPolicy(ctx, 1, "box1", p); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Hour)
	idle := 31 * time.Minute
	for range 20 { // 5 hours, far past warning and grace
		resp := e.beatPeople(idle, people...)
		orders += len(resp.Orders)
		e.tick()
		if o, ok := e.hub.OpenOrder(e.rid); ok && o.Origin == ledger.OriginAuto {
			return orders + 1
		}
		e.clk.Add(15 * time.Minute)
		idle += 15 * time.Minute
	}
	return orders
}

func TestAutoStop_HeldWhileSomeoneConnected(t *testing.T) {
	e := newEnv(t, nil)
	if n := idleStop(t, e, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}, sshRoot,
		wire.Session{Kind: wire.SessionJupyter, Client: "local"}); n != 0 {
		t.Fatalf("an automatic stop was ordered while someone was connected (%d)", n)
	}
	msgs := e.chat.NewMessages()
	if len(msgs) == 0 {
		t.Fatal("no idle card: the warning must still come")
	}
	all := e.chat.Sent()
	last := all[len(all)-1].Text
	for _, want := range []string{"1 SSH session (root from 1.2.3.4)", "1 Jupyter client", "held while someone is connected"} {
		if !strings.Contains(last, want) {
			t.Fatalf("card %q lacks %q", last, want)
		}
	}
	ds, _ := e.db.Decisions(context.Background(), e.rid, 20)
	found := false
	for _, d := range ds {
		if d.Kind == ledger.DecisionHold && strings.Contains(d.Evidence, "root from 1.2.3.4") {
			found = true
		}
		if d.Kind == ledger.DecisionOrder {
			t.Fatalf("decision %+v", d)
		}
	}
	if !found {
		t.Fatalf("no hold decision naming who is connected: %+v", ds)
	}
}

func TestAutoStop_OrderedWhenNobodyConnected(t *testing.T) {
	e := newEnv(t, nil)
	if n := idleStop(t, e, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}); n == 0 {
		t.Fatal("no automatic stop with nobody connected")
	}
}

func TestAutoStop_WaitForNoneActsDespitePeople(t *testing.T) {
	e := newEnv(t, nil)
	p := ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute, WaitFor: ledger.WaitNone}
	if n := idleStop(t, e, p, sshRoot); n == 0 {
		t.Fatal("wait_for=none: no automatic stop while someone is connected")
	}
	o, _ := e.hub.OpenOrder(e.rid)
	if len(o.WaitFor) != 0 {
		t.Fatalf("order wait_for %v, want none", o.WaitFor)
	}
	ds, _ := e.db.Decisions(context.Background(), e.rid, 5)
	if ds[0].Kind != ledger.DecisionOrder || !strings.Contains(ds[0].Evidence, "1 SSH session (root from 1.2.3.4) connected, not waited for") {
		t.Fatalf("order decision %+v", ds[0])
	}
}

func TestAutoStop_WaitForOtherKinds(t *testing.T) {
	// wait_for=jupyter: an SSH session does not hold it.
	e := newEnv(t, nil)
	p := ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute, WaitFor: ledger.WaitFor(ledger.SessionJupyter)}
	if n := idleStop(t, e, p, sshRoot); n == 0 {
		t.Fatal("wait_for=jupyter: an SSH session held the stop")
	}
	// The order tells the agent to re-check for Jupyter clients only.
	resp := e.beatPeople(3*time.Hour, sshRoot)
	if len(resp.Orders) != 1 || strings.Join(resp.Orders[0].WaitFor, ",") != ledger.SessionJupyter {
		t.Fatalf("orders %+v", resp.Orders)
	}
}

// TestAutoStop_OrderCarriesWaitFor: the automatic order handed to the
// agent names the kinds to re-check, inside the signature; the agent's
// refusal (someone connected meanwhile) is shown as such.
func TestAutoStop_OrderCarriesWaitFor(t *testing.T) {
	e := newEnv(t, nil)
	if n := idleStop(t, e, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}); n == 0 {
		t.Fatal("no order")
	}
	resp := e.beatPeople(3 * time.Hour)
	if len(resp.Orders) != 1 {
		t.Fatalf("orders %+v", resp.Orders)
	}
	o := resp.Orders[0]
	if strings.Join(o.WaitFor, ",") != "ssh,jupyter,vscode" {
		t.Fatalf("order wait_for %v", o.WaitFor)
	}
	if err := wire.VerifyOrder(e.token, o, e.clk.Now(), nil); err != nil {
		t.Fatalf("order does not verify: %v", err)
	}
	e.result(o.ID, wire.OutcomeRefusedPeople)
	all := e.chat.Sent()
	if last := all[len(all)-1].Text; !strings.Contains(last, "someone is connected") {
		t.Fatalf("after the refusal the card says %q", last)
	}
	// No new order on the heartbeat the refusal overtook...
	e.tick()
	if o, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatalf("re-ordered on the stale heartbeat: %+v", o)
	}
	// ...nor while the next one shows the person; once they are gone, yes.
	e.clk.Add(30 * time.Second)
	e.beatPeople(3*time.Hour, sshRoot)
	e.tick()
	if o, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatalf("ordered while connected: %+v", o)
	}
	e.clk.Add(30 * time.Second)
	e.beatPeople(3 * time.Hour)
	e.tick()
	if _, ok := e.hub.OpenOrder(e.rid); !ok {
		t.Fatal("no order once nobody is connected")
	}
}

// TestRelease_TapGoesThroughWithPeople: the user's own Release now is not
// held by people connected, and the card says who is there.
func TestRelease_TapGoesThroughWithPeople(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	e.beatPeople(40*time.Minute, sshRoot)
	e.tick()
	if len(e.chat.NewMessages()) != 1 {
		t.Fatalf("no idle card: %+v", e.chat.Sent())
	}
	e.press(scheduler.ActRelease, 1)
	o, ok := e.hub.OpenOrder(e.rid)
	if !ok || o.Origin != ledger.OriginButton || len(o.WaitFor) != 0 {
		t.Fatalf("order %+v %v: want a button order with no wait_for", o, ok)
	}
	all := e.chat.Sent()
	if last := all[len(all)-1].Text; !strings.Contains(last, "Someone is connected (1 SSH session (root from 1.2.3.4)); you asked, so it is released anyway") {
		t.Fatalf("card %q", last)
	}
}

// TestAutoStop_ForgottenNotebookIsStillForgotten: a Jupyter tab left open
// with nothing run holds the automatic stop only for the rental's bound
// on idle people (two hours by default): the card says it is held, then
// "Jupyter connected but nothing run for 2h", and the stop is ordered,
// its order bounded the same way for the agent's last look.
func TestAutoStop_ForgottenNotebookIsStillForgotten(t *testing.T) {
	e := newEnv(t, nil)
	ranAt := e.clk.Now().Add(time.Hour) // idleStop moves the clock an hour, then beats
	tab := wire.Session{Kind: wire.SessionJupyter, Client: "local", ActiveAt: &ranAt}
	if n := idleStop(t, e, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}, tab); n == 0 {
		t.Fatal("a Jupyter tab with nothing run for hours held the automatic stop for ever")
	}
	if d := e.clk.Now().Sub(ranAt); d < ledger.DefaultIdlePeople {
		t.Fatalf("ordered %s after the last cell ran, before the bound %s", d, ledger.DefaultIdlePeople)
	}
	var held, idle bool
	for _, m := range e.chat.Sent() {
		held = held || strings.Contains(m.Text, "held while someone is connected")
		idle = idle || strings.Contains(m.Text, "Jupyter connected but nothing run for 2h")
	}
	if !held || !idle {
		t.Fatalf("the card said held %v, then nothing run for 2h %v: %+v", held, idle, e.chat.Sent())
	}
	o, _ := e.hub.OpenOrder(e.rid)
	if o.IdlePeople != ledger.DefaultIdlePeople {
		t.Fatalf("order idle_people %s, want %s", o.IdlePeople, ledger.DefaultIdlePeople)
	}
	ds, _ := e.db.Decisions(context.Background(), e.rid, 5)
	if ds[0].Kind != ledger.DecisionOrder || !strings.Contains(ds[0].Evidence, "connected but nothing done for 2h") {
		t.Fatalf("order decision %+v", ds[0])
	}
}

// TestAutoStop_NotebookInUseHolds: the same tab with a cell run every
// hour holds the stop all along.
func TestAutoStop_NotebookInUseHolds(t *testing.T) {
	e := newEnv(t, nil)
	p := ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}
	if _, err := e.db.SetAutoPolicy(context.Background(), 1, "box1", p); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Hour)
	idle := 31 * time.Minute
	for i := range 20 {
		ranAt := e.clk.Now().Add(-time.Duration(i%4) * 15 * time.Minute) // a cell at least every hour
		e.beatPeople(idle, wire.Session{Kind: wire.SessionJupyter, Client: "local", ActiveAt: &ranAt})
		e.tick()
		if _, ok := e.hub.OpenOrder(e.rid); ok {
			t.Fatalf("ordered after %s while a cell ran within the hour", idle)
		}
		e.clk.Add(15 * time.Minute)
		idle += 15 * time.Minute
	}
}
