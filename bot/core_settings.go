package bot

import (
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// settings is the family of what the user sets for themself: /settings
// (language, zone, reminders) and /budget.
type settings struct{ *req }

func (settings) register(t *table) {
	on(t, settings.settings)
	on(t, settings.budget)
}

// budget sets or removes one currency's monthly budget, or lists them.
// An amount without a currency is in the one currency the user spends in;
// when they spend in several the reply asks which and nothing changes, and
// when they spend in none the language's currency is assumed and said.
func (r settings) budget(c command.BudgetCmd) error {
	if !c.Set {
		b, err := r.book()
		if err != nil {
			return err
		}
		return r.answer(r.plain(view.RenderBudget(b, r.now, r.lang)))
	}
	if err := r.adminOnly(); err != nil {
		return err // a team's budget is its admins'
	}
	u := r.lu
	cur := c.Amount.Currency
	assumed := false
	switch {
	case c.All:
		u.Budgets = nil
	case c.Amount.Value.IsZero() && cur == "":
		// "off" without a currency: the one budget there is; with
		// several, which one is asked, as for an amount without a sign.
		switch len(u.Budgets) {
		case 0:
			return r.answer(r.plain(r.wt("budget_off_nothing")))
		case 1:
			cur = u.Budgets[0].Currency
			u.Budgets = nil
		default:
			var syms, eg []string
			for _, x := range u.Budgets {
				syms = append(syms, x.Currency.Symbol())
				eg = append(eg, "<code>/budget off "+x.Currency.Symbol()+"</code>")
			}
			eg = append(eg, "<code>/budget off all</code>")
			return r.answer(r.plain(r.wt("budget_off_which", strings.Join(syms, ", "), chat.RawHTML(strings.Join(eg, " / ")))))
		}
	case c.Amount.Value.IsZero():
		if _, ok := u.Budget(cur); !ok {
			return r.answer(r.plain(r.t("budget_off_none", cur.Symbol())))
		}
		u.Budgets = u.WithBudget(cur, ledger.Decimal{})
	default:
		if cur == "" {
			b, err := r.book()
			if err != nil {
				return err
			}
			switch spent := budgetCurrencies(b, u); len(spent) {
			case 0:
				cur, assumed = r.defaultCurrency(b), true
			case 1:
				cur = spent[0]
			default:
				var syms, eg []string
				for _, x := range spent {
					syms = append(syms, x.Symbol())
					eg = append(eg, "<code>/budget "+x.Symbol()+c.Amount.Value.String()+"/month</code>")
				}
				return r.answer(r.plain(r.t("budget_which", strings.Join(syms, ", "), chat.RawHTML(strings.Join(eg, " / ")))))
			}
		}
		u.Budgets = u.WithBudget(cur, c.Amount.Value)
	}
	if _, err := r.c.store.UpdateUser(r.ctx, r.act(), u); err != nil {
		return err
	}
	switch {
	case c.All:
		return r.send(r.plain(r.t("budget_off")))
	case c.Amount.Value.IsZero():
		return r.send(r.plain(r.t("budget_off_one", cur.Symbol())))
	}
	text := r.t("budget_set", view.FormatAmount(c.Amount.Value, cur))
	if assumed {
		text += "\n" + r.t("budget_assumed", string(cur))
	}
	return r.send(r.plain(text))
}

func (r settings) settings(c command.SettingsCmd) error {
	if c.Empty() {
		return r.answer(r.plain(r.settingsText(r.lu)))
	}
	if r.team != nil && c.Lang != nil {
		// The language is the person's own, in every ledger they use; the
		// rest is the team's. A member who is no admin is refused the whole
		// command before anything changes when it holds a team setting.
		rest := c
		if rest.Lang = nil; !rest.Empty() {
			if err := r.adminOnly(); err != nil {
				return err
			}
		}
		if err := r.ownLang(*c.Lang); err != nil {
			return err
		}
		if c.Lang = nil; c.Empty() {
			return r.send(r.plain(r.t("settings_saved") + "\n" + r.settingsText(r.lu)))
		}
	}
	if err := r.adminOnly(); err != nil {
		return err // a team's settings are its admins'
	}
	u := r.lu
	if c.Lang != nil {
		u.Lang = chat.NormLang(*c.Lang)
	}
	if c.TZ != nil {
		u.TZ = *c.TZ
	}
	if c.SummaryAt != nil {
		// -1 (summary=off) turns the nightly summary off; /summary still
		// answers on demand.
		u.Settings.SummaryAt = max(*c.SummaryAt, -1)
	}
	if c.IdleWarn != nil {
		u.Settings.IdleWarn = *c.IdleWarn
	}
	if c.Silent != nil {
		u.Settings.Silent = *c.Silent
	}
	if c.LongRun != nil {
		u.Settings.LongRun = *c.LongRun
	}
	if c.Quiet != nil {
		u.Settings.QuietFrom, u.Settings.QuietTo = c.Quiet.From, c.Quiet.To
		if c.Quiet.From < 0 {
			u.Settings.QuietFrom, u.Settings.QuietTo = -1, -1
		}
	}
	if c.BenchOff != nil {
		u.Settings.BenchOff = *c.BenchOff
	}
	got, err := r.c.store.UpdateUser(r.ctx, r.act(), u)
	if err != nil {
		return err
	}
	if c.BenchOff != nil {
		// The hub asks agents for benches by this setting and caches it:
		// tell it, so bench=off holds from the next heartbeat.
		if w, ok := r.c.watcher.(userWatcher); ok {
			w.UserChanged(got.ID)
		}
	}
	if r.team != nil {
		r.lu, r.loc = got, got.Location() // the team's settings and clock; the reply stays in the sender's language
	} else {
		r.user, r.lu, r.lang, r.loc = got, got, chat.NormLang(got.Lang), got.Location()
	}
	return r.send(r.plain(r.t("settings_saved") + "\n" + r.settingsText(got)))
}

func (r settings) settingsText(u ledger.User) string {
	s := u.Settings
	tz := u.TZ
	if tz == "" {
		tz = "UTC"
	}
	quiet := r.t("off")
	if s.QuietFrom >= 0 {
		quiet = hhmm(s.QuietFrom) + "-" + hhmm(s.QuietTo)
	}
	budget := r.t("off")
	if len(u.Budgets) > 0 {
		var bs []string
		for _, b := range u.Budgets {
			bs = append(bs, view.FormatAmount(b.Amount, b.Currency))
		}
		budget = strings.Join(bs, ", ")
	}
	summary := r.t("off")
	if s.SummaryAt >= 0 {
		summary = hhmm(s.SummaryAt)
	}
	bench := r.t("on")
	if s.BenchOff {
		bench = r.t("off")
	}
	return r.t("settings", chat.NormLang(u.Lang), tz, summary, chat.FormatDuration(s.IdleWarn, r.lang),
		chat.FormatDuration(s.Silent, r.lang), quiet, chat.FormatDuration(s.LongRun, r.lang), budget, bench)
}

// userWatcher is told that a user's settings changed (agent/hub.Tokens:
// the hub caches whether the user wants benches).
type userWatcher interface {
	UserChanged(userID int64)
}

// ownLang sets the sender's own language while a team's ledger is in use
// (/settings lang= there): journaled in their own ledger, under a key of
// its own (the update's with ":lang"), so the team's settings the same
// message changes are not taken for a redelivery of it.
func (r settings) ownLang(lang string) error {
	own := r.user
	own.Lang = chat.NormLang(lang)
	a := r.act()
	a.UserID, a.By = r.u.UserID, 0
	if a.Key != "" {
		a.Key += ":lang"
	}
	got, err := r.c.store.UpdateUser(r.ctx, a, own)
	if err != nil {
		return err
	}
	r.user, r.lang = got, chat.NormLang(got.Lang)
	return nil
}
