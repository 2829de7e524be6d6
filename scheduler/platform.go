package scheduler

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Platforms is what the scheduler needs of the platform connectors
// (connsync.Syncer): whether a rental is an instance the user's connected
// platform still lists, stopping or terminating it through the
// platform's API, and the reconciliation for the nightly summary. The
// scheduler names only these methods, so it links none of the sync's
// internals.
type Platforms interface {
	// CanAct reports whether r is a live instance of a connected platform
	// (platform is its key) and whether that platform can stop it rather
	// than only terminate it. It makes no platform call.
	CanAct(ctx context.Context, r *ledger.Rental) (platform string, canStop bool, ok bool)
	// Act stops (terminate false) or terminates r's instance and re-reads
	// the platform until it lists the new state, within a bound; the
	// ledger records a confirmed change itself.
	Act(ctx context.Context, r *ledger.Rental, terminate bool) (ledger.PlatformActResult, error)
	// Reconcile compares the ledger with each connected platform over
	// [from, to).
	Reconcile(ctx context.Context, userID int64, from, to time.Time) ([]ledger.Reconciliation, error)
	// AutoWay says how an automatic stop or release of r would be
	// carried out now (ledger.PlanAuto): through the API only as far as
	// r's agent has shown that it runs on the instance the platform
	// lists; WayAgent when r is not a live instance of a connected
	// platform. It makes no platform call.
	AutoWay(ctx context.Context, r *ledger.Rental, action ledger.AutoAction) ledger.AutoWay
}

// Button actions that act through a platform's API. The payload is the
// rental ID.
const (
	// ActPStop: the silent-agent alert's [Stop on RunPod]: a tap, so no
	// agent checks (the agent cannot answer).
	ActPStop = "pstop"
	// ActPTerm: terminate on the platform: the bot's /release card, and
	// the silent alert on a platform that can only terminate.
	ActPTerm = "pterm"
)

// actTimeout bounds one action through the API, its re-reads included:
// the sync's own ConfirmWithin bound (3 min by default) plus its calls.
const actTimeout = 10 * time.Minute

// canAct is Platforms.CanAct, false when no platforms are configured.
func (s *Scheduler) canAct(ctx context.Context, r *ledger.Rental) (platform string, canStop, ok bool) {
	if s.cfg.Platforms == nil || r == nil || r.State() == ledger.Released {
		return "", false, false
	}
	return s.cfg.Platforms.CanAct(ctx, r)
}

// acting reports whether an action through the API is in flight for the
// rental.
func (s *Scheduler) acting(rentalID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[rentalID]
}

// openOrder returns the rental's open agent order. An action through a
// platform's API in flight counts as one (a zero Order), so the idle
// check neither closes its card nor acts again meanwhile.
func (s *Scheduler) openOrder(rentalID int64) (ledger.Order, bool) {
	if s.acting(rentalID) {
		return ledger.Order{}, true
	}
	if s.hub == nil {
		return ledger.Order{}, false
	}
	return s.hub.OpenOrder(rentalID)
}

// actTarget is where an action's outcome is shown: the rental's card of
// kind, or else the message messageID (a card the scheduler does not
// keep, like the bot's /release card), or else a new message.
type actTarget struct {
	kind      ledger.CardKind
	messageID int
	began     time.Time // when the action was sent, for "after 3 min"
}

// releaseAPI is Release now on a rental a connected platform can act on:
// the tap is the user's decision, so it goes through without an agent;
// with an agent whose fresh heartbeat says the GPUs are working it is
// refused, as the agent itself refuses a busy release. It stops where the
// platform can stop (the disk is kept and still bills), else terminates.
// The caller holds the rental's lock.
func (s *Scheduler) releaseAPI(ctx context.Context, u *ledger.User, r *ledger.Rental, platform string, canStop bool) (toast string, underWay bool, err error) {
	lg := lang(u)
	name := platformName(platform)
	if s.acting(r.ID) {
		return text(lg, "t_pact_inflight", r.Name, name), true, nil
	}
	if s.hub != nil {
		if st, seen := s.hub.AgentState(r.ID); seen && st.Fresh(s.now(), s.cfg.FreshWithin) && (st.Verdict == ledger.VerdictBusy || st.Job.Running) {
			s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_pact_pressed", ledger.AutoAction("stop"), name), ledger.Msg("e_pact_busy"))
			return text(lg, "t_pact_busy", r.Name), false, nil
		}
	}
	terminate := !canStop
	if !terminate && r.State() == ledger.Stopped {
		return text(lg, "t_pact_stopped_already", r.Name, name), true, nil
	}
	c := s.orderCard(ctx, u, r)
	toast, err = s.startAct(ctx, u, r, platform, terminate, ledger.DecisionUser, &c, actTarget{kind: c.Kind})
	return toast, err == nil, err
}

// PlatformAct is a tap on [Stop on RunPod] (the silent alert) or
// [Terminate on RunPod] (the bot's /release card): it acts through the
// API with no agent checks, answers at once and edits the card the
// button was on with the outcome. Errors: ENOTFOUND.
func (s *Scheduler) PlatformAct(ctx context.Context, userID, rentalID int64, terminate bool, messageID int) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	lg := lang(u)
	if r.State() == ledger.Released {
		return text(lg, "t_already_released", r.Name), nil
	}
	platform, canStop, ok := s.canAct(ctx, r)
	if !ok {
		return text(lg, "t_pact_not_live", r.Name), nil
	}
	name := platformName(platform)
	if s.acting(r.ID) {
		return text(lg, "t_pact_inflight", r.Name, name), nil
	}
	if !terminate && !canStop {
		return text(lg, "t_pact_cannot_stop", r.Name, name), nil
	}
	if !terminate && r.State() == ledger.Stopped {
		return text(lg, "t_pact_stopped_already", r.Name, name), nil
	}
	tgt := actTarget{messageID: messageID}
	var card *ledger.Card
	if messageID != 0 {
		if c, err := s.store.CardByMessage(ctx, userID, messageID); err == nil && c.RentalID == r.ID {
			card, tgt.kind = &c, c.Kind
		}
	}
	return s.startAct(ctx, u, r, platform, terminate, ledger.DecisionUser, card, tgt)
}

// autoAPI takes the automatic action through the platform's API instead
// of an agent order; the caller has made ledger.AutoDecide's checks
// (fresh heartbeat, not busy, nobody holding it). The API acts only as
// the rule allows (Platforms.AutoWay): a terminate needs an agent whose
// reports show it runs on the instance, a stop too unless the policy is
// stop and the platform keeps the disk; otherwise the idle card asks for
// a tap (askInstead). A "stop" policy on a platform that can only
// terminate does nothing and tells the user once. handled false: the
// rental is not live on a connected platform, order through the agent.
func (s *Scheduler) autoAPI(ctx context.Context, u *ledger.User, r *ledger.Rental, c *ledger.Card, action ledger.OrderAction, evidence ledger.Message) (handled bool, err error) {
	w := s.autoWay(ctx, r, ledger.AutoAction(action))
	platform := w.Platform
	name := platformName(platform)
	switch w.Kind {
	case ledger.WayAgent:
		return false, nil
	case ledger.WayCannotStop:
		fresh, err := s.store.MarkNotice(ctx, u.ID, "pact_nostop:"+strconv.FormatInt(r.ID, 10), s.now())
		if err != nil || !fresh {
			return true, err
		}
		s.decide(ctx, u, r, ledger.DecisionHold, ledger.Msg("d_pact_cannot_stop", name), evidence)
		return true, s.notifyText(ctx, u, tr(lang(u), "pact_cannot_stop", r.Name, name))
	case ledger.WayAsk:
		return true, s.askInstead(ctx, u, r, c, action, w)
	}
	terminate := w.Kind == ledger.WayAPITerminate
	if s.acting(r.ID) {
		return true, nil
	}
	// Once per idle streak: an action the platform did not confirm is
	// told on the card and not sent again every tick.
	fresh, err := s.store.MarkNotice(ctx, u.ID, "pact_auto:"+strconv.FormatInt(r.ID, 10)+":"+c.Incident, s.now())
	if err != nil || !fresh {
		return true, err
	}
	if w.Uncorroborated {
		s.decide(ctx, u, r, ledger.DecisionOrder, ledger.Msg("d_pact_auto_unc", name), view.WayEvidence(r.Name, w))
	} else {
		s.decide(ctx, u, r, ledger.DecisionOrder, ledger.Msg("d_pact_auto", ledger.AutoAction(action), name), evidence)
	}
	_, err = s.startAct(ctx, u, r, platform, terminate, ledger.DecisionOrder, c, actTarget{kind: c.Kind})
	return true, err
}

// startAct shows "Stopping on RunPod…" on card (nil: the target message
// or a new one) and runs the action in a goroutine bound to the
// scheduler's Run, which edits the card with the outcome. One action per
// rental at a time. It returns the toast.
func (s *Scheduler) startAct(ctx context.Context, u *ledger.User, r *ledger.Rental, platform string, terminate bool, kind ledger.DecisionKind, card *ledger.Card, tgt actTarget) (string, error) {
	lg := lang(u)
	name := platformName(platform)
	s.mu.Lock()
	if s.inFlight[r.ID] {
		s.mu.Unlock()
		return text(lg, "t_pact_inflight", r.Name, name), nil
	}
	s.inFlight[r.ID] = true
	s.mu.Unlock()
	tgt.began = s.now()
	verb := "stopping"
	if terminate {
		verb = "terminating"
	}
	if kind == ledger.DecisionUser {
		what := ledger.AutoAction("stop")
		if terminate {
			what = ledger.AutoAction("release")
		}
		s.decide(ctx, u, r, kind, ledger.Msg("d_pact_pressed", what, name), ledger.Message{})
	}
	msg := tr(lg, "pact_"+verb, r.Name, name)
	var err error
	switch {
	case card != nil:
		// An automatic action is a new message (it makes a sound); a tap
		// edits the card it was on.
		err = s.sendCard(ctx, u, card, msg, nil, card.MessageID == 0 || kind == ledger.DecisionOrder, true)
		tgt.kind = card.Kind
	case tgt.messageID != 0:
		_, err = s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), EditMessageID: tgt.messageID, Text: msg})
	}
	if err != nil {
		s.log.Error("scheduler: show the action", "rental", r.ID, "err", err)
	}
	s.acts.Add(1)
	go s.runAct(u.ID, r, platform, terminate, tgt)
	return text(lg, "t_pact_"+verb, name), nil
}

// runAct runs one action through the API and shows its outcome.
func (s *Scheduler) runAct(userID int64, r *ledger.Rental, platform string, terminate bool, tgt actTarget) {
	defer s.acts.Done()
	defer func() {
		s.mu.Lock()
		delete(s.inFlight, r.ID)
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(s.actCtx, actTimeout)
	res, err := s.cfg.Platforms.Act(ctx, r, terminate)
	cancel()
	// The outcome is shown even when the scheduler is stopping.
	octx, ocancel := context.WithTimeout(context.WithoutCancel(s.actCtx), 30*time.Second)
	defer ocancel()
	if err := s.actDone(octx, userID, r.ID, platform, terminate, res, err, tgt); err != nil {
		s.log.Error("scheduler: action through the API", "rental", r.ID, "platform", platform, "err", err)
	}
}

// actDone records and shows an action's outcome.
func (s *Scheduler) actDone(ctx context.Context, userID, rentalID int64, platform string, terminate bool, res ledger.PlatformActResult, actErr error, tgt actTarget) error {
	defer s.lockRental(rentalID)()
	u, err := s.store.User(ctx, userID)
	if err != nil {
		return err
	}
	r, err := s.store.RentalByID(ctx, rentalID)
	if err != nil {
		return err
	}
	lg := lang(&u)
	name := platformName(platform)
	what := ledger.AutoAction("stop")
	done := "done_stop"
	if terminate {
		what, done = ledger.AutoAction("release"), "done_terminate"
	}
	var msg string
	closed := false
	switch {
	case actErr != nil && s.actCtx.Err() != nil:
		msg = tr(lg, "pact_interrupted", r.Name, name)
		s.decide(ctx, &u, r, ledger.DecisionOutcome, ledger.Msg("d_pact_failed", what, name), ledger.Msg("e_text", "interrupted by a shutdown"))
	case actErr != nil:
		detail := clip.Bytes(actErr.Error(), 300, "…")
		// "was not stopped" / "未能关机": the participle in English, the verb in Chinese.
		how := tr(lg, done)
		if lg == chat.LangZH {
			how = tr(lg, "act_"+strings.TrimPrefix(done, "done_"))
		}
		msg = tr(lg, "pact_failed", r.Name, chat.RawHTML(how), name, detail)
		s.decide(ctx, &u, r, ledger.DecisionOutcome, ledger.Msg("d_pact_failed", what, name), ledger.Msg("e_text", detail))
	case !res.Confirmed:
		listed := res.RawState
		if listed == "" {
			listed = res.State
		}
		tail := ""
		if res.Detail != "" {
			tail = ": " + clip.Bytes(res.Detail, 300, "…")
		}
		msg = tr(lg, "pact_unconfirmed", r.Name, name, listed, chat.FormatDuration(s.now().Sub(tgt.began).Round(time.Second), lg), tail)
		s.decide(ctx, &u, r, ledger.DecisionUnconfirm, ledger.Msg("d_pact_unconfirmed", what, name), ledger.Msg("e_pact_listed", listed, clip.Bytes(res.Detail, 200, "…")))
	default:
		closed = true
		at := res.At
		note := ""
		if res.Approximate {
			note = tr(lg, "pact_approx")
		}
		key, evAt := "pact_stopped", "e_pact_at"
		if res.Approximate {
			evAt = "e_pact_at_approx"
		}
		if res.State == "terminated" {
			key = "pact_terminated"
		}
		msg = tr(lg, key, r.Name, name, clock(&u, at), chat.RawHTML(note))
		s.decide(ctx, &u, r, ledger.DecisionOutcome, ledger.Msg("d_pact_done", what, name), ledger.Msg(evAt, at))
		s.afterPlatformChange(ctx, r, at, key == "pact_terminated")
	}
	return s.showOutcome(ctx, &u, r, msg, closed, tgt)
}

// afterPlatformChange tells the hub of a stop or release the platform
// confirmed: the idle time ends there, and a released rental's tokens are
// revoked.
func (s *Scheduler) afterPlatformChange(ctx context.Context, r *ledger.Rental, at time.Time, released bool) {
	if released {
		if err := s.store.RevokeTokens(ctx, r.ID, at); err != nil {
			s.log.Error("scheduler: revoke tokens", "rental", r.ID, "err", err)
		}
	}
	if s.hub != nil {
		s.hub.Refresh(r.ID)
		if err := s.hub.CloseIdleAt(ctx, r.ID, at); err != nil {
			s.log.Error("scheduler: close idle interval", "rental", r.ID, "err", err)
		}
	}
}

// showOutcome edits the action's card (or message) with msg.
func (s *Scheduler) showOutcome(ctx context.Context, u *ledger.User, r *ledger.Rental, msg string, closed bool, tgt actTarget) error {
	if tgt.kind != "" {
		c, ok, err := s.openCard(ctx, r.ID, tgt.kind)
		if err == nil && ok && c.MessageID != 0 {
			c.Closed = c.Closed || closed
			return s.sendCard(ctx, u, &c, msg, nil, false, true)
		}
	}
	m := chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: msg}
	if tgt.messageID != 0 {
		m.EditMessageID = tgt.messageID
	}
	_, err := s.send(ctx, m)
	return err
}

// silentButtons are the silent alert's buttons: I released it, and the
// way out through the API when the platform can act.
func (s *Scheduler) silentButtons(ctx context.Context, lg string, r *ledger.Rental) [][]button {
	btns := releasedButtons(lg, r)
	if platform, canStop, ok := s.canAct(ctx, r); ok {
		b := button{text(lg, "btn_pstop", platformName(platform)), ActPStop, r.ID}
		if !canStop {
			b = button{text(lg, "btn_pterm", platformName(platform)), ActPTerm, r.ID}
		}
		btns[0] = append(btns[0], b)
	}
	return btns
}

// reconciliations are the nightly summary's reconciliation of each
// connected platform for the month so far; nil when none is connected.
func (s *Scheduler) reconciliations(ctx context.Context, u *ledger.User, asOf time.Time) []ledger.Reconciliation {
	if s.cfg.Platforms == nil {
		return nil
	}
	from, ok := view.MonthSoFar(asOf, u.Location())
	if !ok {
		return nil
	}
	rs, err := s.cfg.Platforms.Reconcile(ctx, u.ID, from, asOf)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			s.log.Error("scheduler: reconcile for the summary", "user", u.ID, "err", err)
		}
		return nil
	}
	return rs
}

// hasOpenAgentOrder reports whether the rental's agent has an order open
// (not an action through the API): a Release now pressed before the
// platform was connected is left to finish.
func (s *Scheduler) hasOpenAgentOrder(rentalID int64) bool {
	if s.hub == nil {
		return false
	}
	_, ok := s.hub.OpenOrder(rentalID)
	return ok
}
