package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// A team's limits (TeamStore.Limits) bound the running rate, the GPUs at
// once and the month's spend of the team, a member or a project, per
// currency. Each tick, a running rental in a scope over a bound gets an
// approval (TeamStore.OpenApproval: once per rental, scope, subject and
// bound, and for a month bound once per calendar month, kept in the
// store, so a restart does not ask again), a card to each admin in
// private with [Approve] [Stop it], and its owner is told. Nothing is
// stopped without an admin's press; an approval left pending an hour is
// reminded once, if its rental is still over that bound. One that no
// longer applies lapses (approval_lapse.go).

// Button actions of a team's cards. The payload is the approval's ID
// (ActApprove, ActStopIt) or the rental's (ActMine).
const (
	ActApprove = "tapr"  // approve a rental over a limit
	ActStopIt  = "tstop" // stop it: the approval is decided, then Release now
	ActMine    = "tmine" // "whose is it?" answered by the presser
)

// RemindApprovalAfter is how long an approval waits before its one
// reminder to the admins.
const RemindApprovalAfter = time.Hour

// teamChecks runs, each tick, what only a team's ledger has: the question
// about a rental with no owner, the limits, the approvals' reminders.
func (s *Scheduler) teamChecks(ctx context.Context, rentals []*ledger.Rental, users map[int64]*ledger.User) error {
	if s.teams() == nil {
		return nil
	}
	byTeam := map[int64][]*ledger.Rental{}
	var order []int64
	for _, r := range rentals {
		if !ledger.IsTeamLedger(r.UserID) {
			continue
		}
		if _, ok := byTeam[r.UserID]; !ok {
			order = append(order, r.UserID)
		}
		byTeam[r.UserID] = append(byTeam[r.UserID], r)
	}
	var errs []error
	// A team none of whose rentals is live may still hold pending
	// approvals: they lapse.
	if ids, err := s.teams().PendingApprovalTeams(ctx); err != nil {
		errs = append(errs, err)
	} else {
		for _, teamID := range ids {
			if id := ledger.TeamLedger(teamID); byTeam[id] == nil {
				byTeam[id] = []*ledger.Rental{}
				order = append(order, id)
			}
		}
	}
	for _, id := range order {
		if ctx.Err() != nil {
			break
		}
		u := users[id]
		if u == nil {
			uu, err := s.store.User(ctx, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			u = &uu
		}
		tv, ok := s.teamOf(ctx, id)
		if !ok {
			continue
		}
		for _, r := range byTeam[id] {
			if r.Owner == 0 && r.State() != ledger.Released {
				if err := s.askOwner(ctx, u, r); err != nil {
					errs = append(errs, fmt.Errorf("rental %d: %w", r.ID, err))
				}
			}
		}
		// The team's approvals are read once a tick: one already stored
		// is neither opened again (no write) nor reminded unless its
		// rental is still over that bound.
		aps, err := s.teams().Approvals(ctx, tv.team.ID, "")
		if err != nil {
			errs = append(errs, fmt.Errorf("team %d: %w", tv.team.ID, err))
			continue
		}
		over, err := s.checkLimits(ctx, u, tv, byTeam[id], aps)
		if err != nil {
			errs = append(errs, fmt.Errorf("team %d: %w", tv.team.ID, err))
		}
		if err := s.lapseApprovals(ctx, u, tv, byTeam[id], aps, over); err != nil {
			errs = append(errs, fmt.Errorf("team %d: %w", tv.team.ID, err))
		}
		if err := s.remindApprovals(ctx, u, tv, aps, over); err != nil {
			errs = append(errs, fmt.Errorf("team %d: %w", tv.team.ID, err))
		}
	}
	return errors.Join(errs...)
}

// rentalWhat is "2× A40, $0.79/h" (the rate now), or "2× A40" unpriced.
func rentalWhat(r *ledger.Rental, now time.Time) string {
	what := strconv.Itoa(r.GPUCount) + "× " + r.GPU
	if rate, ok := rentalRate(r, now); ok && rate.Minor != 0 {
		what += ", " + rate.Format() + "/h"
	}
	return what
}

// limitRate is what a running rental counts for against a rate bound:
// its spend per hour now (rentalRate), or for a prepaid package (a
// price per day, week or month, which the engine bills per period and
// so burns nothing per hour) its price over the period's hours, exactly,
// so an 8× H100 at ¥60,000/month counts ¥83.33/h.
func limitRate(r *ledger.Rental, now time.Time) (ledger.Money, bool) {
	if r.Priced && r.Price.Unit.IsPackage() {
		per := new(big.Rat).Mul(r.Price.Amount.Rat(), big.NewRat(3600, r.Price.Unit.Seconds()))
		return ledger.Round(per, r.Currency), true
	}
	return rentalRate(r, now)
}

// rentalRate is the rental's spend per hour now in its currency (the
// engine's BurnPerHour of a book holding it alone).
func rentalRate(r *ledger.Rental, now time.Time) (ledger.Money, bool) {
	if !r.Priced {
		return ledger.Money{Currency: r.Currency}, false
	}
	m, ok := ledger.BurnPerHour(&ledger.Book{Rentals: []*ledger.Rental{r}}, now)[r.Currency]
	if !ok {
		return ledger.Money{Currency: r.Currency}, true
	}
	return m, true
}

// askOwner asks the team's room once whose a rental with no owner is (a
// synced rental, an instance the system adopted): [Mine].
func (s *Scheduler) askOwner(ctx context.Context, u *ledger.User, r *ledger.Rental) error {
	defer s.lockRental(r.ID)()
	c, seen, err := s.cardFor(ctx, u, r, cardOwnerAsk, "owner")
	if err != nil || seen {
		return err
	}
	lg := lang(u)
	msg := tr(lg, "owner_ask", r.Name, platformName(r.Platform), rentalWhat(r, s.now()))
	rows, err := s.sign(u.ID, [][]button{{{text(lg, "btn_mine"), ActMine, r.ID}}})
	if err != nil {
		return err
	}
	now := s.now()
	id, err := s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: msg, Buttons: rows, Silent: ledger.InQuietHours(u, now)})
	if err != nil {
		return fmt.Errorf("send the owner question: %w", err)
	}
	c.MessageID, c.Text, c.FirstAt, c.LastAt = id, msg, now, now
	_, err = s.store.SaveCard(ctx, c)
	return err
}

// pressMine gives the rental to the presser: the first member to press
// owns it, a second is told whose it is.
func (s *Scheduler) pressMine(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	lg := s.pressLang(ctx, p)
	ledgerID := p.ActsOn()
	id, err := strconv.ParseInt(p.Payload, 10, 64)
	ts := s.teams()
	if err != nil || id <= 0 || ts == nil || !ledger.IsTeamLedger(ledgerID) {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	}
	defer s.lockRental(id)()
	r, _, err := s.ownRental(ctx, ledgerID, id)
	if err != nil {
		return err
	}
	tv, _ := s.teamOf(ctx, ledgerID)
	name := func(owner int64) string {
		if tv == nil {
			return "id" + strconv.FormatInt(owner, 10)
		}
		return tv.name(owner)
	}
	if r.Owner != 0 {
		if r.Owner == p.Update.UserID {
			return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_mine", r.Name))
		}
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_mine_taken", r.Name, name(r.Owner)))
	}
	r, err = ts.SetOwner(ctx, ledger.Action{UserID: ledgerID, By: p.Update.UserID, At: p.Now, Key: p.Update.Key, Via: ledger.ViaButton}, id, p.Update.UserID)
	if err != nil {
		return err
	}
	if c, ok, _ := s.openCard(ctx, r.ID, cardOwnerAsk); ok && !c.Closed {
		c.Closed = true
		c.Text = tr(lg, "owner_claimed", r.Name, platformName(r.Platform), name(r.Owner))
		if c.MessageID != 0 {
			if _, err := s.send(ctx, chat.Outgoing{ChatID: p.Update.ChatID, EditMessageID: c.MessageID, Text: c.Text}); err != nil {
				s.log.Warn("scheduler: edit the owner question", "rental", r.ID, "err", err)
			}
		}
		if _, err := s.store.SaveCard(ctx, c); err != nil {
			s.log.Error("scheduler: close the owner question", "rental", r.ID, "err", err)
		}
	}
	return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes(s.teamTag(ctx, ledgerID)+text(lg, "t_mine", r.Name), 190, "…"))
}

// overLimit is one rental of a scope over one of its bounds.
type overLimit struct {
	r            *ledger.Rental
	l            ledger.Limit
	kind         ledger.LimitKind
	limit, value ledger.Decimal
}

// approvalKey is what makes an approval one: its rental, scope,
// subject, bound and period (the store's unique key).
type approvalKey struct {
	rental  int64
	scope   ledger.LimitScope
	subject string
	kind    ledger.LimitKind
	period  string
}

func keyOf(ap ledger.Approval) approvalKey {
	return approvalKey{ap.RentalID, ap.Scope, ap.Subject, ap.Kind, ap.Period}
}

// checkLimits opens the approvals of the team's running rentals over a
// limit and sends their cards; an approval stored already (aps: pending
// or decided) is not opened or sent again, a lapsed one is reopened. It
// returns the keys of the approvals that apply now (the rentals over a
// bound this tick), never nil once the bounds were judged; nil when a
// read they need failed, so that nothing lapses on a failed read.
func (s *Scheduler) checkLimits(ctx context.Context, u *ledger.User, tv *teamView, rentals []*ledger.Rental, aps []ledger.Approval) (map[approvalKey]bool, error) {
	ts := s.teams()
	limits, err := ts.Limits(ctx, tv.team.ID)
	if err != nil {
		return nil, err
	}
	if len(limits) == 0 {
		return map[approvalKey]bool{}, nil
	}
	now := s.now()
	var running []*ledger.Rental
	for _, r := range rentals {
		if r.State() == ledger.Running {
			running = append(running, r)
		}
	}
	if len(running) == 0 {
		return map[approvalKey]bool{}, nil
	}
	// A month bound is asked once per rental and calendar month of the
	// team's zone; the rate and GPU bounds once per rental.
	period := now.In(u.Location()).Format("2006-01")
	var month []ledger.SplitRow
	monthRead := false
	var over []overLimit
	for _, l := range limits {
		var scoped []*ledger.Rental
		for _, r := range running {
			if inScope(l, r.Owner, r.Project) {
				scoped = append(scoped, r)
			}
		}
		if len(scoped) == 0 {
			continue
		}
		var cur []*ledger.Rental // the scope's rentals in the limit's currency
		for _, r := range scoped {
			if r.Currency == l.Currency {
				cur = append(cur, r)
			}
		}
		if l.RatePerHour.Sign() > 0 && len(cur) > 0 {
			sum := ledger.Money{Currency: l.Currency}
			for _, r := range cur {
				if m, ok := limitRate(r, now); ok {
					sum = sum.Add(m)
				}
			}
			if v := sum.Decimal(); v.Cmp(l.RatePerHour) > 0 {
				for _, r := range cur {
					over = append(over, overLimit{r, l, ledger.LimitRate, l.RatePerHour, v})
				}
			}
		}
		if l.GPUs > 0 {
			n := 0
			for _, r := range scoped {
				n += r.GPUCount
			}
			if n > l.GPUs {
				for _, r := range scoped {
					over = append(over, overLimit{r, l, ledger.LimitGPUs, ledger.DecimalFromInt(int64(l.GPUs)), ledger.DecimalFromInt(int64(n))})
				}
			}
		}
		if l.Month.Sign() > 0 && len(cur) > 0 {
			if !monthRead {
				monthRead = true
				b, err := s.store.Book(ctx, u.ID)
				if err != nil {
					return nil, err
				}
				from, _ := ledger.MonthRange(now, u.Location())
				month = ledger.Split(ledger.Spend(b, from, now))
			}
			sum := ledger.Money{Currency: l.Currency}
			for _, row := range month {
				if row.Currency == l.Currency && inScope(l, row.Owner, row.Project) {
					sum = sum.Add(row.Amount)
				}
			}
			if v := sum.Decimal(); v.Cmp(l.Month) > 0 {
				for _, r := range cur {
					over = append(over, overLimit{r, l, ledger.LimitMonth, l.Month, v})
				}
			}
		}
	}
	// A lapsed approval is not "stored": over that bound again, it is
	// reopened (OpenApproval) and asked afresh.
	stored := make(map[approvalKey]bool, len(aps))
	for _, ap := range aps {
		stored[keyOf(ap)] = ap.State != ledger.ApprovalLapsed
	}
	applies := make(map[approvalKey]bool, len(over))
	var errs []error
	for _, o := range over {
		want := ledger.Approval{TeamID: tv.team.ID, RentalID: o.r.ID, Owner: o.r.Owner,
			Scope: o.l.Scope, Subject: o.l.Subject, Kind: o.kind, Currency: o.l.Currency,
			Limit: o.limit, Value: o.value, State: ledger.ApprovalPending, CreatedAt: now}
		if o.kind == ledger.LimitMonth {
			want.Period = period
		}
		k := keyOf(want)
		applies[k] = true
		if stored[k] {
			continue // asked already: no write
		}
		ap, created, err := ts.OpenApproval(ctx, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !created {
			continue
		}
		s.log.Info("scheduler: a team's rental is over a limit", "team", tv.team.ID, "rental", o.r.ID,
			"scope", o.l.Scope, "kind", o.kind, "approval", ap.ID)
		if err := s.sendApproval(ctx, u, tv, o.r, ap, false); err != nil {
			errs = append(errs, err)
		}
		s.tellOwnerOver(ctx, u, tv, o.r, ap)
	}
	return applies, errors.Join(errs...)
}

// inScope reports whether a record of owner and project is in the
// limit's scope.
func inScope(l ledger.Limit, owner int64, project string) bool {
	switch l.Scope {
	case ledger.ScopeTeam:
		return true
	case ledger.ScopeMember:
		return owner != 0 && strconv.FormatInt(owner, 10) == l.Subject
	case ledger.ScopeProject:
		return project != "" && project == l.Subject
	}
	return false
}

// limitWords renders an approval's scope ("@bob's limit"), its value and
// its bound ("¥14.00/h", "¥10.00/h").
func limitWords(lg string, tv *teamView, ap ledger.Approval) (scope, value, bound string) {
	switch ap.Scope {
	case ledger.ScopeMember:
		who := ap.Subject
		if id, err := strconv.ParseInt(ap.Subject, 10, 64); err == nil {
			who = tv.name(id)
		}
		scope = tr(lg, "limit_member", who)
	case ledger.ScopeProject:
		scope = tr(lg, "limit_project", ap.Subject)
	default:
		scope = tr(lg, "limit_team")
	}
	money := func(d ledger.Decimal) string { return ledger.MoneyFromDecimal(d, ap.Currency).Format() }
	switch ap.Kind {
	case ledger.LimitRate:
		value, bound = tr(lg, "limit_rate", money(ap.Value)), tr(lg, "limit_rate", money(ap.Limit))
	case ledger.LimitGPUs:
		value, bound = gpusWords(lg, ap.Value.Coef()), gpusWords(lg, ap.Limit.Coef())
	default:
		value, bound = tr(lg, "limit_month", money(ap.Value)), money(ap.Limit)
	}
	return scope, value, bound
}

// gpusWords counts GPUs: "1 GPU", "3 GPUs".
func gpusWords(lg string, n int64) string {
	if n == 1 {
		return tr(lg, "limit_gpu_one")
	}
	return tr(lg, "limit_gpus", n)
}

// approvalText is the admins' card: "@bob's box5 (2× A100, ¥14.00/h) is
// over @bob's limit: ¥14.00/h of ¥10.00/h."
func (s *Scheduler) approvalText(lg string, tv *teamView, r *ledger.Rental, ap ledger.Approval) string {
	scope, value, bound := limitWords(lg, tv, ap)
	who := tv.name(r.Owner)
	if who == "" {
		who = text(lg, "team_unclaimed")
	}
	return tr(lg, "approval_card", who, r.Name, rentalWhat(r, s.now()), chat.RawHTML(scope), chat.RawHTML(value), chat.RawHTML(bound))
}

// sendApproval sends an approval's card to each admin of the team in
// private (signed for the team's ledger: any admin's press works), or its
// reminder.
func (s *Scheduler) sendApproval(ctx context.Context, u *ledger.User, tv *teamView, r *ledger.Rental, ap ledger.Approval, reminder bool) error {
	var errs []error
	for _, a := range tv.admins() {
		lg := lang(u)
		if au, err := s.store.User(ctx, a.UserID); err == nil {
			lg = lang(&au)
		}
		msg := "👥 " + chat.Escape(tv.team.Name) + " · " + s.approvalText(lg, tv, r, ap)
		if reminder {
			msg = tr(lg, "approval_reminder") + msg
		}
		rows, err := s.sign(u.ID, [][]button{{{text(lg, "btn_approve"), ActApprove, ap.ID}, {text(lg, "btn_stop_it"), ActStopIt, ap.ID}}})
		if err != nil {
			return err
		}
		chatID := s.cfg.ChatID(a.UserID)
		id, err := s.send(ctx, chat.Outgoing{ChatID: chatID, Text: msg, Buttons: rows})
		if err != nil {
			errs = append(errs, fmt.Errorf("approval %d to admin %d: %w", ap.ID, a.UserID, err))
			continue
		}
		// Kept so that the card is edited when the approval lapses.
		if id > 0 {
			if err := s.teams().AddApprovalCard(ctx, ap.ID, ledger.ApprovalCard{UserID: a.UserID, ChatID: chatID, MessageID: int64(id)}); err != nil {
				s.log.Warn("scheduler: keep an approval's card", "approval", ap.ID, "err", err)
			}
		}
	}
	return errors.Join(errs...)
}

// tellOwnerOver tells the rental's owner that it is over a limit and the
// admins were asked: privately, or in the room when their private chat
// is closed. An owner who is an admin got the card itself, which says as
// much, so nothing more is sent to them.
func (s *Scheduler) tellOwnerOver(ctx context.Context, u *ledger.User, tv *teamView, r *ledger.Rental, ap ledger.Approval) {
	if r.Owner == 0 {
		return
	}
	for _, a := range tv.admins() {
		if a.UserID == r.Owner {
			return
		}
	}
	lg := lang(u)
	if ou, err := s.store.User(ctx, r.Owner); err == nil {
		lg = lang(&ou)
	}
	scope, value, bound := limitWords(lg, tv, ap)
	msg := "👥 " + chat.Escape(tv.team.Name) + " · " + tr(lg, "approval_owner", r.Name, rentalWhat(r, s.now()), chat.RawHTML(scope), chat.RawHTML(value), chat.RawHTML(bound))
	_, err := s.send(ctx, chat.Outgoing{ChatID: s.cfg.ChatID(r.Owner), Text: msg})
	if errors.Is(err, chat.ErrNoPrivateChat) && tv.team.Room != 0 {
		owner, _ := s.ownerText(ctx, u, r.ID, tr(lang(u), "approval_owner", r.Name, rentalWhat(r, s.now()), chat.RawHTML(scope), chat.RawHTML(value), chat.RawHTML(bound)))
		_, err = s.send(ctx, chat.Outgoing{ChatID: tv.team.Room, Text: owner})
	}
	if err != nil {
		s.log.Warn("scheduler: tell the owner of a rental over a limit", "rental", r.ID, "err", err)
	}
}

// remindApprovals reminds the admins once of each approval (of aps)
// pending for RemindApprovalAfter whose rental is still over that bound
// this tick (over, from checkLimits): one whose limit was removed or
// raised, or whose rental came back under it, is not reminded (it stays
// pending). Never an automatic action.
func (s *Scheduler) remindApprovals(ctx context.Context, u *ledger.User, tv *teamView, aps []ledger.Approval, over map[approvalKey]bool) error {
	ts := s.teams()
	now := s.now()
	var errs []error
	for _, ap := range aps {
		if ap.State != ledger.ApprovalPending || !ap.RemindedAt.IsZero() || now.Sub(ap.CreatedAt) < RemindApprovalAfter {
			continue
		}
		if !over[keyOf(ap)] {
			continue // it no longer applies
		}
		r, err := s.store.RentalByID(ctx, ap.RentalID)
		if err != nil || r.UserID != u.ID || r.State() == ledger.Released {
			continue
		}
		// Recorded first: a failed send is not repeated every tick.
		if err := ts.Reminded(ctx, ap.ID, now); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.sendApproval(ctx, u, tv, r, ap, true); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pressApproval decides an approval: [Approve] or [Stop it], by an admin
// of its team. The store's conditional update makes one decision of two
// presses at once; the other admin is told who decided and what. Stop it
// is decided first and then takes Release now's path (the agent's signed
// order or the platform's API, with their checks).
func (s *Scheduler) pressApproval(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	lg := s.pressLang(ctx, p)
	ledgerID := p.ActsOn()
	ts := s.teams()
	id, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || id <= 0 || ts == nil {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	}
	ap, err := ts.Approval(ctx, id)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND || (err == nil && ledger.TeamLedger(ap.TeamID) != ledgerID) {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	}
	if err != nil {
		return err
	}
	if !ledger.Role(p.Role).Admin() {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_admin_only"))
	}
	tv, ok := s.teamOf(ctx, ledgerID)
	if !ok {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	}
	// A lapsed approval, or a pending one whose rental has ended (which
	// the press lapses), is closed: the press does nothing.
	if ap.State == ledger.ApprovalLapsed {
		return s.answerLapsed(ctx, p, snd, lg, tv, ap)
	}
	if ap.State == ledger.ApprovalPending {
		if done, err := s.pressOnEnded(ctx, p, snd, lg, tv, ap); done || err != nil {
			return err
		}
	}
	state := ledger.ApprovalApproved
	if p.Action == ActStopIt {
		state = ledger.ApprovalStopped
	}
	decided, err := ts.DecideApproval(ctx, ledger.Action{UserID: ledgerID, By: p.Update.UserID, At: p.Now, Key: p.Update.Key, Via: ledger.ViaButton}, id, state)
	if ledger.ErrorCode(err) == ledger.ECONFLICT || ledger.ErrorCode(err) == ledger.EDUPLICATE {
		// Decided already: by the other admin, or this press delivered
		// twice. A Stop it on an approval stopped before whose rental is
		// still not released runs the release again (the first one could
		// not act); otherwise nothing else happens.
		if cur, rerr := ts.Approval(ctx, id); rerr == nil && cur.State != ledger.ApprovalPending {
			if cur.State == ledger.ApprovalLapsed {
				return s.answerLapsed(ctx, p, snd, lg, tv, cur) // the system closed it a moment before
			}
			if cur.State == ledger.ApprovalStopped && p.Action == ActStopIt && ledger.ErrorCode(err) == ledger.ECONFLICT {
				if r, rerr := s.store.RentalByID(ctx, cur.RentalID); rerr == nil && r.UserID == ledgerID && r.State() != ledger.Released {
					return s.stopApproved(ctx, p, snd, lg, tv, r, cur)
				}
			}
			key := "t_already_approved"
			if cur.State == ledger.ApprovalStopped {
				key = "t_already_stopped"
			}
			return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, key, tv.name(cur.DecidedBy)))
		}
		return err
	}
	if err != nil {
		return err
	}
	r, rerr := s.store.RentalByID(ctx, decided.RentalID)
	if rerr != nil || r.UserID != ledgerID {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	}
	if state == ledger.ApprovalStopped {
		return s.stopApproved(ctx, p, snd, lg, tv, r, decided)
	}
	s.editApproval(ctx, p, lg, tv, r, decided, tr(lg, "approval_approved", tv.name(p.Update.UserID)))
	return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes("👥 "+tv.team.Name+" · "+text(lg, "t_approved"), 190, "…"))
}

// stopApproved runs Release now's path (the agent's signed order or the
// platform's API, with their checks) for an approval decided stopped.
// The card says "Stopped by @x" only once the release is under way; when
// nothing could act, or it failed, the card and the toast say that the
// decision is recorded but the rental is not released, and a later
// [Stop it] runs the release again.
func (s *Scheduler) stopApproved(ctx context.Context, p chat.ButtonPress, snd chat.Sender, lg string, tv *teamView, r *ledger.Rental, ap ledger.Approval) error {
	toast, underWay, err := s.release(ctx, p.ActsOn(), r.ID)
	if err == nil && underWay {
		s.editApproval(ctx, p, lg, tv, r, ap, tr(lg, "approval_stopped", tv.name(ap.DecidedBy)))
		return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes("👥 "+tv.team.Name+" · "+toast, 190, "…"))
	}
	why := chat.StripHTML(toast)
	if err != nil {
		s.log.Error("scheduler: release a rental stopped by an approval", "approval", ap.ID, "rental", r.ID, "err", err)
		why = text(lg, "approval_release_error")
	}
	note := tr(lg, "approval_stop_failed", tv.name(ap.DecidedBy), r.Name, why)
	s.editApproval(ctx, p, lg, tv, r, ap, note)
	return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes("👥 "+tv.team.Name+" · "+chat.StripHTML(note), 190, "…"))
}

// editApproval edits the pressed approval card to its text and a note
// of what was decided.
func (s *Scheduler) editApproval(ctx context.Context, p chat.ButtonPress, lg string, tv *teamView, r *ledger.Rental, ap ledger.Approval, note string) {
	if p.Update.MessageID == 0 {
		return
	}
	msg := "👥 " + chat.Escape(tv.team.Name) + " · " + s.approvalText(lg, tv, r, ap) + "\n" + note
	if _, err := s.send(ctx, chat.Outgoing{ChatID: p.Update.ChatID, EditMessageID: p.Update.MessageID, Text: msg}); err != nil {
		s.log.Warn("scheduler: edit the approval card", "approval", ap.ID, "err", err)
	}
}
