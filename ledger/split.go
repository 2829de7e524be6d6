package ledger

import (
	"cmp"
	"slices"
)

// SplitRow is what one owner spent on one project in one currency in a
// statement: the team's "who spent what on which project".
type SplitRow struct {
	Owner    int64  // 0: no owner known (a synced rental nobody claimed yet)
	Project  string // "" no project
	Currency Currency
	Amount   Money
}

// Split returns the statement's priced money by owner and project, from
// its lines as they are charged (a rental's compute and traffic, each
// volume's storage, each one-off charge), so that the rows of a currency
// add up to exactly the statement's Totals[currency].Total: the split
// never disagrees with the total or the export. Rows are in currency,
// owner, project order; rows that add up to zero with no line priced
// still appear when a line of theirs is in the statement.
func Split(s *Statement) []SplitRow {
	type key struct {
		owner   int64
		project string
		cur     Currency
	}
	sums := map[key]Money{}
	add := func(owner int64, project string, m Money) {
		k := key{owner, project, m.Currency}
		sums[k] = sums[k].Add(m)
	}
	for _, rc := range s.Rentals {
		r := rc.Rental
		sum := Money{Currency: r.Currency}
		if rc.ComputePriced {
			sum = sum.Add(rc.Compute)
		}
		if r.Traffic.Priced {
			sum = sum.Add(rc.Traffic)
		}
		add(r.Owner, r.Project, sum)
	}
	for _, vc := range s.Volumes {
		m := vc.Charge
		if !vc.Priced {
			m = Money{Currency: vc.Volume.Currency}
		}
		add(vc.Volume.Owner, vc.Volume.Project, m)
	}
	for _, cc := range s.Others {
		add(cc.Charge.Owner, cc.Charge.Project, cc.Amount)
	}
	out := make([]SplitRow, 0, len(sums))
	for k, m := range sums {
		out = append(out, SplitRow{Owner: k.owner, Project: k.project, Currency: k.cur, Amount: m})
	}
	slices.SortFunc(out, func(a, b SplitRow) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Project, b.Project))
	})
	return out
}

// SplitBy sums rows by owner (byProject false) or by project, keeping
// the currencies apart: the two lists of /spend's and the nightly
// summary's team split.
func SplitBy(rows []SplitRow, byProject bool) []SplitRow {
	type key struct {
		owner   int64
		project string
		cur     Currency
	}
	sums := map[key]Money{}
	var order []key
	for _, r := range rows {
		k := key{owner: r.Owner, cur: r.Currency}
		if byProject {
			k = key{project: r.Project, cur: r.Currency}
		}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] = sums[k].Add(r.Amount)
	}
	out := make([]SplitRow, 0, len(order))
	for _, k := range order {
		out = append(out, SplitRow{Owner: k.owner, Project: k.project, Currency: k.cur, Amount: sums[k]})
	}
	slices.SortStableFunc(out, func(a, b SplitRow) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(b.Amount.Minor, a.Amount.Minor))
	})
	return out
}
