package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// ButtonRegistry is where the scheduler's card buttons are registered
// (bot.Core.HandleButton): the core verifies a press against the user who
// pressed it before calling the handler.
type ButtonRegistry interface {
	HandleButton(action string, fn bot.ButtonFunc)
}

// RegisterButtons registers the card buttons with the core.
func (s *Scheduler) RegisterButtons(reg ButtonRegistry) {
	for _, a := range []string{ActRelease, ActSnooze, ActKeep, ActExtend, ActReleaseAtEnd, ActReleased} {
		reg.HandleButton(a, s.press)
	}
}

// press handles one verified button press: it runs the action and answers
// the callback with a short toast.
func (s *Scheduler) press(ctx context.Context, p bot.ButtonPress, snd bot.Sender) error {
	id, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || id <= 0 {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, "This button is broken: use /status.")
	}
	if p.Action != ActReleased {
		// Record the update as handled: a redelivered press changes
		// nothing. (ActReleased passes the key to its ledger write.)
		err := s.store.MarkHandled(ctx, ledger.Action{UserID: p.Update.UserID, At: p.Now, Key: p.Update.Key})
		if ledger.ErrorCode(err) == ledger.EDUPLICATE {
			return snd.AnswerCallback(ctx, p.Update.CallbackID, "")
		}
		if err != nil && p.Update.Key != "" {
			return err
		}
	}
	var toast string
	switch p.Action {
	case ActRelease:
		toast, err = s.Release(ctx, p.Update.UserID, id)
	case ActSnooze:
		toast, err = s.Snooze(ctx, p.Update.UserID, id, p.Update.MessageID)
	case ActKeep:
		toast, err = s.Keep(ctx, p.Update.UserID, id, p.Update.MessageID)
	case ActExtend:
		toast, err = s.Extend(ctx, p.Update.UserID, id)
	case ActReleaseAtEnd:
		toast, err = s.ReleaseAtEnd(ctx, p.Update.UserID, id)
	case ActReleased:
		toast, err = s.MarkReleased(ctx, p.Update.UserID, id, p.Update.Key)
	}
	if err != nil {
		if ledger.ErrorCode(err) == ledger.EINTERNAL {
			s.log.Error("scheduler: button", "action", p.Action, "rental", id, "err", err)
			toast = "Something went wrong; nothing was changed. Try again."
		} else {
			toast = ledger.ErrorMessage(err)
		}
	}
	return snd.AnswerCallback(ctx, p.Update.CallbackID, truncate(toast, 190))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ownRental returns the user's rental by id; another user's is ENOTFOUND.
func (s *Scheduler) ownRental(ctx context.Context, userID, rentalID int64) (*ledger.Rental, *ledger.User, error) {
	r, err := s.store.RentalByID(ctx, rentalID)
	if err != nil || r.UserID != userID {
		return nil, nil, ledger.Errorf(ledger.ENOTFOUND, "that rental is not yours")
	}
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	return r, &u, nil
}

// Release asks the rental's agent to release the host (Release now). Two
// presses make one order; the ledger records the release when the agent
// confirms it. It returns the toast for the user. Errors: ENOTFOUND.
func (s *Scheduler) Release(ctx context.Context, userID, rentalID int64) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	if r.State() == ledger.Released {
		return fmt.Sprintf("%s is already released.", r.Name), nil
	}
	if o, ok := s.openOrder(r.ID); ok {
		return fmt.Sprintf("%s is already being released (order %s, %s).", r.Name, o.ID, o.State), nil
	}
	var st ledger.AgentState
	seen := false
	if s.hub != nil {
		st, seen = s.hub.AgentState(r.ID)
	}
	if !seen {
		return fmt.Sprintf("%s has no agent: release it on the platform, then send /release %s.", r.Name, r.Name), nil
	}
	if !st.CanRelease {
		return fmt.Sprintf("%s's agent has no --release-cmd: release it on the platform, then send /release %s.", r.Name, r.Name), nil
	}
	o, err := s.hub.IssueOrder(ctx, r.ID, wire.ActionRelease, ledger.OriginButton)
	if ledger.ErrorCode(err) == ledger.ECONFLICT {
		return fmt.Sprintf("%s is already being released.", r.Name), nil
	}
	if err != nil {
		return "", err
	}
	s.decide(ctx, r, ledger.DecisionUser, "Release now pressed: order "+o.ID, "")
	c := s.orderCard(ctx, u, r)
	text := fmt.Sprintf("Releasing <b>%s</b>: waiting for its agent to confirm (it re-checks that the GPU is idle first)…", esc(r.Name))
	if err := s.sendCard(ctx, u, &c, text, nil, c.MessageID == 0, true); err != nil {
		return "", err
	}
	return "Release ordered: " + r.Name, nil
}

// orderCard returns the card an order's progress is shown on: the open
// idle, job or lease card of the rental, or a new order card.
func (s *Scheduler) orderCard(ctx context.Context, u *ledger.User, r *ledger.Rental) ledger.Card {
	for _, k := range []ledger.CardKind{ledger.CardOrder, ledger.CardIdle, ledger.CardJob, ledger.CardLease} {
		if c, ok, err := s.openCard(ctx, r.ID, k); err == nil && ok && !c.Closed && c.MessageID != 0 {
			return c
		}
	}
	return ledger.Card{UserID: u.ID, RentalID: r.ID, Kind: ledger.CardOrder, Incident: strconv.FormatInt(s.now().UnixNano(), 10)}
}

// cardOf returns the card shown in messageID, or the rental's open idle card.
func (s *Scheduler) cardOf(ctx context.Context, userID, rentalID int64, messageID int) (ledger.Card, bool) {
	if messageID != 0 {
		if c, err := s.store.CardByMessage(ctx, userID, messageID); err == nil && c.RentalID == rentalID {
			return c, true
		}
	}
	for _, k := range []ledger.CardKind{ledger.CardIdle, ledger.CardJob, ledger.CardLongRun} {
		if c, ok, err := s.openCard(ctx, rentalID, k); err == nil && ok && !c.Closed {
			return c, true
		}
	}
	return ledger.Card{}, false
}

// Snooze holds the rental's reminders (and any automatic action) for an
// hour.
func (s *Scheduler) Snooze(ctx context.Context, userID, rentalID int64, messageID int) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	c, ok := s.cardOf(ctx, userID, rentalID, messageID)
	if !ok {
		return "Nothing to snooze.", nil
	}
	now := s.now()
	c.SnoozeUntil = now.Add(SnoozeFor)
	c.LastAt = now
	s.decide(ctx, r, ledger.DecisionUser, "Snooze 1h pressed", "until "+clock(u, c.SnoozeUntil))
	text := stripNote(c.Text) + "\nSnoozed until " + clock(u, c.SnoozeUntil) + "."
	if err := s.sendCard(ctx, u, &c, text, idleButtons(r), false, false); err != nil {
		return "", err
	}
	return "Snoozed until " + clock(u, c.SnoozeUntil), nil
}

// Keep stops the reminders and any automatic action for this incident.
func (s *Scheduler) Keep(ctx context.Context, userID, rentalID int64, messageID int) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	c, ok := s.cardOf(ctx, userID, rentalID, messageID)
	if !ok {
		return "OK.", nil
	}
	c.Kept = true
	if c.Kind != ledger.CardIdle {
		c.Closed = true
	}
	s.decide(ctx, r, ledger.DecisionUser, "Keep pressed", string(c.Kind)+" card")
	text := stripNote(c.Text) + "\nKept: no more reminders about this."
	if err := s.sendCard(ctx, u, &c, text, nil, false, false); err != nil {
		return "", err
	}
	return "Kept " + r.Name, nil
}

// stripNote drops the status line a card's text ends with.
func stripNote(t string) string {
	if i := strings.Index(t, "\n"); i >= 0 {
		return t[:i]
	}
	return t
}

// Extend moves the rental's lease end 2 hours later.
func (s *Scheduler) Extend(ctx context.Context, userID, rentalID int64) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	stored, ok, err := s.store.LeaseEnd(ctx, r.ID)
	if err != nil {
		return "", err
	}
	le, ok := ledger.LeaseEndOf(r, stored, ok)
	if !ok {
		return r.Name + " has no lease.", nil
	}
	base := le.EndsAt
	if now := s.now(); base.Before(now) {
		base = now
	}
	le.EndsAt = base.Add(ExtendBy)
	if err := s.store.SetLeaseEnd(ctx, le); err != nil {
		return "", err
	}
	if s.hub != nil {
		s.hub.Refresh(r.ID)
	}
	if c, ok, _ := s.openCard(ctx, r.ID, ledger.CardLease); ok && !c.Closed {
		c.Closed = true
		s.sendCard(ctx, u, &c, fmt.Sprintf("<b>%s</b>'s lease now ends at %s.", esc(r.Name), clock(u, le.EndsAt)), nil, false, false)
	}
	return "Lease extended to " + clock(u, le.EndsAt), nil
}

// ReleaseAtEnd has the rental's agent release it at the lease's end (the
// agent enforces the deadline itself, and refuses while busy).
func (s *Scheduler) ReleaseAtEnd(ctx context.Context, userID, rentalID int64) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	stored, ok, err := s.store.LeaseEnd(ctx, r.ID)
	if err != nil {
		return "", err
	}
	le, ok := ledger.LeaseEndOf(r, stored, ok)
	if !ok {
		return r.Name + " has no lease.", nil
	}
	le.ReleaseAtEnd = true
	if err := s.store.SetLeaseEnd(ctx, le); err != nil {
		return "", err
	}
	if s.hub != nil {
		s.hub.Refresh(r.ID)
	}
	s.decide(ctx, r, ledger.DecisionUser, "Release at end pressed", "lease ends "+clock(u, le.EndsAt))
	if c, ok, _ := s.openCard(ctx, r.ID, ledger.CardLease); ok && !c.Closed {
		s.sendCard(ctx, u, &c, fmt.Sprintf("<b>%s</b> will be released by its agent at %s, unless it is busy then.", esc(r.Name), clock(u, le.EndsAt)),
			[][]button{{{"Extend 2h", ActExtend, r.ID}}}, false, false)
	}
	return "Release at " + clock(u, le.EndsAt), nil
}

// MarkReleased records that the user released a rental by hand (a rental
// without an agent, or a silent one), now. key makes it idempotent.
func (s *Scheduler) MarkReleased(ctx context.Context, userID, rentalID int64, key string) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	if r.State() == ledger.Released {
		return r.Name + " is already released.", nil
	}
	now := s.now()
	_, err = s.store.AppendEvent(ctx, ledger.Action{UserID: userID, At: now, Key: key}, r.Name, ledger.Event{Kind: ledger.EventRelease, At: now})
	if ledger.ErrorCode(err) == ledger.EDUPLICATE {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if err := s.store.RevokeTokens(ctx, r.ID, now); err != nil {
		s.log.Error("scheduler: revoke tokens", "rental", r.ID, "err", err)
	}
	if s.hub != nil {
		// The hub caches rentals and tokens: make it read them again now,
		// and end the idle time at the release.
		s.hub.Refresh(r.ID)
		if err := s.hub.CloseIdleAt(ctx, r.ID, now); err != nil {
			s.log.Error("scheduler: close idle interval", "rental", r.ID, "err", err)
		}
	}
	s.decide(ctx, r, ledger.DecisionUser, "I released it pressed", "release recorded at "+clock(u, now))
	for _, k := range []ledger.CardKind{ledger.CardSilent, ledger.CardLongRun, ledger.CardLease, ledger.CardIdle} {
		if c, ok, _ := s.openCard(ctx, r.ID, k); ok && !c.Closed && c.MessageID != 0 {
			c.Closed = true
			s.sendCard(ctx, u, &c, fmt.Sprintf("✓ <b>%s</b> released at %s (recorded by hand).", esc(r.Name), clock(u, now)), nil, false, false)
		}
	}
	return "✓ " + r.Name + " released " + clock(u, now), nil
}

// The hub's Listener: what the agents report that the user should hear.

// JobFinished sends "training finished (exit 0, 3h12m, ¥6.20). Release?".
func (s *Scheduler) JobFinished(ctx context.Context, r *ledger.Rental, j ledger.JobInfo) {
	if err := s.jobFinished(ctx, r, j); err != nil {
		s.log.Error("scheduler: job finished", "rental", r.ID, "err", err)
	}
}

func (s *Scheduler) jobFinished(ctx context.Context, r *ledger.Rental, j ledger.JobInfo) error {
	defer s.lockRental(r.ID)()
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	end := j.EndedAt
	if end.IsZero() {
		end = j.StartedAt.Add(j.Duration)
	}
	c, seen, err := s.cardFor(ctx, &u, r, ledger.CardJob, strconv.FormatInt(end.Unix(), 10))
	if err != nil || seen {
		return err
	}
	now := s.now()
	// The agent's clock may be off: the cost is over the duration, ending now.
	from := now.Add(-j.Duration)
	_, cost, err := s.idleCost(ctx, r, from, now)
	if err != nil {
		return err
	}
	what := "the job"
	if j.Command != "" {
		what = "<code>" + esc(truncate(j.Command, 60)) + "</code>"
	}
	text := fmt.Sprintf("<b>%s</b>: %s finished (exit %d, %s, %s). Release?", esc(r.Name), what, j.ExitCode, fmtDur(j.Duration), cost.Format())
	return s.sendCard(ctx, &u, &c, text, [][]button{{{"Release now", ActRelease, r.ID}, {"Keep", ActKeep, r.ID}}}, true, false)
}

// GPUMismatch tells the user once that the agent sees other GPUs than
// the rental as logged.
func (s *Scheduler) GPUMismatch(ctx context.Context, r *ledger.Rental, msg string) {
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		s.log.Error("scheduler: gpu mismatch", "rental", r.ID, "err", err)
		return
	}
	s.decide(ctx, r, ledger.DecisionMismatch, "GPU facts differ from the rental", msg)
	if err := s.notifyText(ctx, &u, fmt.Sprintf("⚠ <b>%s</b>: %s. Check what you are paying for.", esc(r.Name), esc(msg))); err != nil {
		s.log.Error("scheduler: gpu mismatch", "rental", r.ID, "err", err)
	}
}

// ReportAfterRelease flags a released rental whose agent keeps reporting.
func (s *Scheduler) ReportAfterRelease(ctx context.Context, r *ledger.Rental, at time.Time) {
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return
	}
	rel, _ := r.ReleasedAt()
	c, seen, err := s.cardFor(ctx, &u, r, ledger.CardUnconfirmed, strconv.FormatInt(rel.Unix(), 10))
	if err != nil || seen {
		return
	}
	s.decide(ctx, r, ledger.DecisionUnconfirm, "release not confirmed", "the agent reported at "+clock(&u, at)+" after the release at "+clock(&u, rel))
	text := fmt.Sprintf("⚠ <b>%s</b>: release not confirmed. It was recorded as released at %s, but its agent still reports. Check the platform: it may still be billing.", esc(r.Name), clock(&u, rel))
	if err := s.sendCard(ctx, &u, &c, text, nil, true, true); err != nil {
		s.log.Error("scheduler: release not confirmed", "rental", r.ID, "err", err)
	}
}

// OrderUpdated shows an order's progress on its card and records the
// outcome for /why.
func (s *Scheduler) OrderUpdated(ctx context.Context, o ledger.Order, r *ledger.Rental) {
	if err := s.orderUpdated(ctx, o, r); err != nil {
		s.log.Error("scheduler: order update", "order", o.ID, "err", err)
	}
}

var outcomeText = map[string]string{
	wire.OutcomeRefusedBusy:       "the agent found the GPU busy",
	wire.OutcomeRefusedJob:        "the wrapped job is still running",
	wire.OutcomeRefusedUnknown:    "the agent could not tell whether the GPU is idle",
	wire.OutcomeRefusedNoCommand:  "the agent has no --release-cmd",
	wire.OutcomeRejectedSignature: "the agent rejected the order's signature (was the token re-issued?)",
	wire.OutcomeRejectedExpired:   "the order expired before the agent got it (check the host's clock)",
	wire.OutcomeRejectedRental:    "the agent serves another rental",
	wire.OutcomeRejectedInvalid:   "the agent found the order malformed",
	wire.OutcomePreReleaseFailed:  "the pre-release command failed",
	wire.OutcomeReleaseFailed:     "the release command failed",
}

func (s *Scheduler) orderUpdated(ctx context.Context, o ledger.Order, r *ledger.Rental) error {
	defer s.lockRental(r.ID)()
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	verb := "release"
	if o.Action == wire.ActionStop {
		verb = "stop"
	}
	var text string
	switch o.State {
	case ledger.OrderPending:
		return nil
	case ledger.OrderStarted:
		text = fmt.Sprintf("<b>%s</b>: the agent is running the %s command…", esc(r.Name), verb)
	case ledger.OrderDone:
		past := map[string]string{"release": "released", "stop": "stopped"}[verb]
		at := o.UpdatedAt
		if r != nil && len(r.Events) > 0 {
			at = r.LastEventAt()
		}
		text = fmt.Sprintf("✓ <b>%s</b> %s at %s, confirmed by its agent.", esc(r.Name), past, clock(&u, at))
	default:
		why := outcomeText[o.Outcome]
		if why == "" {
			why = o.Message
		} else if o.Message != "" {
			why += " (" + truncate(o.Message, 200) + ")"
		}
		text = fmt.Sprintf("<b>%s</b> was not %sd: %s. Nothing was recorded in the ledger.", esc(r.Name), verb, esc(why))
		if verb == "stop" {
			text = fmt.Sprintf("<b>%s</b> was not stopped: %s. Nothing was recorded in the ledger.", esc(r.Name), esc(why))
		}
	}
	if !o.State.Open() {
		kind := ledger.DecisionOutcome
		s.decide(ctx, r, kind, fmt.Sprintf("%s order %s: %s", verb, o.ID, o.State), o.Outcome+" "+truncate(o.Message, 200))
	}
	c := s.orderCard(ctx, &u, r)
	if o.State == ledger.OrderDone {
		c.Closed = true
	}
	if c.ID == 0 {
		return s.sendCard(ctx, &u, &c, text, nil, true, true)
	}
	var btns [][]button
	if o.State == ledger.OrderRefused || o.State == ledger.OrderFailed || o.State == ledger.OrderExpired {
		if c.Kind == ledger.CardIdle && !c.Kept {
			btns = idleButtons(r)
		}
	}
	return s.sendCard(ctx, &u, &c, text, btns, o.State.Open() == false && o.State != ledger.OrderDone, true)
}
