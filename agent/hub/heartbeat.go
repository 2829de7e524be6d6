package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// maxWindow bounds the length of a heartbeat window the hub believes: a
// longer one comes from a clock that jumped (or a liar).
const maxWindow = 15 * time.Minute

// rentalTTL is how long a cached rental is trusted (its state decides
// whether idle time is recorded).
const rentalTTL = 30 * time.Second

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// writeAuthRefusal answers the refusals every agent endpoint gives alike
// for an authResult of authLimited (429, try again in 5 s) or authError
// (the lookup failed), and returns the result counted for it.
func writeAuthRefusal(w http.ResponseWriter, ar authResult, err error) string {
	if ar == authLimited {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, "too many requests for this token")
		return resultRateLimited
	}
	writeLedgerError(w, err)
	return resultError
}

func (h *Hub) serveHeartbeat(w http.ResponseWriter, r *http.Request) {
	if raw := bearer(r); wire.IsEnrolToken(raw) {
		h.serveEnrol(w, r, raw)
		return
	}
	start := time.Now()
	result := resultError
	defer func() { h.m.observe(result, start) }()
	ctx := r.Context()

	tok, ar, err := h.authenticate(ctx, r)
	switch ar {
	case authUnknown:
		result = resultUnauthorized
		writeError(w, http.StatusUnauthorized, "unknown agent token: get one with /agent NAME")
		return
	case authRevoked:
		result = resultUnauthorized
		h.noteAfterRelease(ctx, tok)
		h.publish(ctx)
		writeError(w, http.StatusUnauthorized, "agent token revoked (the rental was released, a new token was issued, or its owner left the team)")
		return
	case authLimited, authError:
		result = writeAuthRefusal(w, ar, err)
		return
	}
	hb, res := readHeartbeat(w, r, checkHeartbeat)
	if hb == nil {
		result = res
		return
	}
	resp, dup, err := h.record(ctx, tok, hb, h.peerAddr(r))
	h.publish(ctx)
	var ce *cloneError
	if errors.As(err, &ce) {
		result = resultConflict
		h.log.Warn("hub: a rental's token reports from another instance than the one the rental is bound to (a copy of it?); refused",
			"rental", tok.RentalID, "bound_to", ce.bound, "reports_from", ce.got)
		writeError(w, http.StatusConflict, fmt.Sprintf(msgInstanceClone, ce.bound))
		return
	}
	var te *twinError
	if errors.As(err, &te) {
		result = resultConflict
		h.log.Warn("hub: two agents report for one rental with the same token (a copy of its instance?); the one replaced is refused",
			"rental", tok.RentalID, "refused_run", te.boot, "current_run", te.current)
		writeError(w, http.StatusConflict, msgTwin)
		return
	}
	if err != nil {
		h.log.Error("hub: heartbeat", "rental", tok.RentalID, "err", err)
		writeLedgerError(w, err)
		return
	}
	result = resultOK
	if dup {
		result = resultDuplicate
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// record applies a heartbeat: the agent's state in memory, a beat for the
// next flush, the idle interval (written now when it opens or closes), and
// the response with the rental's pending orders. peer is the address the
// heartbeat came from ("" unknown).
func (h *Hub) record(ctx context.Context, tok ledger.AgentToken, hb *heartbeat, peer string) (wire.HeartbeatResponse, bool, error) {
	now := h.now().UTC()
	resp := wire.HeartbeatResponse{Rental: tok.Rental, Policy: wire.Policy{UtilThreshold: h.cfg.UtilThreshold}}
	re, err := h.rental(ctx, tok.RentalID, now)
	if err != nil {
		return resp, false, err
	}
	rl := re.r
	if key := hb.key; key != "" && re.instOK && re.inst.Key != "" && key != re.inst.Key {
		// Logged from an announcement of another instance: this host is a
		// copy of it (an image that carried its token). Nothing is recorded.
		return resp, false, &cloneError{bound: re.inst.Key, got: key}
	}
	if re.leaseOK && re.lease.ReleaseAtEnd {
		// Only where the user chose Release at end: the agent then
		// enforces the deadline itself, even without the server.
		until := re.lease.EndsAt.UTC()
		resp.Policy.LeaseUntil = &until
	}

	h.mu.Lock()
	a := h.agentLocked(tok.RentalID)
	if hb.BootID != "" && hb.BootID != a.state.BootID && slices.Contains(a.replaced, hb.BootID) {
		// An agent run that another replaced reports again: two agents
		// share the token (a copy of the instance started at the same
		// time, both handed the token before either used it). The one
		// replaced is refused, falls back to its enrolment token and is
		// told to the user as an instance back without its own token.
		h.mu.Unlock()
		return resp, false, &twinError{boot: hb.BootID, current: a.state.BootID}
	}
	// The agent reports with the token it was handed: forget it.
	h.handedOverLocked(tok.Hash)
	prev, prevOpen := a.state, a.idleOpen
	// A heartbeat already applied (the agent retried after a lost answer,
	// or someone replays one) changes nothing.
	dup := prev.BootID != "" && prev.BootID == hb.BootID && hb.Seq != 0 && hb.Seq <= prev.Seq
	var interrupted []ledger.Order
	if !dup {
		if prev.BootID != "" && hb.BootID != prev.BootID {
			a.replaced = append(a.replaced, prev.BootID)
			if len(a.replaced) > maxReplaced {
				a.replaced = a.replaced[1:]
			}
			// The agent restarted: an order it had started cannot be
			// confirmed by the new process.
			keep := a.orders[:0]
			for _, o := range a.orders {
				if o.State == ledger.OrderStarted && o.BootID != hb.BootID {
					interrupted = append(interrupted, o)
					continue
				}
				keep = append(keep, o)
			}
			a.orders = keep
		}
		h.applyLocked(a, tok, rl, hb, now)
		a.state.Peer, a.state.InstanceSaid = peer, hb.key
	}
	st, step := a.state, a.step
	a.step = idleStep{}
	run, work := a.runPending, a.workPending
	a.runPending, a.workPending = nil, time.Time{}
	for _, o := range a.orders {
		if o.State == ledger.OrderPending && now.Before(o.ExpiresAt) {
			resp.Orders = append(resp.Orders, signed(o, tok.Hash))
		}
	}
	resp.Policy = signedPolicy(resp.Policy, tok.Rental, now, tok.Hash)
	h.mu.Unlock()

	for _, o := range interrupted {
		o.State, o.Outcome = ledger.OrderFailed, ledger.OutcomeRestarted
		o.Message, o.UpdatedAt = "the agent restarted while the release command ran; the release was not confirmed", now
		h.finishOrder(ctx, o, nil)
	}
	resp.BenchWanted = h.benchWanted(ctx, tok, rl, now)
	if dup {
		return resp, true, nil
	}
	if step.write {
		// The answer waits for this: an idle interval opened or closed,
		// and the state it goes with, are durable before the agent hears
		// that its heartbeat was taken.
		if err := h.store.SaveIdle(ctx, st, step.closeAt, step.openAt); err != nil {
			h.mu.Lock()
			if a.state.BootID == st.BootID && a.state.Seq == st.Seq {
				// Not applied after all: the agent's retry is not a duplicate.
				a.state, a.idleOpen = prev, prevOpen
			}
			h.mu.Unlock()
			return resp, false, err
		}
	}
	h.storeDelivered(ctx, rl, run, work)
	return resp, false, nil
}

// applyLocked folds hb into a's state and queues its beat.
func (h *Hub) applyLocked(a *agent, tok ledger.AgentToken, rl *ledger.Rental, hb *heartbeat, now time.Time) {
	prev := a.state
	s := prev
	s.RentalID, s.UserID = tok.RentalID, tok.UserID
	if s.FirstSeen.IsZero() {
		s.FirstSeen = now
	}
	s.LastSeen, s.BootID, s.Seq = now, hb.BootID, hb.Seq
	s.Verdict = ledger.Verdict(hb.Verdict)
	s.CanRelease = hb.CanRelease
	s.Reasons = hb.reasons
	s.Work = ""
	if hb.Verdict == wire.VerdictBusy {
		s.Work = hb.Work
	}
	s.GPU = hb.gpu
	s.Sessions = sessions(hb, now)

	// The window's length on the server's clock: never more than the time
	// since the last heartbeat, so a jumping agent clock cannot inflate it.
	win := hb.WindowEnd.Sub(hb.WindowStart)
	if win < 0 {
		win = 0
	}
	limit := maxWindow
	if prev.Seen() && now.After(prev.LastSeen) {
		limit = min(limit, now.Sub(prev.LastSeen))
	}
	win = min(win, limit)

	a.step = h.idleStepLocked(a, rl, prev, &s, hb, now)

	if hb.Job != nil {
		j := ledger.JobInfo{Command: hb.Job.Command, Label: hb.Job.Label, Running: hb.Job.Running, Exited: hb.Job.Exited,
			StartedAt: hb.Job.StartedAt, Duration: time.Duration(hb.Job.DurationSeconds * float64(time.Second))}
		if hb.Job.ExitCode != nil {
			j.ExitCode = *hb.Job.ExitCode
		}
		if hb.Job.EndedAt != nil {
			j.EndedAt = *hb.Job.EndedAt
		}
		s.Job = j
		if j.Exited && !j.Running {
			end := j.EndedAt
			if end.IsZero() {
				end = j.StartedAt.Add(j.Duration)
			}
			if !end.Equal(a.jobEndReported) {
				a.jobEndReported = end
				h.jobRunLocked(a, tok, j, end, hb.Job.ExitCode != nil, now)
				if h.jobNoteLocked(a, rl, j, now) {
					r := rl
					h.emit(ledger.JobFinished{Rental: r, Job: j})
				}
			}
		}
	} else {
		s.Job = ledger.JobInfo{}
	}

	// Once per distinct mismatch, not per agent start: a forger can
	// make up a new boot id at every heartbeat.
	if d := ledger.GPUMismatch(rl, s.GPU); !d.IsZero() && a.mismatchSaid != d {
		a.mismatchSaid = d
		if h.noteLocked(a, rl, "gpu mismatch", now) {
			r := rl
			h.emit(ledger.GPUMismatched{Rental: r, Diff: d})
		}
	}
	h.hostLocked(a, rl, prev, &s, hb, now)
	if hb.PolicyRefused != a.policyRefused {
		a.policyRefused = hb.PolicyRefused
		if a.policyRefused != "" {
			h.log.Warn("hub: the agent refused the server's policy and keeps its own lease and thresholds",
				"rental", rl.ID, "agent_says", a.policyRefused)
		}
	}
	// /why says it too: the user is who can fix it (a host clock, a token).
	s.PolicyRefused, s.PolicyRefusedCode = a.policyRefused, ""
	if a.policyRefused != "" {
		s.PolicyRefusedCode = ledgerPolicyRefusal(hb.PolicyRefusedCode)
	}
	a.state = s
	h.dirty[s.RentalID] = true

	b := ledger.Beat{RentalID: s.RentalID, At: now, Verdict: s.Verdict, UtilMean: -1, UtilMax: -1,
		JobAlive: hb.Job != nil && hb.Job.Running, Samples: hb.Samples, GPUSource: hb.Host.GPUSource}
	if n := hb.Samples; n > 0 {
		ws := int64(win / time.Second)
		b.BusyS = ws * int64(hb.BusySamples) / int64(n)
		b.IdleS = ws * int64(hb.IdleSamples) / int64(n)
		b.UnknownS = ws - b.BusyS - b.IdleS
	}
	var sum float64
	var cnt int
	for _, g := range hb.GPUs {
		if g.UtilMean != nil {
			sum += *g.UtilMean
			cnt++
		}
		if g.UtilMax != nil {
			b.UtilMax = max(b.UtilMax, int(*g.UtilMax*10))
		}
	}
	if cnt > 0 {
		b.UtilMean = int(sum / float64(cnt) * 10)
	}
	h.workLocked(a, rl, hb, b.BusyS, win, prev.LastSeen, now)
	h.beats = append(h.beats, b)
	if len(h.beats) >= 2000 {
		select {
		case h.flushNow <- struct{}{}:
		default:
		}
	}
}

// maxReplaced bounds the replaced agent runs remembered per rental.
const maxReplaced = 8

// msgTwin refuses the heartbeat of an agent run that another run of the
// same token replaced.
const msgTwin = "another agent reports for this rental with the same token since this one last did (a copy of this instance started at the same time?): this agent must enrol as itself with the enrolment token; the user is asked whether it is theirs"

// twinError is record's refusal of a heartbeat from an agent run that a
// later run reporting with the same token replaced.
type twinError struct{ boot, current string }

func (e *twinError) Error() string {
	return fmt.Sprintf("hub: heartbeat from agent run %s, replaced by run %s on the same token", e.boot, e.current)
}

// cloneError is record's refusal of a rental's heartbeat from another
// instance than the one the rental is bound to.
type cloneError struct{ bound, got string }

func (e *cloneError) Error() string {
	return fmt.Sprintf("hub: heartbeat from instance %s for a rental bound to %s", e.got, e.bound)
}

// hostLocked keeps what hb says of the host in s (its instance key, its
// boot, the agent's shutdown report) and publishes a shutdown
// report (once per boot of the host; a report that the operating system
// is going down after one that only the agent stopped is told too) and
// a new boot (a boot more than newBootAfter after the one stored), both
// within the token's budget of messages. The state carries the boot and
// the report, and is written before the agent is answered (a.step.write,
// as for an idle interval), so a server killed after the answer does not
// tell them again when the agent sends the report again. h.mu is held.
func (h *Hub) hostLocked(a *agent, rl *ledger.Rental, prev ledger.AgentState, s *ledger.AgentState, hb *heartbeat, now time.Time) {
	booted := false
	if hb.Instance != nil {
		key := hb.key
		boot := placeBoot(hb, hb.Instance.BootedAt, now)
		switch {
		case key != "" && prev.InstanceKey != "" && key != prev.InstanceKey:
			// Another host reports for the rental now (its agent was
			// installed elsewhere): nothing to compare its boot with.
			s.InstanceKey, s.HostBoot = key, boot
			s.ShutdownAt, s.ShutdownHost = time.Time{}, false
			a.shutdownTold = false
			booted = true
		case prev.HostBoot.IsZero():
			s.InstanceKey, s.HostBoot = key, boot
		case !boot.IsZero() && boot.Sub(prev.HostBoot) > newBootAfter:
			// A later boot than the one stored: the host went down after
			// the last heartbeat. An earlier one is not believed (two
			// agents taking turns would otherwise make a boot of each).
			b := ledger.Boot{BootAt: boot, PrevBoot: prev.HostBoot, LastSeen: prev.LastSeen,
				ShutdownAt: prev.ShutdownAt, ShutdownHost: prev.ShutdownHost}
			if b.BootAt.Before(prev.LastSeen) {
				b.BootAt = prev.LastSeen
			}
			if b.BootAt.After(now) {
				b.BootAt = now
			}
			s.InstanceKey, s.HostBoot = key, boot
			s.ShutdownAt, s.ShutdownHost = time.Time{}, false
			a.shutdownTold = false
			booted = true
			a.step.write = true
			if h.noteLocked(a, rl, "host booted", now) {
				r := rl
				h.emit(ledger.HostBooted{Rental: r, Boot: b})
			}
		default:
			if key != "" {
				s.InstanceKey = key
			}
		}
	}
	sd := hb.Shutdown
	if sd == nil {
		if !booted && !prev.ShutdownAt.IsZero() {
			// The agent reports normally again on the same boot: only the
			// agent had stopped.
			s.ShutdownAt, s.ShutdownHost = time.Time{}, false
		}
		return
	}
	at := now
	if !sd.At.IsZero() {
		at = placeBoot(hb, sd.At, now)
	}
	if prev.Seen() && at.Before(prev.LastSeen) {
		at = prev.LastSeen
	}
	if lo := now.Add(-shutdownLate); at.Before(lo) {
		// An agent sends its report as it stops: one claiming an older
		// stop would make the silence before it unbilled time.
		at = lo
	}
	thisBoot := a.shutdownTold && a.shutdownBoot.Equal(s.HostBoot)
	told := thisBoot || !prev.ShutdownAt.IsZero()
	toldHost := (thisBoot && a.shutdownHost) || (!prev.ShutdownAt.IsZero() && prev.ShutdownHost)
	s.ShutdownAt, s.ShutdownHost = at, sd.Host || (!prev.ShutdownAt.IsZero() && prev.ShutdownHost)
	if told && (!sd.Host || toldHost) {
		return
	}
	a.shutdownTold, a.shutdownBoot, a.shutdownHost = true, s.HostBoot, sd.Host || toldHost
	a.step.write = true
	if h.noteLocked(a, rl, "host shutdown", now) {
		r, host := rl, sd.Host
		h.emit(ledger.HostShutdown{Rental: r, At: at, Host: host})
	}
}

// shutdownLate is how long before its arrival a shutdown report may
// place the stop: an agent sends it as it stops (within the seconds the
// operating system gives it), so a claim of an earlier stop is not
// believed.
const shutdownLate = 2 * time.Minute

// sessions returns the people connected that hb reports (the door left
// out the kinds this server does not know).
func sessions(hb *heartbeat, now time.Time) []ledger.Session {
	// An activity time is the agent's clock: placed on the server's as
	// the window is (shifted by now - sent_at), never after now.
	var skew time.Duration
	if !hb.SentAt.IsZero() {
		skew = now.Sub(hb.SentAt)
	}
	var out []ledger.Session
	for _, s := range hb.Sessions {
		ls := ledger.Session{Kind: s.Kind, Client: s.Client, User: s.User}
		if s.Since != nil && !s.Since.IsZero() {
			ls.Since = s.Since.UTC().Truncate(time.Second)
		}
		if s.ActiveAt != nil && !s.ActiveAt.IsZero() {
			at := s.ActiveAt.Add(skew)
			if at.After(now) {
				at = now
			}
			ls.ActiveAt = at.UTC().Truncate(time.Second)
		}
		out = append(out, ls)
	}
	return out
}

// rental returns the rental and its stored lease end, from a cache
// refreshed every rentalTTL.
func (h *Hub) rental(ctx context.Context, id int64, now time.Time) (*rentalEntry, error) {
	h.mu.Lock()
	e := h.rentals[id]
	h.mu.Unlock()
	if e != nil && now.Sub(e.loadedAt) < rentalTTL && !now.Before(e.loadedAt) {
		return e, nil
	}
	r, err := h.store.RentalByID(ctx, id)
	if err != nil {
		return nil, err
	}
	l, ok, err := h.store.LeaseEnd(ctx, id)
	if err != nil {
		return nil, err
	}
	in, err := h.store.InstanceByRental(ctx, id)
	if err != nil && ledger.ErrorCode(err) != ledger.ENOTFOUND {
		return nil, err
	}
	e = &rentalEntry{r: r, lease: l, leaseOK: ok, inst: in, instOK: err == nil, loadedAt: now}
	h.mu.Lock()
	h.rentals[id] = e
	h.mu.Unlock()
	return e, nil
}

// Refresh drops what the hub cached of a rental and its tokens, after it
// changed outside the hub (a lease extended, a /stop typed in chat, a
// release recorded by hand): the next heartbeat reads them again.
func (h *Hub) Refresh(rentalID int64) {
	h.forgetRental(rentalID)
	h.mu.Lock()
	h.forgetTokensLocked(rentalID)
	h.mu.Unlock()
}

// forgetTokensLocked drops the cached tokens of a rental; h.mu is held.
func (h *Hub) forgetTokensLocked(rentalID int64) {
	h.tokens.forgetLocked(func(t *ledger.AgentToken) bool { return t.RentalID == rentalID })
}

// forgetRental drops a cached rental after it changed.
func (h *Hub) forgetRental(id int64) {
	h.mu.Lock()
	delete(h.rentals, id)
	h.mu.Unlock()
}

// noteAfterRelease publishes, at most once an hour per rental,
// that a released rental's agent still reports.
func (h *Hub) noteAfterRelease(ctx context.Context, tok ledger.AgentToken) {
	now := h.now()
	// The hourly limit first: a leftover agent reports every 30 s, and
	// each check would otherwise read the rental.
	h.mu.Lock()
	a := h.agentLocked(tok.RentalID)
	noted := !a.afterRelease.IsZero() && now.Sub(a.afterRelease) < time.Hour
	h.mu.Unlock()
	if noted {
		return
	}
	rl, err := h.store.RentalByID(ctx, tok.RentalID)
	if err != nil {
		return
	}
	at, released := rl.ReleasedAt()
	// Heartbeats in flight at the release are expected for a while.
	if !released || now.Sub(at) < 3*time.Minute {
		return
	}
	h.mu.Lock()
	if !a.afterRelease.IsZero() && now.Sub(a.afterRelease) < time.Hour {
		h.mu.Unlock()
		return // noted meanwhile by a concurrent heartbeat
	}
	a.afterRelease = now
	ok := h.noteLocked(a, rl, "reports after release", now)
	h.mu.Unlock()
	if ok {
		h.emit(ledger.ReportedAfterRelease{Rental: rl, At: now})
	}
}

// Limits on what one agent token can make the bot say. A token is one
// rental's, and whoever holds it can forge heartbeats at the rate limit
// (about one a second): without these, each could carry a new job end
// time and a new agent start, and become a "finished… Release?" card or a
// GPU note.
const (
	// noteBudget is how many agent-triggered messages (job finished, GPU
	// mismatch, reports after release) one rental's token can cause in
	// noteWindow; the rest are dropped with one log line per window.
	noteBudget = 6
	noteWindow = time.Hour
	// jobNoteEvery is the least time between two job-finished cards of
	// one rental; and each job (its command and start) is told once.
	jobNoteEvery = 10 * time.Minute
	// jobsRemembered bounds the jobs remembered as told, per rental.
	jobsRemembered = 16
)

// jobNoteLocked reports whether the end of job j may be told now: a job
// not told before, no job card in the last jobNoteEvery, and the token's
// budget not spent. h.mu is held.
func (h *Hub) jobNoteLocked(a *agent, rl *ledger.Rental, j ledger.JobInfo, now time.Time) bool {
	key := j.StartedAt.UTC().Format(time.RFC3339Nano) + " " + j.Command
	for _, k := range a.jobsTold {
		if k == key {
			return false // the same job with another end: said already
		}
	}
	if !a.jobToldAt.IsZero() && now.Sub(a.jobToldAt) < jobNoteEvery && !now.Before(a.jobToldAt) {
		h.droppedNoteLocked(a, rl, "job finished", now)
		return false
	}
	if !h.noteLocked(a, rl, "job finished", now) {
		return false
	}
	a.jobToldAt = now
	a.jobsTold = append(a.jobsTold, key)
	if len(a.jobsTold) > jobsRemembered {
		a.jobsTold = a.jobsTold[1:]
	}
	return true
}

// noteLocked takes one message from the rental's budget of
// agent-triggered messages, and reports whether there was one. h.mu is
// held.
func (h *Hub) noteLocked(a *agent, rl *ledger.Rental, what string, now time.Time) bool {
	keep := a.notes[:0]
	for _, t := range a.notes {
		if now.Sub(t) < noteWindow && !now.Before(t) {
			keep = append(keep, t)
		}
	}
	a.notes = keep
	if len(a.notes) >= noteBudget {
		h.droppedNoteLocked(a, rl, what, now)
		return false
	}
	a.notes = append(a.notes, now)
	return true
}

// droppedNoteLocked logs, once per noteWindow, that a rental's agent
// asked for more messages than it may cause.
func (h *Hub) droppedNoteLocked(a *agent, rl *ledger.Rental, what string, now time.Time) {
	if !a.notesDroppedSaid.IsZero() && now.Sub(a.notesDroppedSaid) < noteWindow && !now.Before(a.notesDroppedSaid) {
		return
	}
	a.notesDroppedSaid = now
	h.log.Warn("hub: agent-triggered messages over the limit for this rental's token; dropping them for up to an hour (a stolen token? issue a new one with /agent NAME)",
		"rental", rl.ID, "dropped", what, "budget", noteBudget, "per", noteWindow, "job_card_every", jobNoteEvery)
}
