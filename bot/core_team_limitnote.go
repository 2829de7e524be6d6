package bot

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// limitCurrencyNote is the line the reply to a rate or month limit adds
// when none of the rentals it would count is priced in its currency and
// some are priced in others: the scheduler compares a rate or month
// bound only with rentals of the limit's currency (money of different
// currencies is never added), so a "¥100/h" limit on a team renting in
// USD would never warn, and nobody would know. A GPU bound counts GPUs
// whatever their price's currency, so a limit with no rate or month
// bound gets no note.
//
// The rentals looked at are the limit's scope's running ones, else the
// scope's rentals of this month (in the team ledger's zone), else, when
// the scope has none, the team ledger's, running then this month: a new
// member's limit is told what the team rents in. "" when no note is due
// (no rentals at all, or one of them in the limit's currency).
func (r teams) limitCurrencyNote(l ledger.Limit, who string) (string, error) {
	if l.RatePerHour.IsZero() && l.Month.IsZero() {
		return "", nil
	}
	b, err := r.c.store.Book(r.ctx, r.team.Team.Ledger())
	if err != nil {
		return "", err
	}
	type rental struct {
		label string
		r     *ledger.Rental
	}
	running := func(scoped bool) []rental {
		var out []rental
		for _, x := range b.Rentals {
			if x.State() == ledger.Running && (!scoped || limitCovers(l, x.Owner, x.Project)) {
				out = append(out, rental{x.Name, x})
			}
		}
		return out
	}
	from, _ := ledger.MonthRange(r.now, b.User.Location())
	st := ledger.Spend(b, from, r.now)
	month := func(scoped bool) []rental {
		var out []rental
		for i := range st.Rentals {
			rc := &st.Rentals[i]
			if !scoped || limitCovers(l, rc.Rental.Owner, rc.Rental.Project) {
				out = append(out, rental{rc.Label(), rc.Rental})
			}
		}
		return out
	}
	var rentals []rental
	for _, pick := range []func() []rental{
		func() []rental { return running(true) }, func() []rental { return month(true) },
		func() []rental { return running(false) }, func() []rental { return month(false) },
	} {
		if rentals = pick(); len(rentals) > 0 {
			break
		}
	}
	if len(rentals) == 0 {
		return "", nil
	}
	count := map[ledger.Currency]int{}
	for _, x := range rentals {
		if x.r.Currency == l.Currency {
			return "", nil
		}
		count[x.r.Currency]++
	}
	// The currencies by how many rentals are priced in each, the most
	// first: the example sets a limit in the first.
	curs := slices.SortedFunc(maps.Keys(count), func(a, b ledger.Currency) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b))
	})
	names := make([]string, len(curs))
	for i, c := range curs {
		names[i] = string(c)
	}
	example := []string{"/team limit", limitScopeWord(l, who)}
	if !l.RatePerHour.IsZero() {
		example = append(example, "rate=10/h")
	}
	if !l.Month.IsZero() {
		example = append(example, "month=3000")
	}
	example = append(example, string(curs[0]))
	cmdText := strings.Join(example, " ")
	if len(rentals) == 1 {
		return r.tt("team_limit_currency_note_one", string(l.Currency), rentals[0].label, strings.Join(names, ", "), string(curs[0]), cmdText), nil
	}
	return r.tt("team_limit_currency_note", string(l.Currency), rentals[0].label, strconv.Itoa(len(rentals)-1), strings.Join(names, ", "), string(curs[0]), cmdText), nil
}

// limitCovers reports whether a rental of owner and project counts
// against l, as the scheduler decides it (scheduler/approval.go inScope).
func limitCovers(l ledger.Limit, owner int64, project string) bool {
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

// limitScopeWord is how /team limit names l's scope: the member as the
// admin wrote them, project=NAME, or team.
func limitScopeWord(l ledger.Limit, who string) string {
	switch l.Scope {
	case ledger.ScopeMember:
		if who == "" {
			return l.Subject
		}
		return who
	case ledger.ScopeProject:
		return "project=" + l.Subject
	}
	return "team"
}
