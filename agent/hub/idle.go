package hub

import (
	"context"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// idleStep is what one heartbeat does to the rental's idle intervals:
// written with the state, in one transaction, before the answer.
type idleStep struct {
	write   bool      // an interval opens or closes
	closeAt time.Time // end the open interval here (zero: none)
	openAt  time.Time // open a new interval here (zero: none)
}

// idleStale is how long after the last idle sample heard a stop may
// still end an idle interval at its own time (a heartbeat is due every
// 30 s by default): up to then the host was idle as far as anyone knows.
const idleStale = 2 * time.Minute

// idleGapMin is the least gap between two idle windows that still counts
// as one streak when their heartbeats are not consecutive: the stored
// times are whole seconds, and clocks are read a little apart.
const idleGapMin = 2 * time.Second

// idleStepLocked folds hb's verdict into the idle streak of s (the new
// state, prev the old) and returns what to write. h.mu is held.
//
// A streak is the time covered by heartbeat windows that reported only
// idle samples. Each window is placed on the server's clock (the agent's
// wall times shifted by now − sent_at, so a heartbeat queued through an
// outage lands where it was measured). A window continues the open streak
// when it holds no busy or unknown sample and either follows the previous
// heartbeat of the same agent run (seq + 1: windows are cut back to back)
// or starts within two sample intervals of where the streak's evidence
// ends (back-to-back windows further apart than maxWindow mean the agent
// stopped sampling, and do not). A window with no samples at all
// (heartbeats as often as samples) carries no verdict and changes
// nothing. Anything else — a busy or
// unknown sample, a dropped heartbeat followed by a gap, an agent restart
// after a gap — ends the streak at its last idle sample, and a new one
// starts no earlier than the window that reports it: idle time the server
// did not hear is never counted.
func (h *Hub) idleStepLocked(a *agent, rl *ledger.Rental, prev ledger.AgentState, s *ledger.AgentState, hb *heartbeat, now time.Time) idleStep {
	ws, we := placeWindow(hb, now)
	if hb.Samples >= 2 && we.After(ws) {
		a.period = we.Sub(ws) / time.Duration(hb.Samples-1)
	}
	prevEnd := a.lastEnd
	if prevEnd.IsZero() {
		prevEnd = prev.LastSeen
	}
	if hb.Samples > 0 {
		a.lastEnd = we
	}
	running := rl.State() == ledger.Running
	resumed := a.resumed
	a.resumed = false
	var st idleStep
	closeOpen := func() {
		if a.idleOpen {
			to := prev.IdleUntil
			if to.IsZero() || to.After(now) {
				to = prev.LastSeen
			}
			st.write, st.closeAt = true, to
			a.idleOpen = false
		}
	}
	if hb.Samples == 0 && prev.Verdict.Valid() {
		// No sample, no news: the verdict and the streak stay as they were.
		s.Verdict, s.Reasons = prev.Verdict, prev.Reasons
		s.IdleSince, s.IdleUntil = prev.IdleSince, prev.IdleUntil
		if !running {
			closeOpen()
		}
		return st
	}
	if s.Verdict != ledger.VerdictIdle {
		closeOpen()
		s.IdleSince, s.IdleUntil = time.Time{}, time.Time{}
		return st
	}
	clean := hb.BusySamples == 0 && hb.UnknownSamples == 0
	sameRun := prev.BootID != "" && prev.BootID == hb.BootID
	chained := sameRun && hb.Seq == prev.Seq+1
	if resumed && sameRun && hb.Seq > prev.Seq && hb.Dropped == 0 {
		// The first heartbeat after a restart of the server, whose state
		// may be a flush behind: the heartbeats in between were either
		// acknowledged (idle ones, or the interval would be closed) or are
		// still queued at the agent, which has never dropped one.
		chained = true
	}
	gap := ws.Sub(prev.IdleUntil)
	cont := a.idleOpen && running && clean && !prev.IdleSince.IsZero() &&
		(gap <= max(2*a.period, idleGapMin) || (chained && gap <= maxWindow))
	if cont {
		s.IdleSince, s.IdleUntil = prev.IdleSince, later(we, prev.IdleUntil)
		return st
	}
	closeOpen()
	start := ws
	if !clean {
		// A busy or unknown sample in this window: the streak began at
		// the agent's first idle sample after it.
		as := we.Add(-time.Duration(hb.IdleSeconds) * time.Second)
		if hb.IdleSince != nil && !hb.IdleSince.IsZero() {
			as = hb.IdleSince.Add(now.Sub(sentAt(hb)))
		}
		start = earlier(later(as, ws), we)
	}
	if rs := rl.StartedAt(); start.Before(rs) {
		start = earlier(rs, we)
	}
	if !prev.IdleUntil.IsZero() && start.Before(prev.IdleUntil) {
		start = earlier(prev.IdleUntil, we)
	}
	if prev.Seen() && prev.Verdict != ledger.VerdictIdle && start.Before(prevEnd) {
		// Never before the window of the last report that was not idle
		// (an agent clock that jumped places its window anywhere).
		start = earlier(prevEnd, we)
	}
	s.IdleSince, s.IdleUntil = start, we
	if running {
		st.write, st.openAt = true, start
		a.idleOpen = true
	}
	return st
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sentAt returns when the agent sent hb by its own clock: sent_at, or
// the window's end from an agent that does not say.
func sentAt(hb *heartbeat) time.Time {
	if !hb.SentAt.IsZero() {
		return hb.SentAt
	}
	if !hb.WindowEnd.IsZero() {
		return hb.WindowEnd
	}
	return time.Time{}
}

// placeWindow returns hb's window on the server's clock: the agent's wall
// times moved by the offset between its sent_at and now, never after now
// and never longer than maxWindow.
func placeWindow(hb *heartbeat, now time.Time) (ws, we time.Time) {
	sent := sentAt(hb)
	if sent.IsZero() || hb.WindowEnd.IsZero() {
		return now, now
	}
	off := now.Sub(sent)
	we = hb.WindowEnd.Add(off)
	if we.After(now) {
		we = now
	}
	ws = hb.WindowStart.Add(off)
	if hb.WindowStart.IsZero() || ws.After(we) {
		ws = we
	}
	if we.Sub(ws) > maxWindow {
		ws = we.Add(-maxWindow)
	}
	return ws, we
}

// CloseIdleAt ends a rental's idle streak at t: the rental stopped or was
// released at t, or its agent went silent (t is then the last idle sample
// heard). The state loses its streak (IdleSince zero), so that the agent's
// next idle heartbeat starts a new one rather than counting the time in
// between. A t more than idleStale after the last idle sample heard is
// not believed: the interval ends at that sample, so silence before a
// stop is not idle time either. Interval and state are written together.
func (h *Hub) CloseIdleAt(ctx context.Context, rentalID int64, t time.Time) error {
	h.mu.Lock()
	a := h.agents[rentalID]
	if a == nil {
		h.mu.Unlock()
		return h.store.CloseIdle(ctx, rentalID, t)
	}
	prev, prevOpen := a.state, a.idleOpen
	to := t
	if u := prev.IdleUntil; !u.IsZero() && to.Sub(u) > idleStale {
		to = u
	}
	s := prev
	s.IdleSince, s.IdleUntil = time.Time{}, time.Time{}
	a.state, a.idleOpen = s, false
	h.mu.Unlock()
	if !s.Seen() {
		return h.store.CloseIdle(ctx, rentalID, to)
	}
	if err := h.store.SaveIdle(ctx, s, to, time.Time{}); err != nil {
		h.mu.Lock()
		if a.state.Seq == s.Seq && a.state.BootID == s.BootID {
			a.state, a.idleOpen = prev, prevOpen
		}
		h.mu.Unlock()
		return err
	}
	return nil
}
