package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestIdlePeople_ActiveAtAndOrders: a session's active_at is placed on the
// server's clock as the heartbeat's window is (an agent clock an hour slow
// does not make a person look idle an hour longer), and an automatic
// order carries the rental's bound on idle people, signed: the default
// two hours, the policy's idle_people, none for idle_people=none or an
// order the user asked for.
func TestIdlePeople_ActiveAtAndOrders(t *testing.T) {
	e := newEnv(t, hub.Config{})
	ctx := context.Background()
	now := e.clk.Now()
	beat := hb(wire.VerdictIdle, 3600)
	beat.SentAt = now.Add(-time.Hour) // the agent's clock is an hour slow
	active := now.Add(-time.Hour - 3*time.Hour)
	beat.Sessions = []wire.Session{{Kind: wire.SessionJupyter, Client: "local", ActiveAt: &active}}
	e.beat(e.token, beat)
	st, _ := e.hub.AgentState(e.rid)
	if len(st.Sessions) != 1 || !st.Sessions[0].ActiveAt.Equal(now.Add(-3*time.Hour).Truncate(time.Second)) {
		t.Fatalf("sessions %+v, want active 3h before the server's now", st.Sessions)
	}

	for _, tc := range []struct {
		idle   time.Duration
		origin ledger.OrderOrigin
		want   int64
	}{
		{0, ledger.OriginAuto, 7200},
		{3 * time.Hour, ledger.OriginAuto, 10800},
		{ledger.IdlePeopleNever, ledger.OriginAuto, 0},
		{3 * time.Hour, ledger.OriginButton, 0},
	} {
		if _, err := e.db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, IdlePeople: tc.idle}); err != nil {
			t.Fatal(err)
		}
		o, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionStop, tc.origin)
		if err != nil {
			t.Fatal(err)
		}
		e.clk.Add(time.Second)
		_, resp := e.beat(e.token, hb(wire.VerdictIdle, 3600))
		if len(resp.Orders) != 1 || resp.Orders[0].ID != o.ID || resp.Orders[0].IdlePeopleSeconds != tc.want {
			t.Fatalf("idle_people %s, %s: orders %+v, want idle_people_s %d", tc.idle, tc.origin, resp.Orders, tc.want)
		}
		if err := wire.VerifyOrder(e.token, resp.Orders[0], e.clk.Now(), nil); err != nil {
			t.Fatalf("the order's signature: %v", err)
		}
		e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeRefusedBusy})
	}
}
