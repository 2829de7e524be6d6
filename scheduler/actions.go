package scheduler

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// handleButtons registers the cards' actions with the buttons: the
// router verifies a press against the user who pressed it before calling
// the handler, and words a handler's error as the toast.
func (s *Scheduler) handleButtons(b *chat.Buttons) {
	for _, a := range []string{ActRelease, ActSnooze, ActKeep, ActExtend, ActReleaseAtEnd, ActReleased, ActPStop, ActPTerm, ActTrustOff, ActTrust, ActTrustNew, ActReceiptKeep} {
		b.Handle(a, s.press)
	}
	for _, a := range []string{ActAdopt, ActOtherPrice, ActNotMine, ActReconnect, ActRevokeEnrol, ActHostStopped, ActHostBilled} {
		b.Handle(a, s.enrolPress)
	}
	b.Handle(ActApprove, s.pressApproval)
	b.Handle(ActStopIt, s.pressApproval)
	b.Handle(ActMine, s.pressMine)
}

// press handles one verified button press: it runs the action and answers
// the callback with a short toast; an error is the router's to word.
func (s *Scheduler) press(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	lg := s.pressLang(ctx, p)
	// The ledger the card was made for: the presser's own, or a team's
	// whose member they are (chat.Buttons.Dispatch verified it).
	ledgerID := p.ActsOn()
	id, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || id <= 0 {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	}
	switch p.Action {
	case ActRelease, ActExtend, ActReleaseAtEnd, ActReleased, ActPStop, ActPTerm, ActTrustOff, ActTrust, ActTrustNew:
		// A change to the rental: on a team's ledger, its owner's or an
		// admin's (Snooze and Keep are any member's). Refused, nothing
		// changes and the press is not recorded.
		if no := s.mayChange(ctx, p, id, lg); no != "" {
			return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes(no, 190, "…"))
		}
	}
	if p.Action != ActReleased {
		// Record the update as handled: a redelivered press changes
		// nothing. (ActReleased passes the key to its ledger write.)
		err := s.store.MarkHandled(ctx, ledger.Action{UserID: ledgerID, At: p.Now, Key: p.Update.Key})
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
		toast, err = s.Release(ctx, ledgerID, id)
	case ActSnooze:
		toast, err = s.Snooze(ctx, ledgerID, id, p.Update.MessageID)
	case ActKeep:
		toast, err = s.Keep(ctx, ledgerID, id, p.Update.MessageID)
	case ActExtend:
		toast, err = s.Extend(ctx, ledgerID, id)
	case ActReleaseAtEnd:
		toast, err = s.ReleaseAtEnd(ctx, ledgerID, id)
	case ActReleased:
		toast, err = s.markReleased(ctx, ledger.Action{UserID: ledgerID, By: p.By(), At: p.Now, Key: p.Update.Key, Via: ledger.ViaButton}, id)
	case ActPStop, ActPTerm:
		toast, err = s.PlatformAct(ctx, ledgerID, id, p.Action == ActPTerm, p.Update.MessageID)
	case ActTrustOff, ActTrust, ActTrustNew:
		toast, err = s.TrustAnswer(ctx, ledgerID, id, p.Action)
	case ActReceiptKeep:
		toast, err = s.KeepReceipt(ctx, ledgerID, id, p.Update.MessageID)
	}
	if err != nil {
		return err
	}
	if toast != "" {
		toast = s.teamTag(ctx, ledgerID) + toast
	}
	return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes(toast, 190, "…"))
}

// ownRental returns the user's rental by id; another user's, or none, is
// ENOTFOUND; a store that cannot answer now returns its own error.
func (s *Scheduler) ownRental(ctx context.Context, userID, rentalID int64) (*ledger.Rental, *ledger.User, error) {
	r, err := s.store.RentalByID(ctx, rentalID)
	if err != nil && ledger.ErrorCode(err) != ledger.ENOTFOUND {
		return nil, nil, err // the store cannot say now: not a refusal
	}
	if err != nil || r.UserID != userID {
		return nil, nil, ledger.Errorc(ledger.ENOTFOUND, "rental_not_yours")
	}
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	return r, &u, nil
}

// Release asks the rental's agent to release the host (Release now). Two
// presses make one order; the ledger records the release when the agent
// confirms it. On a rental a connected platform still lists it acts
// through the platform's API instead (releaseAPI), with or without an
// agent. It returns the toast for the user. Errors: ENOTFOUND.
func (s *Scheduler) Release(ctx context.Context, userID, rentalID int64) (string, error) {
	toast, _, err := s.release(ctx, userID, rentalID)
	return toast, err
}

// release is Release now; under way is true when the rental is released
// or on its way (an order issued or open, a platform action started or
// running, a platform stop already done), false when nothing could act
// (no agent, no release command, the GPUs busy): the toast says why.
func (s *Scheduler) release(ctx context.Context, userID, rentalID int64) (toast string, underWay bool, err error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", false, err
	}
	lg := lang(u)
	if r.State() == ledger.Released {
		return text(lg, "t_already_released", r.Name), true, nil
	}
	if platform, canStop, ok := s.canAct(ctx, r); ok && !s.hasOpenAgentOrder(r.ID) {
		// A connected platform acts on the tap itself, agent or not.
		return s.releaseAPI(ctx, u, r, platform, canStop)
	}
	if o, ok := s.openOrder(r.ID); ok {
		return text(lg, "t_releasing_order", r.Name, o.ID, o.State), true, nil
	}
	var st ledger.AgentState
	seen := false
	if s.hub != nil {
		st, seen = s.hub.AgentState(r.ID)
	}
	if !seen {
		return text(lg, "t_no_agent", r.Name), false, nil
	}
	if !st.CanRelease {
		return text(lg, "t_no_command", r.Name), false, nil
	}
	o, err := s.hub.IssueOrder(ctx, r.ID, ledger.OrderRelease, ledger.OriginButton)
	if ledger.ErrorCode(err) == ledger.ECONFLICT {
		return text(lg, "t_releasing", r.Name), true, nil
	}
	if err != nil {
		return "", false, err
	}
	var evidence ledger.Message
	msg, private := tr(lg, "releasing", r.Name), ""
	if len(st.Sessions) > 0 {
		// The user's own tap is a decision: nobody connected holds it,
		// but they hear who is there (a team's room how many; its owner's
		// private copy who, from where).
		evidence = ledger.Msg("e_tap_people", st.Sessions)
		if ledger.IsTeamLedger(u.ID) {
			private = msg + "\n" + tr(lg, "releasing_people", chat.RawHTML(view.SessionsText(lg, st.Sessions)))
			msg += "\n" + tr(lg, "releasing_people", chat.RawHTML(view.SessionsText(lg, hideSessions(st.Sessions))))
		} else {
			msg += "\n" + tr(lg, "releasing_people", chat.RawHTML(view.SessionsText(lg, st.Sessions)))
		}
	}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_release_pressed", o.ID), evidence)
	c := s.orderCard(ctx, u, r)
	if err := s.sendCardPriv(ctx, u, &c, msg, private, nil, c.MessageID == 0, true); err != nil {
		// The order is issued: the release is under way all the same.
		return "", true, err
	}
	return text(lg, "t_release_ord", r.Name), true, nil
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
	lg := lang(u)
	c, ok := s.cardOf(ctx, userID, rentalID, messageID)
	if !ok {
		return text(lg, "t_nothing_snooze"), nil
	}
	now := s.now()
	c.SnoozeUntil = now.Add(SnoozeFor)
	c.LastAt = now
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_snooze_pressed"), ledger.Msg("e_until", c.SnoozeUntil))
	msg := stripNote(c.Text) + "\n" + tr(lg, "snoozed_until", clock(u, c.SnoozeUntil))
	if err := s.sendCard(ctx, u, &c, msg, idleButtons(lg, r), false, false); err != nil {
		return "", err
	}
	return text(lg, "t_snoozed", clock(u, c.SnoozeUntil)), nil
}

// Keep stops the reminders and any automatic action for this incident.
func (s *Scheduler) Keep(ctx context.Context, userID, rentalID int64, messageID int) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	lg := lang(u)
	c, ok := s.cardOf(ctx, userID, rentalID, messageID)
	if !ok {
		return text(lg, "t_ok"), nil
	}
	c.Kept = true
	if c.Kind != ledger.CardIdle {
		c.Closed = true
	}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_keep_pressed"), ledger.Msg("e_card", c.Kind))
	msg := stripNote(c.Text) + "\n" + tr(lg, "kept")
	if err := s.sendCard(ctx, u, &c, msg, nil, false, false); err != nil {
		return "", err
	}
	return text(lg, "t_kept", r.Name), nil
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
	r, u, le, toast, err := s.editLease(ctx, userID, rentalID, func(le *ledger.LeaseEnd) {
		base := le.EndsAt
		if now := s.now(); base.Before(now) {
			base = now
		}
		le.EndsAt = base.Add(ExtendBy)
	})
	if r == nil || err != nil {
		return toast, err
	}
	lg := lang(u)
	if c, ok, _ := s.openCard(ctx, r.ID, ledger.CardLease); ok && !c.Closed {
		c.Closed = true
		s.sendCard(ctx, u, &c, tr(lg, "lease_now_ends", r.Name, clock(u, le.EndsAt)), nil, false, false)
	}
	return text(lg, "t_extended", clock(u, le.EndsAt)), nil
}

// ReleaseAtEnd has the rental's agent release it at the lease's end (the
// agent enforces the deadline itself, and refuses while busy).
func (s *Scheduler) ReleaseAtEnd(ctx context.Context, userID, rentalID int64) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, le, toast, err := s.editLease(ctx, userID, rentalID, func(le *ledger.LeaseEnd) { le.ReleaseAtEnd = true })
	if r == nil || err != nil {
		return toast, err
	}
	lg := lang(u)
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_at_end_pressed"), ledger.Msg("e_lease_ends", le.EndsAt))
	if c, ok, _ := s.openCard(ctx, r.ID, ledger.CardLease); ok && !c.Closed {
		s.sendCard(ctx, u, &c, tr(lg, "lease_release_at", r.Name, clock(u, le.EndsAt)),
			[][]button{{{text(lg, "btn_extend"), ActExtend, r.ID}}}, false, false)
	}
	return text(lg, "t_release_at", clock(u, le.EndsAt)), nil
}

// editLease applies change to the user's rental's lease end, stores it and
// has the hub re-read it; the caller holds the rental's lock. A nil rental
// with a nil error means there is no lease: toast says so.
func (s *Scheduler) editLease(ctx context.Context, userID, rentalID int64, change func(*ledger.LeaseEnd)) (*ledger.Rental, *ledger.User, ledger.LeaseEnd, string, error) {
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return nil, nil, ledger.LeaseEnd{}, "", err
	}
	stored, ok, err := s.store.LeaseEnd(ctx, r.ID)
	if err != nil {
		return nil, nil, ledger.LeaseEnd{}, "", err
	}
	le, ok := ledger.LeaseEndOf(r, stored, ok)
	if !ok {
		return nil, nil, ledger.LeaseEnd{}, text(lang(u), "t_no_lease", r.Name), nil
	}
	change(&le)
	if err := s.store.SetLeaseEnd(ctx, le); err != nil {
		return nil, nil, ledger.LeaseEnd{}, "", err
	}
	if s.hub != nil {
		s.hub.Refresh(r.ID)
	}
	return r, u, le, "", nil
}

// MarkReleased records that the user released a rental by hand (a rental
// without an agent, or a silent one), now. key makes it idempotent.
func (s *Scheduler) MarkReleased(ctx context.Context, userID, rentalID int64, key string) (string, error) {
	return s.markReleased(ctx, ledger.Action{UserID: userID, At: s.now(), Key: key, Via: ledger.ViaButton}, rentalID)
}

// markReleased is MarkReleased acting as a (a.By: the member of a team
// who pressed, whom the store checks and journals).
func (s *Scheduler) markReleased(ctx context.Context, a ledger.Action, rentalID int64) (string, error) {
	defer s.lockRental(rentalID)()
	userID := a.UserID
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	lg := lang(u)
	if r.State() == ledger.Released {
		return text(lg, "t_already_released", r.Name), nil
	}
	now := s.now()
	a.At = now
	// A press of the card's button: /undo asks before reversing it.
	_, err = s.store.AppendEvent(ctx, a, r.Name, ledger.Event{Kind: ledger.EventRelease, At: now})
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
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_marked_released"), ledger.Msg("e_recorded_at", now))
	for _, k := range []ledger.CardKind{ledger.CardSilent, ledger.CardLongRun, ledger.CardLease, ledger.CardIdle} {
		if c, ok, _ := s.openCard(ctx, r.ID, k); ok && !c.Closed && c.MessageID != 0 {
			c.Closed = true
			s.sendCard(ctx, u, &c, tr(lg, "released_by_hand", r.Name, clock(u, now)), nil, false, false)
		}
	}
	return text(lg, "t_released", r.Name, clock(u, now)), nil
}

// The agents' events (Handle): what the agents report that the user should hear.

// jobFinished sends "training finished (exit 0, 3h12m, ¥6.20). Release?".
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
	lg := lang(&u)
	what := tr(lg, "the_job")
	msg := tr(lg, "job_finished", r.Name, chat.RawHTML(what), j.ExitCode, chat.FormatDuration(j.Duration, lg), cost.Format())
	private := ""
	if j.Command != "" {
		// The command line may hold a token (HF_TOKEN=…): a team's room
		// gets "the job", the owner's private copy the command.
		cmd := "<code>" + chat.Escape(clip.Bytes(j.Command, 60, "…")) + "</code>"
		withCmd := tr(lg, "job_finished", r.Name, chat.RawHTML(cmd), j.ExitCode, chat.FormatDuration(j.Duration, lg), cost.Format())
		if ledger.IsTeamLedger(u.ID) {
			private = withCmd
		} else {
			msg = withCmd
		}
	}
	return s.sendCardPriv(ctx, &u, &c, msg, private, jobButtons(lg, r), true, false)
}

// onGPUMismatch tells the user once that the agent sees other GPUs than
// the rental as logged.
func (s *Scheduler) onGPUMismatch(ctx context.Context, r *ledger.Rental, d ledger.GPUDiff) {
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		s.log.Error("scheduler: gpu mismatch", "rental", r.ID, "err", err)
		return
	}
	lg := lang(&u)
	var parts []string
	if d.SeenModel != "" {
		parts = append(parts, tr(lg, "gpu_model_differs", d.SeenModel, d.LoggedModel))
	}
	if d.PaidCount != 0 {
		parts = append(parts, tr(lg, "gpu_count_short", d.SeenCount, d.PaidCount))
	}
	what := strings.Join(parts, tr(lg, "gpu_mismatch_sep"))
	s.decide(ctx, &u, r, ledger.DecisionMismatch, ledger.Msg("d_mismatch"), gpuDiffMsg(d))
	if err := s.notifyText(ctx, &u, tr(lg, "gpu_mismatch", r.Name, chat.RawHTML(what))); err != nil {
		s.log.Error("scheduler: gpu mismatch", "rental", r.ID, "err", err)
	}
}

// gpuDiffMsg is the decision log's evidence of a GPU mismatch: the facts
// as arguments, worded when /why is read.
func gpuDiffMsg(d ledger.GPUDiff) ledger.Message {
	var parts []ledger.Message
	if d.SeenModel != "" {
		parts = append(parts, ledger.Msg("e_gpu_model", d.SeenModel, d.LoggedModel))
	}
	if d.PaidCount != 0 {
		parts = append(parts, ledger.Msg("e_gpu_count", d.SeenCount, d.PaidCount))
	}
	switch len(parts) {
	case 0:
		return ledger.Message{}
	case 1:
		return parts[0]
	}
	return ledger.Msg("e_both", parts[0], parts[1])
}

// onReportAfterRelease flags a released rental whose agent keeps reporting.
func (s *Scheduler) onReportAfterRelease(ctx context.Context, r *ledger.Rental, at time.Time) {
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return
	}
	rel, _ := r.ReleasedAt()
	c, seen, err := s.cardFor(ctx, &u, r, ledger.CardUnconfirmed, strconv.FormatInt(rel.Unix(), 10))
	if err != nil || seen {
		return
	}
	s.decide(ctx, &u, r, ledger.DecisionUnconfirm, ledger.Msg("d_unconfirmed"), ledger.Msg("e_reported_after", at, rel))
	if err := s.sendCard(ctx, &u, &c, tr(lang(&u), "unconfirmed", r.Name, clock(&u, rel)), nil, true, true); err != nil {
		s.log.Error("scheduler: release not confirmed", "rental", r.ID, "err", err)
	}
}

// orderUpdated shows an order's progress on its card and records the
// outcome for /why.
func (s *Scheduler) orderUpdated(ctx context.Context, o ledger.Order, r *ledger.Rental) error {
	defer s.lockRental(r.ID)()
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	verb := "release"
	if o.Action == ledger.OrderStop {
		verb = "stop"
	}
	lg := lang(&u)
	var text string
	switch o.State {
	case ledger.OrderPending:
		return nil
	case ledger.OrderStarted:
		text = tr(lg, "order_started", r.Name, chat.RawHTML(tr(lg, "act_"+verb)))
	case ledger.OrderDone:
		at := o.UpdatedAt
		if r != nil && len(r.Events) > 0 {
			at = r.LastEventAt()
		}
		text = tr(lg, "order_done", r.Name, chat.RawHTML(tr(lg, "done_"+verb)), clock(&u, at))
	default:
		// "was not released" / "未能释放": the participle in English, the verb in Chinese.
		how := tr(lg, "done_"+verb)
		if lg == chat.LangZH {
			how = tr(lg, "act_"+verb)
		}
		text = tr(lg, "order_not_done", r.Name, chat.RawHTML(how), view.OutcomeNotesText(lg, o.Outcome, o.Message, o.Notes))
	}
	if o.Outcome == ledger.OutcomeRefusedPeople {
		s.mu.Lock()
		s.peopleRefused[r.ID] = o.UpdatedAt
		s.mu.Unlock()
	}
	if !o.State.Open() {
		kind := ledger.DecisionOutcome
		s.decide(ctx, &u, r, kind, ledger.Msg("d_outcome", ledger.AutoAction(verb), o.ID, o.State), ledger.Msg(view.OutcomeKey, string(o.Outcome), clip.Bytes(o.Message, 200, "…"), view.NotesMsg(o.Notes)))
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
			btns = idleButtons(lg, r)
		}
	}
	return s.sendCard(ctx, &u, &c, text, btns, o.State.Open() == false && o.State != ledger.OrderDone, true)
}
