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
	// Unpriced counts the row's lines that have no price (a rental's
	// compute or traffic, a volume's storage), left out of Amount as
	// they are out of the statement's total: a row of ¥0.00 with
	// Unpriced > 0 is money nobody can tell yet, not nothing spent. The
	// rows of a currency add up to Totals[currency].Unpriced.
	Unpriced int
}

// Split returns the statement's priced money by owner and project, from
// its lines as they are charged (a rental's compute and traffic, each
// volume's storage, each one-off charge), so that the rows of a currency
// add up to exactly the statement's Totals[currency].Total: the split
// never disagrees with the total or the export. Rows are in currency,
// owner, project order; rows that add up to zero with no line priced
// still appear when a line of theirs is in the statement, with their
// unpriced lines counted (from the statement's Unpriced, so that the
// counts add up to its Totals' Unpriced).
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
	unpriced := map[key]int{}
	for _, l := range s.Unpriced {
		var k key
		switch {
		case l.Category == CategoryStorage && l.Volume != nil:
			k = key{l.Volume.Owner, l.Volume.Project, l.Volume.Currency}
		case l.Rental != nil:
			k = key{l.Rental.Owner, l.Rental.Project, l.Rental.Currency}
		default:
			continue
		}
		unpriced[k]++
		add(k.owner, k.project, Money{Currency: k.cur}) // the row appears
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
		out = append(out, SplitRow{Owner: k.owner, Project: k.project, Currency: k.cur, Amount: m, Unpriced: unpriced[k]})
	}
	slices.SortFunc(out, func(a, b SplitRow) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Project, b.Project))
	})
	return out
}

// SplitBy sums rows by owner (byProject false) or by project, keeping
// the currencies apart, and their unpriced lines with them: the two
// lists of /spend's and the nightly summary's team split.
func SplitBy(rows []SplitRow, byProject bool) []SplitRow {
	type key struct {
		owner   int64
		project string
		cur     Currency
	}
	sums := map[key]Money{}
	unpriced := map[key]int{}
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
		unpriced[k] += r.Unpriced
	}
	out := make([]SplitRow, 0, len(order))
	for _, k := range order {
		out = append(out, SplitRow{Owner: k.owner, Project: k.project, Currency: k.cur, Amount: sums[k], Unpriced: unpriced[k]})
	}
	slices.SortStableFunc(out, func(a, b SplitRow) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(b.Amount.Minor, a.Amount.Minor))
	})
	return out
}
