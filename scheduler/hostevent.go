package scheduler

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// profileRule is what a shutdown from inside does to billing on the
// rental's platform.
func profileRule(r *ledger.Rental) ledger.ShutdownRule {
	if p, ok := ledger.LookupProfile(r.Platform); ok {
		return p.Shutdown
	}
	return ledger.ShutdownUnknown
}

// stopKey and bootKey make the stops and resumes a host's shutdown and
// boot record apply once, whether the report is handled twice or the
// user's button makes the same change.
func stopKey(rentalID int64, at time.Time) string {
	return "shutdown:" + strconv.FormatInt(rentalID, 10) + ":" + strconv.FormatInt(at.Unix(), 10)
}

func bootKey(rentalID int64, at time.Time) string {
	return "boot:" + strconv.FormatInt(rentalID, 10) + ":" + strconv.FormatInt(at.Unix(), 10)
}

func (s *Scheduler) hostEvent(ctx context.Context, given *ledger.Rental, ev HostEvent) error {
	defer s.lockRental(given.ID)()
	r, err := s.store.RentalByID(ctx, given.ID)
	if err != nil {
		return err
	}
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	ev.Rule, ev.State = profileRule(r), r.State()
	for _, e := range r.Events {
		if e.Kind == ledger.EventStop && e.At.After(ev.LastStop) {
			ev.LastStop = e.At
		}
	}
	d := DecideHost(ev)
	lg := lang(&u)
	pname := platformIn(lg, r.Platform)
	switch d.Do {
	case HostNothing:
		return nil
	case HostRecordStop:
		if _, dup, err := s.recordStop(ctx, &u, r, d.From, time.Time{}); err != nil || dup {
			return err
		}
		s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_stop"), ledger.Msg("e_shutdown_stops", d.From, pname))
		return s.quietLine(ctx, &u, tr(lg, "host_stop_recorded", r.Name, s.when(&u, d.From), pname))
	case HostRecordBoot:
		if _, dup, err := s.recordResume(ctx, &u, r, d.To); err != nil || dup {
			return err
		}
		s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_resume"), ledger.Msg("e_boot", d.To, ev.LastSeen))
		return s.quietLine(ctx, &u, tr(lg, "host_resume_recorded", r.Name, s.when(&u, d.To)))
	case HostRecordCycle:
		if _, dup, err := s.recordStop(ctx, &u, r, d.From, d.To); err != nil || dup {
			return err
		}
		s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_cycle"), ledger.Msg("e_stop_range", d.From, d.To))
		from, to := s.whenSpan(&u, d.From, d.To)
		return s.quietLine(ctx, &u, tr(lg, "host_cycle_recorded", r.Name, from, to, pname))
	}
	// Ask: one host card per incident (the shutdown, or the boot).
	incident := "boot:" + strconv.FormatInt(d.To.Unix(), 10)
	if d.Do == HostAskStop {
		incident = "shutdown:" + strconv.FormatInt(d.From.Unix(), 10)
	}
	old, open, err := s.openCard(ctx, r.ID, CardHost)
	if err != nil {
		return err
	}
	if open && old.Incident == incident {
		return nil
	}
	if open && !old.Closed && old.MessageID != 0 {
		// An earlier question about the same host (its shutdown) is
		// answered by the new one: its buttons go.
		old.Closed = true
		if err := s.sendCard(ctx, &u, &old, old.Text, nil, false, true); err != nil {
			s.log.Error("scheduler: close host card", "rental", r.ID, "err", err)
		}
	}
	var msg string
	rid := strconv.FormatInt(r.ID, 10)
	var rows [][]ebutton
	from := strconv.FormatInt(d.From.Unix(), 10)
	if d.Do == HostAskStop {
		msg = tr(lg, "host_ask_shutdown", r.Name, s.when(&u, d.From))
		rows = [][]ebutton{{{text(lg, "btn_stopped_at", s.when(&u, d.From)), ActHostStopped, rid + "." + from + ".0"},
			{text(lg, "btn_still_billing"), ActHostBilled, rid}}}
	} else {
		fromAt, toAt := s.whenSpan(&u, d.From, d.To)
		if ev.ShutdownAt.IsZero() {
			msg = tr(lg, "host_ask_gap", r.Name, fromAt, toAt)
		} else {
			msg = tr(lg, "host_ask_cycle", r.Name, fromAt, toAt)
		}
		rows = [][]ebutton{{{text(lg, "btn_stopped_range", fromAt, toAt), ActHostStopped,
			rid + "." + from + "." + strconv.FormatInt(d.To.Unix(), 10)}, {text(lg, "btn_it_billed"), ActHostBilled, rid}}}
	}
	msg += " " + ruleText(lg, ev.Rule, pname)
	c := ledger.Card{UserID: u.ID, RentalID: r.ID, Kind: CardHost, Incident: incident}
	mid, err := s.sendE(ctx, &u, 0, msg, rows, ledger.InQuietHours(&u, s.now()))
	if err != nil {
		return err
	}
	c.MessageID, c.Text, c.FirstAt, c.LastAt = mid, msg, s.now(), s.now()
	if _, err := s.store.SaveCard(ctx, c); err != nil {
		return err
	}
	what := ledger.Msg("e_shutdown_ask", d.From, pname)
	if d.Do == HostAskCycle {
		what = ledger.Msg("e_down_ask", d.From, d.To)
	}
	s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_host_ask"), what)
	return nil
}

// ruleText says what the profile knows of a shutdown from inside.
func ruleText(lg string, rule ledger.ShutdownRule, pname string) string {
	switch {
	case rule == ledger.ShutdownBills:
		return tr(lg, "rule_bills", pname)
	case pname == "":
		return tr(lg, "rule_unknown_platform")
	}
	return tr(lg, "rule_unknown", pname)
}

// quietLine sends one line without a sound.
func (s *Scheduler) quietLine(ctx context.Context, u *ledger.User, msg string) error {
	_, err := s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: msg, Silent: true})
	return err
}

// recordStop records a stop at from (and a resume at to, when not zero)
// as the user's undoable actions, keyed so that each applies once, and
// has the hub read the rental again. It returns the rental after the
// change; dup is true when the change was recorded before (a report or a
// press handled twice): nothing more is to be said. The caller holds the
// rental's lock.
func (s *Scheduler) recordStop(ctx context.Context, u *ledger.User, r *ledger.Rental, from, to time.Time) (got *ledger.Rental, dup bool, err error) {
	now := s.now()
	got, err = s.store.AppendEvent(ctx, ledger.Action{UserID: u.ID, At: now, Key: stopKey(r.ID, from)}, r.Name, ledger.Event{Kind: ledger.EventStop, At: from})
	if ledger.ErrorCode(err) == ledger.EDUPLICATE {
		return r, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.changed(ctx, got, from)
	if !to.IsZero() && got.State() == ledger.Stopped {
		return s.recordResume(ctx, u, got, to)
	}
	return got, false, nil
}

func (s *Scheduler) recordResume(ctx context.Context, u *ledger.User, r *ledger.Rental, to time.Time) (*ledger.Rental, bool, error) {
	got, err := s.store.AppendEvent(ctx, ledger.Action{UserID: u.ID, At: s.now(), Key: bootKey(r.ID, to)}, r.Name, ledger.Event{Kind: ledger.EventResume, At: to})
	if ledger.ErrorCode(err) == ledger.EDUPLICATE {
		return r, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.changed(ctx, got, time.Time{})
	return got, false, nil
}

// changed tells the hub the rental changed (it caches rentals), and ends
// the idle time at a stop.
func (s *Scheduler) changed(ctx context.Context, r *ledger.Rental, stoppedAt time.Time) {
	if s.hub == nil {
		return
	}
	s.hub.Refresh(r.ID)
	if !stoppedAt.IsZero() && r.State() != ledger.Running {
		if err := s.hub.CloseIdleAt(ctx, r.ID, stoppedAt); err != nil {
			s.log.Error("scheduler: close idle interval", "rental", r.ID, "err", err)
		}
	}
}

// parseRange reads "RID.FROM.TO" (unix seconds; TO 0: no resume).
func parseRange(payload string) (rid int64, from, to time.Time, ok bool) {
	parts := strings.Split(payload, ".")
	if len(parts) != 3 {
		return 0, from, to, false
	}
	var n [3]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			return 0, from, to, false
		}
		n[i] = v
	}
	if n[0] == 0 || n[1] == 0 || n[2] != 0 && n[2] < n[1] {
		return 0, from, to, false
	}
	from = time.Unix(n[1], 0).UTC()
	if n[2] != 0 {
		to = time.Unix(n[2], 0).UTC()
	}
	return n[0], from, to, true
}

// pressStopped records what the user said: the host was stopped at FROM
// (until TO). It re-checks the rental: a rental no longer running at the
// stop is left as it is.
func (s *Scheduler) pressStopped(ctx context.Context, u *ledger.User, p chat.ButtonPress) (string, error) {
	lg := lang(u)
	rid, from, to, ok := parseRange(p.Payload)
	if !ok {
		return text(lg, "t_broken"), nil
	}
	defer s.lockRental(rid)()
	r, _, err := s.ownRental(ctx, u.ID, rid)
	if err != nil {
		return "", err
	}
	if r.State() != ledger.Running {
		return text(lg, "t_host_not_running", r.Name), nil
	}
	got, dup, err := s.recordStop(ctx, u, r, from, to)
	if err != nil {
		return "", err
	}
	if dup {
		return text(lg, "t_host_not_running", r.Name), nil
	}
	var msg string
	if to.IsZero() {
		msg = tr(lg, "host_stopped_done", got.Name, s.when(u, from))
		s.decide(ctx, u, got, ledger.DecisionUser, ledger.Msg("d_host_stopped_pressed"), ledger.Msg("e_stop_at", from))
	} else {
		fromAt, toAt := s.whenSpan(u, from, to)
		msg = tr(lg, "host_cycle_done", got.Name, fromAt, toAt)
		s.decide(ctx, u, got, ledger.DecisionUser, ledger.Msg("d_host_stopped_pressed"), ledger.Msg("e_stop_range", from, to))
	}
	s.closeHostCard(ctx, u, got, p.Update.MessageID, msg)
	return text(lg, "t_recorded"), nil
}

// pressBilled records nothing: the user says the host billed.
func (s *Scheduler) pressBilled(ctx context.Context, u *ledger.User, p chat.ButtonPress) (string, error) {
	lg := lang(u)
	rid, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || rid <= 0 {
		return text(lg, "t_broken"), nil
	}
	defer s.lockRental(rid)()
	r, _, err := s.ownRental(ctx, u.ID, rid)
	if err != nil {
		return "", err
	}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_host_billed_pressed"), ledger.Message{})
	s.closeHostCard(ctx, u, r, p.Update.MessageID, tr(lg, "host_billed_done", r.Name))
	return text(lg, "t_nothing_recorded"), nil
}

// closeHostCard edits the host card the press came from to msg, without
// buttons.
func (s *Scheduler) closeHostCard(ctx context.Context, u *ledger.User, r *ledger.Rental, messageID int, msg string) {
	if messageID == 0 {
		return
	}
	c, err := s.store.CardByMessage(ctx, u.ID, messageID)
	if err != nil || c.RentalID != r.ID {
		return
	}
	c.Closed = true
	if err := s.sendCard(ctx, u, &c, msg, nil, false, true); err != nil {
		s.log.Error("scheduler: host card", "rental", r.ID, "err", err)
	}
}
