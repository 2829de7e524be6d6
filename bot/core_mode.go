package bot

import (
	"slices"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// checkMode holds a /rent whose billing mode was written against the
// platform's profile ("per-hour" on AutoDL, which bills per second): a
// mode changes what every minute costs, and a user who wrote "per hour"
// for the price's unit would otherwise be billed started hours without
// a word. It asks [the profile's mode] [the mode as written] [Cancel];
// nothing is recorded until a choice is pressed, and the press records
// its command without asking again (modeChosen). A choice of another
// question (the platform a typo meant) is asked about in turn. A mode on a platform
// without a profile, or the profile's own mode, is taken as written.
func (r rentals) checkMode(c command.RentCmd) (bool, error) {
	if c.ModeChosen || c.Mode == "" {
		return false, nil
	}
	p, ok := ledger.LookupProfile(c.Platform)
	if !ok || p.Mode == "" || p.Mode == c.Mode {
		return false, nil
	}
	theirs, typed, name := view.FormatMode(p.Mode, r.lang), view.FormatMode(c.Mode, r.lang), view.PlatformName(r.lang, p.Key)
	if r.inLines {
		r.failed = true
		return true, r.answer(r.plain("✗ " + r.wt("mode_profile_line", name, theirs, typed)))
	}
	shown := clip.Runes(strings.TrimSpace(r.u.Text), 200, "…")
	asProfile, asTyped := c, c
	asProfile.Mode = p.Mode
	asProfile.ModeChosen, asTyped.ModeChosen = true, true
	id := r.c.props.add(r.u.UserID, shown, []command.Command{asProfile, asTyped}, r.now)
	var row []chat.Button
	for i, label := range []string{r.wt("btn_mode_profile", theirs, name), r.wt("btn_mode_typed", typed)} {
		d, err := r.sign(actConfirm, choiceData(id, i))
		if err != nil {
			return true, err
		}
		row = append(row, chat.Button{Text: label, Data: d})
	}
	d, err := r.sign(actCancel, id)
	if err != nil {
		return true, err
	}
	out := r.plain(r.wt("mode_profile", name, theirs, typed, r.wt("mode_means_"+string(c.Mode)), shown))
	out.Buttons = [][]chat.Button{row, {{Text: r.t("btn_cancel"), Data: d}}}
	return true, r.answer(out)
}

// budgetCurrencies are the currencies an amount without a sign may be
// meant in: those spent in and those with a budget already, sorted. A
// user with a $ budget who spends only in yuan is asked about "/budget
// 3000", not given a yuan budget silently.
func budgetCurrencies(b *ledger.Book, u ledger.User) []ledger.Currency {
	out := ledger.SpendCurrencies(b)
	for _, x := range u.Budgets {
		if !slices.Contains(out, x.Currency) {
			out = append(out, x.Currency)
		}
	}
	slices.Sort(out)
	return out
}

// periodEnds writes the two ends of a /spend period so that neither can be
// read as another day: an end on another day than the start names its
// day, today's included ("yesterday 00:00 – today 00:00", "Nov 2 00:00 –
// today 12:30"); an end on the start's day is its clock ("today 00:00 –
// 12:30").
func (r *req) periodEnds(from, to time.Time) (string, string) {
	sameDay := func(a, b time.Time) bool {
		a, b = a.In(r.loc), b.In(r.loc)
		return a.Year() == b.Year() && a.YearDay() == b.YearDay()
	}
	withDay := func(t time.Time) string {
		s := view.FormatTime(t, r.loc, r.now, r.lang)
		if sameDay(t, r.now) {
			s = r.wt("today_at", s)
		}
		return s
	}
	if sameDay(from, to) {
		return withDay(from), view.FormatTime(to, r.loc, r.now, r.lang)
	}
	return withDay(from), withDay(to)
}

// modeNote is the line above a proposed rental whose mode goes against
// its platform's profile: Confirm records it as shown, so the proposal
// says what the mode means before it is pressed ("" when nothing to say).
func (r *req) modeNote(c command.RentCmd) string {
	p, ok := ledger.LookupProfile(c.Platform)
	if c.Mode == "" || !ok || p.Mode == "" || p.Mode == c.Mode {
		return ""
	}
	return r.wt("mode_profile_note", view.PlatformName(r.lang, p.Key), view.FormatMode(p.Mode, r.lang), view.FormatMode(c.Mode, r.lang), r.wt("mode_means_"+string(c.Mode)))
}
