package scheduler_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestIdleCard_AgentSilence: idle time and idle cost count only the time
// covered by idle heartbeats. An agent silent past the silent threshold
// ends the streak at its last idle sample, the idle card says so, and the
// agent's return starts a new streak instead of counting the silence.
func TestIdleCard_AgentSilence(t *testing.T) {
	e := newEnv(t, func(s *ledger.Settings) { s.IdleWarn = 5 * time.Minute; s.Silent = 10 * time.Minute })
	ctx := context.Background()
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictBusy, 0, nil)
	// Eight minutes idle, a heartbeat every 30 s.
	for range 16 {
		e.clk.Add(30 * time.Second)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	if n, card := len(e.chat.NewMessages()), msgText(e, 1); n != 1 || !strings.Contains(card, "idle 8m · ¥0.25 spent idle") {
		t.Fatalf("%d messages, idle card = %q, want idle 8m · ¥0.25 (¥1.88/h)", n, card)
	}
	lastBeat := e.clk.Now()
	// 42 minutes without a heartbeat.
	for range 84 {
		e.clk.Add(30 * time.Second)
		e.tick()
	}
	card := msgText(e, 1)
	if !strings.Contains(card, "agent silent since 11:08") || !strings.Contains(card, "idle 8m · ¥0.25") {
		t.Errorf("idle card after 42 min of silence = %q, want it to say the agent is silent since 11:08, idle 8m · ¥0.25", card)
	}
	r, _ := e.db.RentalByID(ctx, e.rid)
	if len(r.Idle) != 1 || !r.Idle[0].To.Equal(lastBeat) {
		t.Errorf("idle intervals = %+v, want one ending at the last idle heartbeat %s", r.Idle, lastBeat)
	}
	// The agent comes back, still idle: its heartbeats of the silence
	// were lost (seq jumps), and it says it has been idle 50mutes.
	e.seq += 84
	now := e.clk.Now()
	e.post(wire.VerdictIdle, now.Add(-30*time.Second), now, 50*time.Minute+30*time.Second, nil)
	e.s.DrainEvents(ctx)
	e.lastV, e.lastAt = wire.VerdictIdle, now
	e.tick()
	st, _ := e.hub.AgentState(e.rid)
	if f := st.IdleFor(e.clk.Now()); f > time.Minute {
		t.Errorf("idle for %s after the return, want the silence not counted", f)
	}
	for _, m := range e.chat.NewMessages()[1:] {
		if strings.Contains(m.Text, "spent idle") {
			t.Errorf("a new idle card right after the return: %q", m.Text)
		}
	}
	// Idle long enough again: a new card that counts only the new streak.
	for range 10 {
		e.clk.Add(30 * time.Second)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	var last string
	for _, m := range e.chat.NewMessages() {
		if strings.Contains(m.Text, "spent idle") {
			last = m.Text
		}
	}
	if !strings.Contains(last, "idle 5m · ¥0.16 spent idle") {
		t.Errorf("new idle card = %q, want idle 5m · ¥0.16", last)
	}
	b, _ := e.db.Book(ctx, 1)
	s := ledger.StatementAsOf(b, e.clk.Now())
	if got := s.Rentals[0].IdleSeconds; got > 14*60 {
		t.Errorf("idle seconds in the ledger = %d, want about 13.5 min (8 + 5.5), not the silence", got)
	}
}

// msgText returns the latest text of the message with id, as sent or
// last edited.
func msgText(e *env, id int) string {
	var text string
	n := 0
	for _, m := range e.chat.Sent() {
		if m.EditMessageID == 0 {
			n++
			if n == id {
				text = m.Text
			}
		} else if m.EditMessageID == id {
			text = m.Text
		}
	}
	return text
}

// restart replaces the hub and the scheduler with new ones on the same
// database, as a restarted server has them.
func (e *env) restart() {
	e.t.Helper()
	if err := e.hub.Flush(context.Background()); err != nil { // as Run does every 500 ms
		e.t.Fatal(err)
	}
	e.srv.Close()
	bus := events.New(events.Config{})
	h, err := hub.New(hub.Config{Store: e.db, Now: e.clk.Now, Events: bus})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := h.Load(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	btn := testButtons()
	s, err := scheduler.New(scheduler.Config{Events: bus, Store: e.db, Hub: h, Sender: e.chat, Buttons: btn, Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.hub, e.s, e.btn = h, s, btn
	e.srv = httptest.NewServer(h.Handler())
	e.t.Cleanup(e.srv.Close)
}

// TestIdleCard_SilenceThenRestart: the silent alert ends a streak that
// had just begun; the server restarts; the agent comes back idle. The card
// that follows counts the new streak, its time and its money alike. (It
// once said "idle 30m · ¥0.03" 17 minutes after the return: the time
// from the old streak's start, through the silence; the money from the
// old streak's one closed minute only, since the restarted hub took the
// stored idle verdict for an open interval and never opened a new one.)
func TestIdleCard_SilenceThenRestart(t *testing.T) {
	e := newEnv(t, func(s *ledger.Settings) { s.IdleWarn = 30 * time.Minute; s.Silent = 10 * time.Minute })
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictBusy, 0, nil)
	for range 2 {
		e.clk.Add(30 * time.Second)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	for range 24 { // 12 minutes of silence: the silent alert
		e.clk.Add(30 * time.Second)
		e.tick()
	}
	e.restart()
	e.seq += 24
	now := e.clk.Now()
	e.post(wire.VerdictIdle, now.Add(-30*time.Second), now, 13*time.Minute, nil)
	e.lastV, e.lastAt = wire.VerdictIdle, now
	for range 62 { // 31 minutes idle
		e.clk.Add(30 * time.Second)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	var card string
	for _, m := range e.chat.NewMessages() {
		if strings.Contains(m.Text, "spent idle") {
			card = m.Text
		}
	}
	if !strings.Contains(card, "idle 30m · ¥0.94 spent idle") {
		t.Fatalf("idle card = %q, want idle 30m · ¥0.94 (¥1.88/h over the new streak)", card)
	}
}
