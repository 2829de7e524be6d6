package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Button actions of the scheduler's cards (registered with the buttons by
// New). The payload is the rental ID.
const (
	ActRelease      = "ir" // Release now: an order to the rental's agent
	ActSnooze       = "is" // Snooze 1h
	ActKeep         = "ik" // Keep: no more reminders, no automatic action for this idle streak
	ActExtend       = "le" // Extend the lease 2h
	ActReleaseAtEnd = "la" // Release at the lease's end (the agent enforces it)
	ActReleased     = "nr" // I released it (no agent): record the release now
)

// Durations of the buttons.
const (
	SnoozeFor = time.Hour
	ExtendBy  = 2 * time.Hour
)

// button is a card button before signing.
type button struct {
	text, action string
	rentalID     int64
}

func idleButtons(lang string, r *ledger.Rental) [][]button {
	return [][]button{{{text(lang, "btn_release_now"), ActRelease, r.ID}, {text(lang, "btn_snooze"), ActSnooze, r.ID}, {text(lang, "btn_keep"), ActKeep, r.ID}}}
}

func jobButtons(lang string, r *ledger.Rental) [][]button {
	return [][]button{{{text(lang, "btn_release_now"), ActRelease, r.ID}, {text(lang, "btn_keep"), ActKeep, r.ID}}}
}

func releasedButtons(lang string, r *ledger.Rental) [][]button {
	return [][]button{{{text(lang, "btn_released"), ActReleased, r.ID}}}
}

// sendCard sends or edits c's message. notify sends a new message (a
// reminder makes a sound; an edit does not); otherwise an existing message
// is edited in place. Routine messages (urgent false) are held during the
// user's quiet hours and sent when they end (flushPending); a card about a
// pending automatic action is urgent and never held. It saves the card.
func (s *Scheduler) sendCard(ctx context.Context, u *ledger.User, c *ledger.Card, text string, buttons [][]button, notify, urgent bool) error {
	return s.sendCardPriv(ctx, u, c, text, "", buttons, notify, urgent)
}

// sendCardPriv is sendCard for a card with agent data a team's room
// must not see (who is connected from where, a job's command line, which
// may hold a token): text is the card as the room gets it, private (when
// not "") the same card with those details, for the owner's private copy
// alone (sent only when they asked for copies: /team dm on).
func (s *Scheduler) sendCardPriv(ctx context.Context, u *ledger.User, c *ledger.Card, text, private string, buttons [][]button, notify, urgent bool) error {
	now := s.now()
	// A team's card names the rental's owner; its owner may want a copy.
	text, copyTo := s.ownerText(ctx, u, c.RentalID, text)
	copyText := text
	if private != "" {
		copyText, _ = s.ownerText(ctx, u, c.RentalID, private)
	}
	quiet := ledger.InQuietHours(u, now)
	if notify && quiet && !urgent {
		c.Text, c.Pending = text, true
		saved, err := s.store.SaveCard(ctx, *c)
		if err == nil {
			*c = saved
		}
		return err
	}
	m := chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: text, Silent: quiet}
	if !notify && c.MessageID != 0 {
		m.EditMessageID = c.MessageID
		m.Refresh = figuresOnly(c.Text, text)
	}
	if buttons != nil {
		rows, err := s.sign(u.ID, buttons)
		if err != nil {
			return err
		}
		m.Buttons = rows
	}
	id, err := s.send(ctx, m)
	if err != nil {
		return fmt.Errorf("send %s card: %w", c.Kind, err)
	}
	if m.EditMessageID == 0 {
		cp := m
		cp.Text = copyText
		s.sendCopy(ctx, copyTo, cp)
	}
	if id != 0 {
		c.MessageID = id
	}
	c.Text, c.Pending = text, false
	if notify {
		c.LastAt = now
		if c.FirstAt.IsZero() {
			c.FirstAt = now
		}
	}
	saved, err := s.store.SaveCard(ctx, *c)
	if err != nil {
		return err
	}
	*c = saved
	return nil
}

// figuresOnly reports whether a card's text changed from old to text in
// its figures alone (digits: the minutes idle, the money spent), so the
// edit is a refresh (chat.Outgoing.Refresh) and not news.
func figuresOnly(old, text string) bool {
	return old != "" && maskDigits(old) == maskDigits(text)
}

// maskDigits replaces each run of digits, with the points and commas
// inside it, by one '#'.
func maskDigits(s string) string {
	var sb strings.Builder
	run := false
	for i, r := range s {
		digit := r >= '0' && r <= '9'
		inside := run && (r == '.' || r == ',') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'
		switch {
		case digit || inside:
			if !run {
				sb.WriteByte('#')
			}
			run = true
		default:
			run = false
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func (s *Scheduler) sign(userID int64, rows [][]button) ([][]chat.Button, error) {
	out := make([][]chat.Button, 0, len(rows))
	for _, row := range rows {
		var r []chat.Button
		for _, b := range row {
			d, err := s.cfg.Buttons.Sign(userID, b.action, strconv.FormatInt(b.rentalID, 10))
			if err != nil {
				return nil, err
			}
			r = append(r, chat.Button{Text: b.text, Data: d})
		}
		out = append(out, r)
	}
	return out, nil
}

// notifyText sends a plain message (no card), silently in quiet hours.
func (s *Scheduler) notifyText(ctx context.Context, u *ledger.User, text string) error {
	_, err := s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: text, Silent: ledger.InQuietHours(u, s.now())})
	return err
}

// openCard returns the rental's open card of kind, or ok false.
func (s *Scheduler) openCard(ctx context.Context, rentalID int64, kind ledger.CardKind) (ledger.Card, bool, error) {
	c, err := s.store.Card(ctx, rentalID, kind)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return ledger.Card{}, false, nil
	}
	if err != nil {
		return c, false, err
	}
	return c, true, nil
}

// cardFor returns the rental's card of kind for incident, or a new one
// (not yet saved) when there is none; seen reports whether it existed.
func (s *Scheduler) cardFor(ctx context.Context, u *ledger.User, r *ledger.Rental, kind ledger.CardKind, incident string) (ledger.Card, bool, error) {
	c, ok, err := s.openCard(ctx, r.ID, kind)
	if err != nil {
		return c, false, err
	}
	if ok && c.Incident == incident {
		return c, true, nil
	}
	return ledger.Card{UserID: u.ID, RentalID: r.ID, Kind: kind, Incident: incident}, false, nil
}

// decide records a decision for /why: what was decided and the facts it
// rested on, as messages by key that /why renders in the reader's
// language and zone, and in English with the user's zone now (Summary
// and Evidence) for logs and for readers of the table.
func (s *Scheduler) decide(ctx context.Context, u *ledger.User, r *ledger.Rental, kind ledger.DecisionKind, what, why ledger.Message) {
	now := s.now()
	english := func(m ledger.Message) string {
		if m.IsZero() {
			return ""
		}
		t, ok := view.DecisionText(m, chat.LangEN, u.Location(), now)
		if !ok {
			s.log.Error("scheduler: decision message not in the catalog", "key", m.Key)
			return m.String()
		}
		return t
	}
	_, err := s.store.AddDecision(ctx, ledger.Decision{UserID: r.UserID, RentalID: r.ID, At: now, Kind: kind,
		Summary: english(what), Evidence: english(why), SummaryMsg: what, EvidenceMsg: why})
	if err != nil {
		s.log.Error("scheduler: record decision", "rental", r.ID, "err", err)
	}
}

func idleWarn(u *ledger.User) time.Duration {
	return u.Settings.IdleWarnAfter()
}

func silentAfter(u *ledger.User) time.Duration {
	if u.Settings.Silent > 0 {
		return u.Settings.Silent
	}
	return 10 * time.Minute
}

func clock(u *ledger.User, t time.Time) string { return t.In(u.Location()).Format("15:04") }

// idleCost returns what the rental accrued while idle in [from, to), and
// its compute over the same window, from the cost engine.
func (s *Scheduler) idleCost(ctx context.Context, r *ledger.Rental, from, to time.Time) (idle, total ledger.Money, err error) {
	b, err := s.store.Book(ctx, r.UserID)
	if err != nil {
		return idle, total, err
	}
	idle, total = ledger.Money{Currency: r.Currency}, ledger.Money{Currency: r.Currency}
	if !to.After(from) {
		return idle, total, nil
	}
	st := ledger.Spend(b, from, to)
	for _, rc := range st.Rentals {
		if rc.Rental.ID == r.ID {
			return rc.IdleCost, rc.Total, nil
		}
	}
	return idle, total, nil
}

// checkIdle keeps the idle card of one rental and takes the automatic
// action when DESIGN.md section 7 allows it.
func (s *Scheduler) checkIdle(ctx context.Context, u *ledger.User, r *ledger.Rental, st ledger.AgentState, now time.Time) error {
	pol, err := s.store.AutoPolicy(ctx, r.ID)
	if err != nil {
		return err
	}
	card, open, err := s.openCard(ctx, r.ID, ledger.CardIdle)
	if err != nil {
		return err
	}
	if open && card.Closed {
		open = false
	}
	fresh := st.Fresh(now, s.cfg.FreshWithin)
	idle := st.Verdict == ledger.VerdictIdle && r.State() == ledger.Running && pol.Action != ledger.AutoOff
	incident := strconv.FormatInt(st.IdleSince.Unix(), 10)
	if open && (!idle || card.Incident != incident) && fresh {
		if _, inFlight := s.openOrder(r.ID); !inFlight {
			if err := s.closeIdleCard(ctx, u, r, &card, st, now); err != nil {
				return err
			}
			open = false
		}
	}
	if !idle || !fresh {
		return nil
	}
	idleFor := st.IdleFor(now)
	if idleFor < idleWarn(u) {
		return nil
	}
	// Up to the last idle sample heard, not to now: a heartbeat is up to
	// an interval old, and silence is never idle.
	idleMoney, _, err := s.idleCost(ctx, r, st.IdleSince, st.IdleSince.Add(idleFor))
	if err != nil {
		return err
	}
	auto := pol.Action == ledger.AutoStop || pol.Action == ledger.AutoRelease
	lg := lang(u)
	ask := ""
	if auto {
		// What the automatic action would really do: through a platform's
		// API only as far as the agent has shown it runs on the instance.
		if w := s.autoWay(ctx, r, pol.Action); w.Kind == ledger.WayAsk {
			ask = view.WayReason(lg, r.Name, w)
		}
	}
	// A team's room sees how many are connected, not from where or as
	// whom; the owner's private copy has the details.
	team := ledger.IsTeamLedger(u.ID)
	text := s.idleText(u, r, s.label(ctx, u, r), pol, card, idleFor, idleMoney, st.Sessions, team, ask, now)
	private := ""
	if team && len(st.Sessions) > 0 {
		private = s.idleText(u, r, s.label(ctx, u, r), pol, card, idleFor, idleMoney, st.Sessions, false, ask, now)
	}
	if !open {
		card = ledger.Card{UserID: u.ID, RentalID: r.ID, Kind: ledger.CardIdle, Incident: incident}
		if err := s.sendCardPriv(ctx, u, &card, text, private, idleButtons(lg, r), true, auto); err != nil {
			return err
		}
		if !card.Pending {
			s.decide(ctx, u, r, ledger.DecisionWarn, ledger.Msg("d_warn"),
				ledger.Msg("e_warn", idleFor, st.IdleSince, idleMoney, pol.Action))
		}
		return nil
	}
	if card.Pending {
		return nil // held by quiet hours; flushPending sends it
	}
	if _, inFlight := s.openOrder(r.ID); inFlight {
		return nil // the card shows the order's progress
	}
	if auto {
		s.mu.Lock()
		refused := s.peopleRefused[r.ID]
		s.mu.Unlock()
		in := ledger.AutoInput{Now: now, Rental: r, Policy: pol, Agent: &st, WarnedAt: card.FirstAt,
			SnoozeUntil: card.SnoozeUntil, Kept: card.Kept, FreshWithin: s.cfg.FreshWithin, PeopleRefusedAt: refused}
		action, why := ledger.AutoDecide(in)
		if action != "" {
			return s.autoOrder(ctx, u, r, &card, action, why)
		}
		s.recordHold(ctx, u, r, why)
	}
	if !card.Kept && !now.Before(card.SnoozeUntil) && !now.Before(card.LastAt.Add(ledger.ReminderDelay(card.Reminders+1))) {
		card.Reminders++
		if card.MessageID != 0 {
			// The old message loses its buttons; the reminder carries them.
			s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), EditMessageID: card.MessageID, Text: card.Text + "\n" + tr(lg, "reminder_below")})
		}
		if err := s.sendCardPriv(ctx, u, &card, text, private, idleButtons(lg, r), true, auto); err != nil {
			return err
		}
		s.decide(ctx, u, r, ledger.DecisionRemind, ledger.Msg("d_remind", card.Reminders), ledger.Msg("e_remind", idleFor, idleMoney))
		return nil
	}
	if text != card.Text {
		var btns [][]button
		if !card.Kept {
			btns = idleButtons(lg, r)
		}
		return s.sendCard(ctx, u, &card, text, btns, false, auto)
	}
	return nil
}

// idleText is the idle card: how long and how much, who is connected
// (people, from the last heartbeat), and what happens next.
// ask, when not "", is why an automatic action would ask for a tap
// instead (view.WayReason). name is how the card names r (label).
func (s *Scheduler) idleText(u *ledger.User, r *ledger.Rental, name string, pol ledger.AutoPolicy, c ledger.Card, idleFor time.Duration, idle ledger.Money, people []ledger.Session, hide bool, ask string, now time.Time) string {
	lg := lang(u)
	t := tr(lg, "idle", name, chat.FormatDuration(idleFor, lg), idle.Format())
	if len(people) > 0 {
		shown := people
		if hide {
			shown = hideSessions(people)
		}
		t += "\n" + tr(lg, "idle_people", chat.RawHTML(view.SessionsText(lg, shown)))
	}
	auto := pol.Action == ledger.AutoStop || pol.Action == ledger.AutoRelease
	held, idlePeople := pol.Holding(people, now)
	if auto && len(idlePeople) > 0 && len(held) == 0 {
		t += "\n" + idlePeopleText(lg, idlePeople, now, pol.Action)
	}
	switch {
	case c.Kept:
		t += "\n" + tr(lg, "idle_kept")
	case now.Before(c.SnoozeUntil):
		t += "\n" + tr(lg, "snoozed_until", clock(u, c.SnoozeUntil))
	case auto && ask != "":
		t += "\n" + tr(lg, "idle_auto_ask", chat.RawHTML(tr(lg, "act_"+string(pol.Action))), ask)
	case auto && len(held) > 0:
		t += "\n" + tr(lg, "idle_auto_held", chat.RawHTML(tr(lg, "act_"+string(pol.Action))), name, string(pol.Action))
	case auto:
		first := c.FirstAt
		if first.IsZero() {
			first = now
		}
		t += "\n" + tr(lg, "idle_auto", chat.RawHTML(tr(lg, "act_"+string(pol.Action))), clock(u, first.Add(pol.Grace())), name)
	}
	return t
}

// idlePeopleText says that the people connected have done nothing for
// the rental's bound and hold the automatic action no longer: "Jupyter
// connected but nothing run for 3h: …", the time since the last of them
// did anything.
func idlePeopleText(lg string, ss []ledger.Session, now time.Time, action ledger.AutoAction) string {
	var last time.Time
	kinds := map[string]bool{}
	for _, s := range ss {
		kinds[s.Kind] = true
		if s.ActiveAt.After(last) {
			last = s.ActiveAt
		}
	}
	key := "idle_people_idle"
	if len(kinds) == 1 && (kinds[ledger.SessionJupyter] || kinds[ledger.SessionSSH]) {
		key += "_" + ss[0].Kind
	}
	d := now.Sub(last).Truncate(time.Minute)
	return tr(lg, key, chat.FormatDuration(d, lg), chat.RawHTML(tr(lg, "act_"+string(action))))
}

// hideSessions is ss without their logins and client addresses, for a
// team's room: "2 SSH sessions", not who from where.
func hideSessions(ss []ledger.Session) []ledger.Session {
	out := make([]ledger.Session, len(ss))
	for i, x := range ss {
		x.User, x.Client = "", ""
		out[i] = x
	}
	return out
}

// stateText is "<b>box1</b> is stopped." in the user's language.
func stateText(lg string, r *ledger.Rental) string {
	return tr(lg, "is_state", r.Name, chat.RawHTML(tr(lg, "state_"+string(r.State()))))
}

func (s *Scheduler) closeIdleCard(ctx context.Context, u *ledger.User, r *ledger.Rental, c *ledger.Card, st ledger.AgentState, now time.Time) error {
	c.Closed = true
	if c.MessageID == 0 || c.Pending {
		c.Pending = false
		_, err := s.store.SaveCard(ctx, *c)
		return err
	}
	lg := lang(u)
	text := tr(lg, "busy_again", r.Name)
	switch {
	case r.State() != ledger.Running:
		text = stateText(lg, r)
	case st.Verdict == ledger.VerdictUnknown:
		text = tr(lg, "verdict_unknown", r.Name)
	}
	return s.sendCard(ctx, u, c, text, nil, false, false)
}

func (s *Scheduler) recordHold(ctx context.Context, u *ledger.User, r *ledger.Rental, why ledger.Message) {
	s.mu.Lock()
	same := s.lastHold[r.ID] == why.String()
	s.lastHold[r.ID] = why.String()
	s.mu.Unlock()
	if !same {
		s.decide(ctx, u, r, ledger.DecisionHold, ledger.Msg("d_held"), why)
	}
}

// autoOrder issues the automatic stop or release and shows it on the card.
func (s *Scheduler) autoOrder(ctx context.Context, u *ledger.User, r *ledger.Rental, c *ledger.Card, action ledger.OrderAction, evidence ledger.Message) error {
	if handled, err := s.autoAPI(ctx, u, r, c, action, evidence); handled || err != nil || s.hub == nil {
		return err
	}
	o, err := s.hub.IssueOrder(ctx, r.ID, action, ledger.OriginAuto)
	if ledger.ErrorCode(err) == ledger.ECONFLICT {
		return nil
	}
	if err != nil {
		s.decide(ctx, u, r, ledger.DecisionHold, ledger.Msg("d_not_ordered", ledger.AutoAction(action)), view.ErrorEvidence(err))
		return err
	}
	s.decide(ctx, u, r, ledger.DecisionOrder, ledger.Msg("d_ordered", ledger.AutoAction(action), o.ID), evidence)
	lg := lang(u)
	text := tr(lg, "auto_ordered", r.Name, chat.RawHTML(tr(lg, "act_"+string(action))))
	// People connected whose bound ran out are why it goes ahead now.
	if st, seen := s.hub.AgentState(r.ID); seen && len(o.WaitFor) > 0 && o.IdlePeople > 0 {
		wf, _ := ledger.ParseWaitFor(strings.Join(o.WaitFor, ","))
		pol := ledger.AutoPolicy{WaitFor: wf, IdlePeople: o.IdlePeople}
		if held, idle := pol.Holding(st.Sessions, s.now()); len(held) == 0 && len(idle) > 0 {
			text += "\n" + idlePeopleText(lg, idle, s.now(), ledger.AutoAction(action))
		}
	}
	return s.sendCard(ctx, u, c, text, nil, true, true)
}

// checkSilent raises the silent-agent alert once per incident (silence
// never triggers a release) and clears it when the agent is back.
func (s *Scheduler) checkSilent(ctx context.Context, u *ledger.User, r *ledger.Rental, st ledger.AgentState, now time.Time) error {
	incident := strconv.FormatInt(st.LastSeen.Unix(), 10)
	c, open, err := s.openCard(ctx, r.ID, ledger.CardSilent)
	if err != nil {
		return err
	}
	gone := now.Sub(st.LastSeen)
	lg := lang(u)
	if open && !c.Closed && (c.Incident != incident || r.State() != ledger.Running) {
		c.Closed = true
		text := tr(lg, "silent_back", r.Name, chat.FormatDuration(st.LastSeen.Sub(time.Unix(mustInt(c.Incident), 0)), lg))
		if r.State() != ledger.Running {
			text = stateText(lg, r)
		}
		if c.MessageID == 0 {
			_, err := s.store.SaveCard(ctx, c)
			return err
		}
		return s.sendCard(ctx, u, &c, text, nil, false, false)
	}
	if r.State() != ledger.Running || gone < silentAfter(u) {
		return nil
	}
	if open && c.Incident == incident {
		return nil // once per incident
	}
	// Idle time is not counted while nobody watches: the streak ends at
	// its last idle sample heard, and an idle card says so.
	if st.Verdict == ledger.VerdictIdle && !st.IdleSince.IsZero() && s.hub != nil {
		if err := s.idleSilent(ctx, u, r, st, now); err != nil {
			return err
		}
	}
	c = ledger.Card{UserID: u.ID, RentalID: r.ID, Kind: ledger.CardSilent, Incident: incident}
	text := tr(lg, "silent", r.Name, chat.FormatDuration(gone, lg))
	if err := s.sendCard(ctx, u, &c, text, s.silentButtons(ctx, lg, r), true, false); err != nil {
		return err
	}
	s.decide(ctx, u, r, ledger.DecisionSilent, ledger.Msg("d_silent"), ledger.Msg("e_silent", st.LastSeen, gone))
	return nil
}

// idleSilent ends the idle streak of a rental whose agent went silent and
// turns its idle card, if one is showing, into a closed one that says
// since when the agent is silent and how long it was idle until then.
func (s *Scheduler) idleSilent(ctx context.Context, u *ledger.User, r *ledger.Rental, st ledger.AgentState, now time.Time) error {
	idleFor := st.IdleFor(now)
	end := st.IdleUntil
	if end.IsZero() || end.After(st.LastSeen) {
		end = st.LastSeen
	}
	if err := s.hub.CloseIdleAt(ctx, r.ID, end); err != nil {
		return err
	}
	c, open, err := s.openCard(ctx, r.ID, ledger.CardIdle)
	if err != nil || !open || c.Closed || c.Incident != strconv.FormatInt(st.IdleSince.Unix(), 10) {
		return err
	}
	money, _, err := s.idleCost(ctx, r, st.IdleSince, st.IdleSince.Add(idleFor))
	if err != nil {
		return err
	}
	lg := lang(u)
	c.Closed = true
	text := tr(lg, "idle_silent", r.Name, chat.FormatDuration(idleFor, lg), money.Format(), clock(u, st.LastSeen))
	if c.MessageID == 0 || c.Pending {
		c.Pending, c.Text = false, text
		_, err := s.store.SaveCard(ctx, c)
		return err
	}
	s.decide(ctx, u, r, ledger.DecisionSilent, ledger.Msg("d_idle_silent"), ledger.Msg("e_idle_silent", idleFor, st.LastSeen, money))
	return s.sendCard(ctx, u, &c, text, nil, false, false)
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// runningSince returns the start of the current running segment and when
// the user logged that start or resume.
func runningSince(r *ledger.Rental) (at, logged time.Time) {
	for _, e := range r.Events {
		if e.Kind == ledger.EventStart || e.Kind == ledger.EventResume {
			at, logged = e.At, e.RecordedAt
		}
	}
	return at, logged
}

// checkLongRun reminds once per running segment about a rental without an
// agent that has run for the user's LongRun. The LongRun counts from the
// later of the segment's start and when the user logged it (the rental,
// or the resume that began the segment): a rental or resume logged today
// that began weeks ago is the user's fresh word that it runs, so asking
// "still using it?" at once would only be noise. The card still states
// how long it has really been running.
func (s *Scheduler) checkLongRun(ctx context.Context, u *ledger.User, r *ledger.Rental, now time.Time) error {
	long := u.Settings.LongRun
	if long <= 0 {
		long = 12 * time.Hour
	}
	since, logged := runningSince(r)
	counted := since
	for _, t := range []time.Time{logged, r.CreatedAt} {
		if t.After(counted) {
			counted = t
		}
	}
	if since.IsZero() || now.Sub(counted) < long {
		return nil
	}
	c, seen, err := s.cardFor(ctx, u, r, ledger.CardLongRun, strconv.FormatInt(since.Unix(), 10))
	if err != nil || seen {
		return err
	}
	_, total, err := s.idleCost(ctx, r, since, now)
	if err != nil {
		return err
	}
	lg := lang(u)
	msg := tr(lg, "long_run", r.Name, chat.FormatDuration(now.Sub(since), lg), total.Format())
	return s.sendCard(ctx, u, &c, msg, [][]button{{{text(lg, "btn_released"), ActReleased, r.ID}, {text(lg, "btn_keep"), ActKeep, r.ID}}}, true, false)
}

// checkLease reminds LeaseWarn before a lease ends (Extend 2h / Release at
// end), and once more when it has ended with the rental still running.
func (s *Scheduler) checkLease(ctx context.Context, u *ledger.User, r *ledger.Rental, hasAgent bool, now time.Time) error {
	if r.State() == ledger.Released {
		return nil
	}
	stored, ok, err := s.store.LeaseEnd(ctx, r.ID)
	if err != nil {
		return err
	}
	le, ok := ledger.LeaseEndOf(r, stored, ok)
	if !ok || now.Before(le.EndsAt.Add(-s.cfg.LeaseWarn)) {
		return nil
	}
	ended := !now.Before(le.EndsAt)
	incident := strconv.FormatInt(le.EndsAt.Unix(), 10)
	if ended {
		if le.ReleaseAtEnd || r.State() != ledger.Running {
			return nil // the agent enforces it; its order result tells the user
		}
		incident = "end:" + incident
	}
	c, seen, err := s.cardFor(ctx, u, r, ledger.CardLease, incident)
	if err != nil || seen {
		return err
	}
	var msg string
	lg := lang(u)
	btns := [][]button{{{text(lg, "btn_extend"), ActExtend, r.ID}}}
	if ended {
		msg = tr(lg, "lease_ended", r.Name, clock(u, le.EndsAt))
	} else {
		msg = tr(lg, "lease_ends", r.Name, clock(u, le.EndsAt), chat.FormatDuration(le.EndsAt.Sub(now), lg))
		if le.ReleaseAtEnd {
			msg += tr(lg, "lease_agent_releases")
		}
	}
	if hasAgent && !le.ReleaseAtEnd && !ended {
		btns[0] = append(btns[0], button{text(lg, "btn_release_end"), ActReleaseAtEnd, r.ID})
	} else if hasAgent && ended {
		btns[0] = append(btns[0], button{text(lg, "btn_release_now"), ActRelease, r.ID})
	} else if !hasAgent {
		btns[0] = append(btns[0], button{text(lg, "btn_released"), ActReleased, r.ID})
	}
	return s.sendCard(ctx, u, &c, msg, btns, true, le.ReleaseAtEnd)
}

// flushPending sends the cards held by quiet hours once they are over.
func (s *Scheduler) flushPending(ctx context.Context, users map[int64]*ledger.User) error {
	cards, err := s.store.OpenCards(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range cards {
		if !c.Pending {
			continue
		}
		u := users[c.UserID]
		if u == nil {
			uu, err := s.store.User(ctx, c.UserID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			u = &uu
		}
		if ledger.InQuietHours(u, s.now()) {
			continue
		}
		r, err := s.store.RentalByID(ctx, c.RentalID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var btns [][]button
		switch c.Kind {
		case ledger.CardIdle:
			btns = idleButtons(lang(u), r)
		case ledger.CardJob:
			btns = jobButtons(lang(u), r)
		case ledger.CardSilent:
			btns = s.silentButtons(ctx, lang(u), r)
		case ledger.CardLongRun:
			btns = releasedButtons(lang(u), r)
		case ledger.CardReceipt:
			btns = s.receiptButtonsNow(ctx, lang(u), r)
		}
		c := c
		if err := s.sendCard(ctx, u, &c, c.Text, btns, true, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// label is how a card names rental r: its address when another rental of
// the user has had its name (a released one the name was free again
// after), as /status lists it, else its name. A failed read gives the
// name: a card is not worth failing over it.
func (s *Scheduler) label(ctx context.Context, u *ledger.User, r *ledger.Rental) string {
	same, err := s.store.RentalsNamed(ctx, r.UserID, r.Name)
	if err != nil {
		s.log.Error("scheduler: rentals of a name", "rental", r.ID, "err", err)
		return r.Name
	}
	if ref, ok := ledger.RentalRefs(same, u.Location())[pick(same, r.ID)]; ok {
		return ref
	}
	return r.Name
}

// pick returns the rental of rs with the given ID, or nil.
func pick(rs []*ledger.Rental, id int64) *ledger.Rental {
	for _, x := range rs {
		if x.ID == id {
			return x
		}
	}
	return nil
}
