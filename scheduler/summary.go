package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// lateAfter is how long after its time a summary counts as late.
const lateAfter = 10 * time.Minute

// Summaries sends each user's nightly summary that is due and not yet
// sent: exactly once per user and local day (the store records "summary
// sent for user U, date D" before sending, and forgets it if sending
// fails). A summary whose time passed while the server was down goes out
// at the next run, marked late; only yesterday's and today's are caught up.
func (s *Scheduler) Summaries(ctx context.Context) error {
	users, err := s.store.Users(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	var errs []error
	for i := range users {
		u := &users[i]
		if u.Settings.SummaryAt < 0 {
			continue
		}
		loc := u.Location()
		today, _ := ledger.DayRange(now, loc)
		for _, back := range []int{1, 0} {
			day := time.Date(today.Year(), today.Month(), today.Day()-back, 0, 0, 0, 0, loc)
			due := time.Date(day.Year(), day.Month(), day.Day(), u.Settings.SummaryAt/60, u.Settings.SummaryAt%60, 0, 0, loc)
			if now.Before(due) || due.Before(u.CreatedAt) {
				continue
			}
			if err := s.sendSummary(ctx, u, day, due, now); err != nil {
				errs = append(errs, fmt.Errorf("user %d: %w", u.ID, err))
			}
		}
	}
	return errors.Join(errs...)
}

// SummaryKey is the notice key of user's summary for the local day.
func SummaryKey(userID int64, day time.Time) string {
	return fmt.Sprintf("summary:%d:%s", userID, day.Format("2006-01-02"))
}

func (s *Scheduler) sendSummary(ctx context.Context, u *ledger.User, day, due, now time.Time) error {
	key := SummaryKey(u.ID, day)
	fresh, err := s.store.MarkNotice(ctx, u.ID, key, now)
	if err != nil || !fresh {
		return err
	}
	b, err := s.store.Book(ctx, u.ID)
	if err != nil {
		s.store.UnmarkNotice(ctx, key)
		return err
	}
	// The summary is as of its due time (a late one shows the day it is for).
	asOf := due
	lg := lang(u)
	text := view.Summary(b, asOf, lg, s.reconciliations(ctx, u, asOf))
	if late := now.Sub(due); late > lateAfter {
		text = tr(lg, "summary_late", view.FormatTime(due, u.Location(), now, lg)) + "\n" + text
	}
	if ledger.IsTeamLedger(u.ID) {
		// A team's summary splits the day's spend by person and by
		// project, from the statement the summary shows (ledger.Split).
		text += s.teamSplit(ctx, u, b, asOf)
	}
	out := chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: text, Silent: ledger.InQuietHours(u, now)}
	if out.ChatID > 0 {
		// Telegram takes web-app buttons in private chats only: a team's
		// room gets none.
		out.Buttons = s.dashboardButtons(lg, u.ID)
	}
	if _, err := s.send(ctx, out); err != nil {
		if uerr := s.store.UnmarkNotice(ctx, key); uerr != nil {
			s.log.Error("scheduler: unmark summary", "user", u.ID, "err", uerr)
		}
		return fmt.Errorf("send summary: %w", err)
	}
	if s.cfg.NoChart {
		return nil
	}
	chart, err := view.SummaryChart(b, asOf)
	if err != nil {
		s.log.Error("scheduler: chart", "user", u.ID, "err", err)
		return nil
	}
	_, err = s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: tr(lg, "chart_caption"),
		Photo: chart, Silent: true})
	if err != nil {
		s.log.Error("scheduler: send chart", "user", u.ID, "err", err)
	}
	return nil
}

// dashboardButtons is the summary's [Open dashboard] row for ledgerID,
// or nil when the dashboard has no Mini App URL. The summary goes to a
// private chat (ChatID), where Telegram allows web-app buttons: the
// user's, or for a team without a room its first owner's, whose button
// opens the team's page (chat.TeamAppURL), as under the bot's replies
// about a team.
func (s *Scheduler) dashboardButtons(lg string, ledgerID int64) [][]chat.Button {
	if s.cfg.DashboardURL == nil {
		return nil
	}
	app := s.cfg.DashboardURL()
	if teamID, ok := ledger.TeamOf(ledgerID); ok {
		app = chat.TeamAppURL(app, teamID)
	}
	return chat.WithRow(nil, chat.DashboardRow(lg, app))
}

// Budget levels alerted once per month each.
var budgetLevels = []int{50, 80, 100}

// runwayWarn is how short a platform's runway must get to be alerted.
const runwayWarn = 12 * time.Hour

// deadlineWarn is how long before a platform destroys a stopped
// instance's data the user is warned.
const deadlineWarn = 24 * time.Hour

// MoneyAlerts sends the budget alerts (50, 80 and 100% of the monthly
// budget, once per month and level), the runway alert (a platform balance
// running out within 12 h, once per balance state) and the data deadline
// warning (AutoDL releases an instance stopped 15 days: a day before, once
// per stop).
func (s *Scheduler) MoneyAlerts(ctx context.Context) error {
	users, err := s.store.Users(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	var errs []error
	for i := range users {
		u := &users[i]
		b, err := s.store.Book(ctx, u.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, s.budgetAlert(ctx, u, b, now), s.runwayAlert(ctx, u, b, now), s.deadlineAlert(ctx, u, b, now))
	}
	return errors.Join(errs...)
}

// once sends text unless key was recorded, recording it first.
func (s *Scheduler) once(ctx context.Context, u *ledger.User, key, text string) error {
	fresh, err := s.store.MarkNotice(ctx, u.ID, key, s.now())
	if err != nil || !fresh {
		return err
	}
	if err := s.notifyText(ctx, u, text); err != nil {
		s.store.UnmarkNotice(ctx, key)
		return err
	}
	return nil
}

// budgetAlert alerts each of the user's budgets on its own: the month's
// spend in a currency against that currency's budget, with no exchange
// between currencies. The notice key names the currency, so a level
// reached in yuan does not silence the same level in dollars.
func (s *Scheduler) budgetAlert(ctx context.Context, u *ledger.User, b *ledger.Book, now time.Time) error {
	var errs []error
	for _, bs := range ledger.Budgets(b, now) {
		errs = append(errs, s.budgetAlertOne(ctx, u, bs, now))
	}
	return errors.Join(errs...)
}

// BudgetKey is the notice key of user's budget alert at level percent in
// currency c for the month starting at month.
func BudgetKey(userID int64, month time.Time, c ledger.Currency, level int) string {
	return fmt.Sprintf("budget:%d:%s:%s:%d", userID, month.Format("2006-01"), c, level)
}

func (s *Scheduler) budgetAlertOne(ctx context.Context, u *ledger.User, bs ledger.BudgetStatus, now time.Time) error {
	c := bs.Budget.Currency
	// Only the highest level reached is sent; lower ones are marked so
	// they never come after it.
	top := -1
	for i, lv := range budgetLevels {
		if bs.Percent >= lv {
			top = i
		}
	}
	if top < 0 {
		return nil
	}
	for i := 0; i < top; i++ {
		if _, err := s.store.MarkNotice(ctx, u.ID, BudgetKey(u.ID, bs.Month, c, budgetLevels[i]), now); err != nil {
			return err
		}
	}
	lv := budgetLevels[top]
	lg := lang(u)
	text := tr(lg, "budget", bs.Spent.Format(), bs.Budget.Format(), bs.Percent)
	if lv >= 100 {
		text = tr(lg, "budget_over", chat.RawHTML(text))
	}
	return s.once(ctx, u, BudgetKey(u.ID, bs.Month, c, lv), text)
}

func (s *Scheduler) runwayAlert(ctx context.Context, u *ledger.User, b *ledger.Book, now time.Time) error {
	var errs []error
	for plat, st := range ledger.Balances(b, now) {
		if st.RunsOutAt == nil || st.RunsOutAt.Sub(now) >= runwayWarn {
			continue
		}
		// Once per balance state: a new balance record or top-up re-arms it.
		key := fmt.Sprintf("runway:%d:%s:%s:%d:%d", u.ID, plat, st.Currency, st.Since.Unix(), len(b.TopUps))
		left := st.RunsOutAt.Sub(now)
		lg := lang(u)
		text := tr(lg, "runway", plat, st.Balance.Format(), chat.FormatDuration(max(left, 0), lg), clock(u, *st.RunsOutAt), st.BurnPerHour.Format())
		errs = append(errs, s.once(ctx, u, key, text))
	}
	return errors.Join(errs...)
}

func (s *Scheduler) deadlineAlert(ctx context.Context, u *ledger.User, b *ledger.Book, now time.Time) error {
	var errs []error
	for _, r := range b.Rentals {
		if r.State() != ledger.Stopped {
			continue
		}
		p, ok := ledger.LookupProfile(r.Platform)
		if !ok {
			continue
		}
		dl, ok := p.DataDeadline(r, now)
		if !ok || dl.Sub(now) > deadlineWarn {
			continue
		}
		key := fmt.Sprintf("deadline:%d:%d:%d", u.ID, r.ID, r.LastEventAt().Unix())
		// Times as the chat writes them, in the user's zone.
		lg, loc := lang(u), u.Location()
		text := tr(lg, "deadline", r.Name, view.FormatTime(r.LastEventAt(), loc, now, lg), view.PlatformWord(lg, r.Platform),
			view.FormatTime(dl.Truncate(time.Minute), loc, now, lg))
		errs = append(errs, s.once(ctx, u, key, text))
	}
	return errors.Join(errs...)
}

// teamSplit is the nightly summary's split of a team's day (the span
// view.Summary shows: the local day up to asOf) by person and by
// project, headed "Today:", with a blank line before it; "" when
// nothing was spent.
func (s *Scheduler) teamSplit(ctx context.Context, u *ledger.User, b *ledger.Book, asOf time.Time) string {
	day, _ := ledger.DayRange(asOf, u.Location())
	rows := ledger.Split(ledger.Spend(b, day, asOf))
	if len(rows) == 0 {
		return ""
	}
	tv, _ := s.teamOf(ctx, u.ID)
	split := view.TeamSplit(lang(u), rows, func(owner int64) string {
		if tv == nil {
			return ""
		}
		return tv.name(owner)
	})
	if split == "" {
		return ""
	}
	// Headed with its period: the chat's /summary shows the month's split
	// under a heading of its own, and the two must not be confused.
	return "\n\n" + text(lang(u), "summary_split_today") + "\n" + split
}
