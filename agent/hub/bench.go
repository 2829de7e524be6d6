package hub

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// What each rental delivered, as its agent tells it: the bench it runs
// when the hub asks (HeartbeatResponse.BenchWanted, answered on
// POST wire.PathBench), the runs of the job it wraps, and the first
// sustained GPU work its heartbeats show (the setup tax's end). All of
// it is the agent's claim: bounded at the door, stored with the rental,
// shown as measured by the agent; no money and no automatic action
// reads it.

// jobRunBudget bounds the job runs one rental's token can have stored
// per noteWindow: an agent wraps one job per run of `gpuledger-agent
// run`, so a real user stores a few an hour, and a token holder forging
// a new job at every heartbeat stores no more than these (the rest are
// dropped, with one log line per window).
const jobRunBudget = 12

// maxBenchesPerRental bounds the benches stored per rental: an agent
// sends one (the hub stops asking once it has one), a few more come
// from reinstalls and `gpuledger-agent bench` run by hand; a token
// holder sending more is answered 429 and stores nothing.
const maxBenchesPerRental = 4

// benchRetryAfter is the Retry-After of that 429, in seconds.
const benchRetryAfter = 3600

// benchOffTTL is how long a user's Settings.BenchOff is trusted before
// it is read again, where nobody told the hub it changed (UserChanged).
const benchOffTTL = 5 * time.Minute

// Sustained work: a rental first works when its GPUs were busy by
// utilisation (not CPU, disk, network or people) for at least
// workForSeconds of consecutive heartbeat windows. A window counts when
// at least half of its samples were busy and its busiest GPU's mean
// utilisation was workUtilPercent or more; a window that does not count,
// or a gap of more than workGap between windows, starts the streak
// again. The work began at the streak's first window (server clock).
// The bench itself (seconds of kernels) never counts.
const (
	workUtilPercent = 50
	workForSeconds  = 60
	workGap         = 2 * time.Minute
)

// msgBenchEnrol answers a bench sent with an enrolment token.
const msgBenchEnrol = "a bench is stored with a rental: keep it and send it once this agent has its rental's token (the next heartbeat hands it over once the instance is logged)"

// benchKnown is what the hub knows of a rental's benches in the store.
type benchKnown int8

const (
	benchUnread benchKnown = iota // not read yet
	benchNone                     // the store has none
	benchHeld                     // the store has one
)

// userBenchOff is a user's Settings.BenchOff as read at at.
type userBenchOff struct {
	off bool
	at  time.Time
}

func (h *Hub) serveBench(w http.ResponseWriter, r *http.Request) {
	if raw := bearer(r); wire.IsEnrolToken(raw) {
		writeError(w, http.StatusConflict, msgBenchEnrol)
		return
	}
	ctx := r.Context()
	tok, ar, err := h.authenticate(ctx, r)
	switch ar {
	case authUnknown:
		writeError(w, http.StatusUnauthorized, "unknown agent token: get one with /agent NAME")
		return
	case authRevoked:
		writeError(w, http.StatusUnauthorized, "agent token revoked (the rental was released, a new token was issued, or its owner left the team)")
		return
	case authLimited, authError:
		writeAuthRefusal(w, ar, err)
		return
	}
	rep, _ := readBench(w, r)
	if rep == nil {
		return
	}
	resp, retry, err := h.recordBench(ctx, tok, rep)
	h.publish(ctx)
	if retry {
		w.Header().Set("Retry-After", strconv.Itoa(benchRetryAfter))
		writeError(w, http.StatusTooManyRequests, "this rental already holds "+strconv.Itoa(maxBenchesPerRental)+" benches: no more are stored")
		return
	}
	if err != nil {
		h.log.Error("hub: bench", "rental", tok.RentalID, "err", err)
		writeLedgerError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// recordBench stores rep with the token's rental, once per report ID,
// and queues BenchReported when it is the rental's first bench, the
// rental is not released and its user has not turned receipts off. It
// reports retry when the rental holds maxBenchesPerRental benches
// already and rep is not one of them.
func (h *Hub) recordBench(ctx context.Context, tok ledger.AgentToken, rep *benchReport) (wire.BenchResponse, bool, error) {
	now := h.now().UTC()
	resp := wire.BenchResponse{Rental: tok.Rental}
	re, err := h.rental(ctx, tok.RentalID, now)
	if err != nil {
		return resp, false, err
	}
	h.benchMu.Lock()
	defer h.benchMu.Unlock()
	held, err := h.store.Benches(ctx, tok.UserID, tok.RentalID)
	if err != nil {
		return resp, false, err
	}
	for _, b := range held {
		if b.ReportID == rep.ID {
			// A retry after a lost answer: stored already.
			resp.Bounded = b.Bounded
			h.setBenchKnown(tok.RentalID, benchHeld)
			return resp, false, nil
		}
	}
	if len(held) >= maxBenchesPerRental {
		return resp, true, nil
	}
	rec, added, err := h.store.AddBench(ctx, ledger.BenchRecord{RentalID: tok.RentalID, UserID: tok.UserID,
		ReportID: rep.ID, At: now, Bench: rep.Bench, Bounded: rep.bounded})
	if err != nil {
		return resp, false, err
	}
	h.setBenchKnown(tok.RentalID, benchHeld)
	resp.Stored, resp.Bounded = added, rec.Bounded
	if len(rep.bounded) > 0 {
		h.log.Warn("hub: a bench's figures out of any card's range were kept as not measured (the agent's claim)",
			"rental", tok.RentalID, "bounded", rep.bounded)
	}
	if !added || len(held) > 0 {
		return resp, false, nil
	}
	rl := re.r
	if rl.State() == ledger.Released {
		return resp, false, nil // history: stored, told to nobody
	}
	if off, err := h.userBenchOff(ctx, tok.UserID, now); err != nil || off {
		return resp, false, nil
	}
	h.emit(ledger.BenchReported{Rental: rl, Bench: rec})
	return resp, false, nil
}

func (h *Hub) setBenchKnown(rentalID int64, k benchKnown) {
	h.mu.Lock()
	h.agentLocked(rentalID).bench = k
	h.mu.Unlock()
}

// benchWanted reports whether the rental's agent is to be asked for its
// bench: the store has none for the rental (read once, then known), the
// rental is not released, and its user has not turned receipts off. A
// store that cannot be read asks nothing: the next heartbeat asks again.
func (h *Hub) benchWanted(ctx context.Context, tok ledger.AgentToken, rl *ledger.Rental, now time.Time) bool {
	if rl.State() == ledger.Released {
		return false
	}
	h.mu.Lock()
	k := h.agentLocked(tok.RentalID).bench
	h.mu.Unlock()
	if k == benchUnread {
		has, err := h.store.HasBench(ctx, tok.RentalID)
		if err != nil {
			h.log.Warn("hub: whether the rental has a bench", "rental", tok.RentalID, "err", err)
			return false
		}
		k = benchNone
		if has {
			k = benchHeld
		}
		h.mu.Lock()
		if a := h.agentLocked(tok.RentalID); a.bench == benchUnread {
			a.bench = k
		}
		h.mu.Unlock()
	}
	if k == benchHeld {
		return false
	}
	off, err := h.userBenchOff(ctx, tok.UserID, now)
	if err != nil {
		h.log.Warn("hub: the user's receipts setting", "user", tok.UserID, "err", err)
		return false
	}
	return !off
}

// userBenchOff returns the user's Settings.BenchOff, cached for
// benchOffTTL or until UserChanged. A read of the store that a
// UserChanged overtook (it may have read the settings before they
// changed) is returned but not cached: cached, it would hide the change
// for benchOffTTL. One counter for all users keeps the check free of
// memory per user; a change of another user's settings meanwhile costs
// one more read at most.
func (h *Hub) userBenchOff(ctx context.Context, userID int64, now time.Time) (bool, error) {
	h.mu.Lock()
	c, ok := h.benchOff[userID]
	gen := h.benchOffGen
	h.mu.Unlock()
	if ok && now.Sub(c.at) < benchOffTTL && !now.Before(c.at) {
		return c.off, nil
	}
	u, err := h.store.User(ctx, userID)
	if err != nil {
		return false, err
	}
	h.mu.Lock()
	if h.benchOffGen == gen {
		if len(h.benchOff) >= maxCachedTokens {
			clear(h.benchOff)
		}
		h.benchOff[userID] = userBenchOff{off: u.Settings.BenchOff, at: now}
	}
	h.mu.Unlock()
	return u.Settings.BenchOff, nil
}

// UserChanged is told that a user's settings changed outside the hub
// (/settings): the next heartbeat of their agents reads whether
// receipts are off again, instead of after benchOffTTL, and a read
// under way does not cache what it read before the change.
func (h *Hub) UserChanged(userID int64) {
	h.mu.Lock()
	delete(h.benchOff, userID)
	h.benchOffGen++
	h.mu.Unlock()
}

// UserChanged is Hub.UserChanged, for the conversation core's hooks.
func (t *Tokens) UserChanged(userID int64) { t.hub.UserChanged(userID) }

// jobRunLocked queues the run of a wrapped job that exited, to be stored
// once the lock is let go (AddJobRun keeps one per rental and start,
// whatever resends it). An exit without a code (killed) is -1: it does
// not count as a completed run. h.mu is held.
func (h *Hub) jobRunLocked(a *agent, tok ledger.AgentToken, j ledger.JobInfo, end time.Time, exitCode bool, now time.Time) {
	if j.StartedAt.IsZero() || end.Before(j.StartedAt) {
		return // no span to time
	}
	keep := a.runsStored[:0]
	for _, t := range a.runsStored {
		if now.Sub(t) < noteWindow && !now.Before(t) {
			keep = append(keep, t)
		}
	}
	a.runsStored = keep
	if len(a.runsStored) >= jobRunBudget {
		if a.runsDroppedSaid.IsZero() || now.Sub(a.runsDroppedSaid) >= noteWindow || now.Before(a.runsDroppedSaid) {
			a.runsDroppedSaid = now
			h.log.Warn("hub: too many job runs from this rental's token; not storing more for up to an hour (a stolen token? issue a new one with /agent NAME)",
				"rental", tok.RentalID, "budget", jobRunBudget, "per", noteWindow)
		}
		return
	}
	a.runsStored = append(a.runsStored, now)
	code := j.ExitCode
	if !exitCode {
		code = -1
	}
	a.runPending = &ledger.JobRun{RentalID: tok.RentalID, UserID: tok.UserID, Label: j.Label, Command: j.Command,
		StartedAt: j.StartedAt.UTC(), EndedAt: end.UTC(), ExitCode: code, Source: ledger.JobFromAgent}
}

// workLocked follows the streak of work windows of hb (see
// workForSeconds) and, once it is long enough, queues the rental's
// first work at its start. h.mu is held.
func (h *Hub) workLocked(a *agent, rl *ledger.Rental, hb *heartbeat, busyS int64, win time.Duration, prevSeen, now time.Time) {
	if a.firstWorkDone || !a.workPending.IsZero() {
		return
	}
	busiest := -1.0
	for _, g := range hb.GPUs {
		if g.UtilMean != nil {
			busiest = max(busiest, *g.UtilMean)
		}
	}
	ws := int64(win / time.Second)
	from := now.Add(-win)
	if ws <= 0 || busyS*2 < ws || busiest < workUtilPercent || rl.State() != ledger.Running {
		a.workFrom, a.workBusyS = time.Time{}, 0
		return
	}
	if !a.workFrom.IsZero() && from.Sub(prevSeen) > workGap {
		a.workFrom, a.workBusyS = time.Time{}, 0
	}
	if a.workFrom.IsZero() {
		a.workFrom = from
	}
	a.workBusyS += busyS
	if a.workBusyS >= workForSeconds {
		a.workPending = a.workFrom
	}
}

// storeDelivered stores what a heartbeat queued: the run of a job that
// exited, the rental's first work (published as WorkStarted the first
// time the store takes it). A write that fails for a passing reason is
// queued again for the next heartbeat.
func (h *Hub) storeDelivered(ctx context.Context, rl *ledger.Rental, run *ledger.JobRun, work time.Time) {
	if run != nil {
		if _, _, err := h.store.AddJobRun(ctx, *run); err != nil {
			h.log.Warn("hub: store a job run", "rental", run.RentalID, "err", err)
			if c := ledger.ErrorCode(err); c != ledger.EINVALID && c != ledger.ENOTFOUND {
				h.mu.Lock()
				if a := h.agentLocked(run.RentalID); a.runPending == nil {
					a.runPending = run
				}
				h.mu.Unlock()
			}
		}
	}
	if !work.IsZero() {
		added, err := h.store.SetFirstWork(ctx, rl.ID, work)
		h.mu.Lock()
		a := h.agentLocked(rl.ID)
		if err != nil {
			if a.workPending.IsZero() {
				a.workPending = work
			}
		} else {
			a.firstWorkDone = true
		}
		h.mu.Unlock()
		if err != nil {
			h.log.Warn("hub: store a rental's first work", "rental", rl.ID, "err", err)
			return
		}
		if added {
			h.emit(ledger.WorkStarted{Rental: rl, At: work})
		}
	}
}
