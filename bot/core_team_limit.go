package bot

import (
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// The /team limit command: an admin's bounds per member, project or team,
// one currency each (the scheduler opens approvals over them; the note on
// a limit's currency is in core_team_limitnote.go).

// limit answers /team limit: the list, or one limit set (admins).
func (r teams) limit(c command.TeamCmd) error {
	t := r.team.Team
	if c.Limit.Scope == "" {
		ls, err := r.c.teams.Limits(r.ctx, t.ID)
		if err != nil {
			return err
		}
		if len(ls) == 0 {
			return r.answer(r.plain(r.tt("team_limits_none", t.Name)))
		}
		var b strings.Builder
		b.WriteString(r.tt("team_limits_head", t.Name))
		for i, l := range ls {
			if i == membersPerPage {
				b.WriteString("\n")
				b.WriteString(r.tt("team_limits_more", strconv.Itoa(len(ls)-i)))
				break
			}
			b.WriteString("\n")
			b.WriteString(r.tt("team_limit_line", r.scopeName(l), r.bounds(l)))
		}
		return r.answer(r.plain(b.String()))
	}
	l := c.Limit
	l.TeamID = t.ID
	if l.Scope == ledger.ScopeMember {
		m, err := r.member(c.Who)
		if err != nil {
			return err
		}
		l.Subject = strconv.FormatInt(m.UserID, 10)
	}
	if l.Currency == "" {
		l.Currency = r.teamCurrency()
	}
	old, err := r.mergeLimit(&l, c)
	if err != nil {
		return err
	}
	if err := r.c.teams.SetLimit(r.ctx, r.teamAct(r.ledgerID), l); err != nil {
		return err
	}
	if l.RatePerHour.IsZero() && l.GPUs == 0 && l.Month.IsZero() {
		if old.GPUs != 0 && old.RatePerHour.IsZero() && old.Month.IsZero() {
			// Only a count was cleared: naming a currency would read as
			// a money limit gone.
			return r.send(r.plain(r.tt("team_limit_cleared_gpus", r.scopeName(l))))
		}
		return r.send(r.plain(r.tt("team_limit_cleared", r.scopeName(l), string(l.Currency))))
	}
	text := r.tt("team_limit_set", r.scopeName(l), r.bounds(l))
	// The limit is stored: a note that cannot be worked out is left out,
	// not turned into an error the admin would read as the limit refused.
	if note, err := r.limitCurrencyNote(l, c.Who); err != nil {
		r.c.log.Warn("bot: read the team's rentals for a limit's currency note", "team", t.ID, "err", err)
	} else if note != "" {
		text += "\n" + note
	}
	return r.send(r.plain(text))
}

// mergeLimit fills the bounds the command did not write with the stored
// limit's of the same scope, subject and currency, so that
// "/team limit @bob month=3000" keeps an earlier gpus=2; a bound written
// as 0 clears it. old is the stored limit (zero when there was none).
func (r teams) mergeLimit(l *ledger.Limit, c command.TeamCmd) (old ledger.Limit, err error) {
	ls, err := r.c.teams.Limits(r.ctx, l.TeamID)
	if err != nil {
		return ledger.Limit{}, err
	}
	for _, o := range ls {
		if o.Scope != l.Scope || o.Subject != l.Subject || o.Currency != l.Currency {
			continue
		}
		old = o
		if !c.RateSet {
			l.RatePerHour = old.RatePerHour
		}
		if !c.GPUsSet {
			l.GPUs = old.GPUs
		}
		if !c.MonthSet {
			l.Month = old.Month
		}
		break
	}
	return old, nil
}

// teamCurrency is a limit's currency when none is written: the team
// ledger's (first) budget currency, else CNY.
func (r teams) teamCurrency() ledger.Currency {
	u, err := r.c.store.User(r.ctx, r.ledgerID)
	if err == nil && len(u.Budgets) > 0 {
		return u.Budgets[0].Currency
	}
	return ledger.CNY
}

// scopeName names what a limit bounds: a member, a project, the team.
func (r teams) scopeName(l ledger.Limit) string {
	switch l.Scope {
	case ledger.ScopeMember:
		id, _ := strconv.ParseInt(l.Subject, 10, 64)
		if m, err := r.c.teams.Member(r.ctx, l.TeamID, id); err == nil {
			return m.Name()
		}
		return "id" + l.Subject
	case ledger.ScopeProject:
		return teamTexts.Text(r.lang, "limit_scope_project", l.Subject)
	}
	return teamTexts.Text(r.lang, "limit_scope_team")
}

// bounds lists a limit's bounds, escaped.
func (r teams) bounds(l ledger.Limit) string {
	var parts []string
	if !l.RatePerHour.IsZero() {
		parts = append(parts, teamTexts.Text(r.lang, "limit_rate", view.FormatAmount(l.RatePerHour, l.Currency)))
	}
	if l.GPUs == 1 {
		parts = append(parts, teamTexts.Text(r.lang, "limit_gpu_one"))
	} else if l.GPUs != 0 {
		parts = append(parts, teamTexts.Text(r.lang, "limit_gpus", strconv.Itoa(l.GPUs)))
	}
	if !l.Month.IsZero() {
		parts = append(parts, teamTexts.Text(r.lang, "limit_month", view.FormatAmount(l.Month, l.Currency)))
	}
	return strings.Join(parts, " · ")
}
