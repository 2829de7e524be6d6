package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
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
	if n, card := len(e.chat.newMsgs()), msgText(e, 1); n != 1 || !strings.Contains(card, "idle 8 min · ¥0.25 spent idle") {
		t.Fatalf("%d messages, idle card = %q, want idle 8 min · ¥0.25 (¥1.88/h)", n, card)
	}
	lastBeat := e.clk.Now()
	// 42 minutes without a heartbeat.
	for range 84 {
		e.clk.Add(30 * time.Second)
		e.tick()
	}
	card := msgText(e, 1)
	if !strings.Contains(card, "agent silent since 11:08") || !strings.Contains(card, "idle 8 min · ¥0.25") {
		t.Errorf("idle card after 42 min of silence = %q, want it to say the agent is silent since 11:08, idle 8 min · ¥0.25", card)
	}
	r, _ := e.db.RentalByID(ctx, e.rid)
	if len(r.Idle) != 1 || !r.Idle[0].To.Equal(lastBeat) {
		t.Errorf("idle intervals = %+v, want one ending at the last idle heartbeat %s", r.Idle, lastBeat)
	}
	// The agent comes back, still idle: its heartbeats of the silence
	// were lost (seq jumps), and it says it has been idle 50 minutes.
	e.seq += 84
	now := e.clk.Now()
	e.post(wire.VerdictIdle, now.Add(-30*time.Second), now, 50*time.Minute+30*time.Second, nil)
	e.hub.DrainEvents(ctx)
	e.lastV, e.lastAt = wire.VerdictIdle, now
	e.tick()
	st, _ := e.hub.AgentState(e.rid)
	if f := st.IdleFor(e.clk.Now()); f > time.Minute {
		t.Errorf("idle for %s after the return, want the silence not counted", f)
	}
	for _, m := range e.chat.newMsgs()[1:] {
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
	for _, m := range e.chat.newMsgs() {
		if strings.Contains(m.Text, "spent idle") {
			last = m.Text
		}
	}
	if !strings.Contains(last, "idle 5 min · ¥0.16 spent idle") {
		t.Errorf("new idle card = %q, want idle 5 min · ¥0.16", last)
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
	for _, m := range e.chat.all() {
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
