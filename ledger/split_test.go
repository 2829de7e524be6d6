package ledger

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// teamBook is randomBook turned into a team's book: its records spread
// over owners (0, a synced rental nobody claimed, among them), projects
// ("" among them) and two currencies, with attached and loose volumes
// and charges, some unpriced lines and traffic (randomRental's).
func teamBook(rng *rand.Rand, start time.Time, span time.Duration) *Book {
	b := randomBook(rng, "Asia/Shanghai", start, span, 4+rng.IntN(12), 6)
	b.User.ID = TeamLedger(7)
	owners := []int64{0, 101, 102, 103}
	projects := []string{"", "yolo-v9", "llm"}
	curs := []Currency{CNY, USD}
	for _, r := range b.Rentals {
		r.Owner, r.Project, r.Currency = owners[rng.IntN(len(owners))], projects[rng.IntN(len(projects))], curs[rng.IntN(2)]
	}
	for i, v := range b.Volumes {
		v.Owner, v.Project, v.Currency = owners[rng.IntN(len(owners))], projects[rng.IntN(len(projects))], curs[rng.IntN(2)]
		if v.RentalID == 0 && i%3 == 0 && len(b.Rentals) > 0 {
			v.RentalID = b.Rentals[rng.IntN(len(b.Rentals))].ID // attached, maybe in another currency than its rental
		}
	}
	for i := range b.Charges {
		c := &b.Charges[i]
		c.Owner, c.Project, c.Currency = owners[rng.IntN(len(owners))], projects[rng.IntN(len(projects))], curs[rng.IntN(2)]
		if rng.IntN(2) == 0 && len(b.Rentals) > 0 {
			c.RentalID = b.Rentals[rng.IntN(len(b.Rentals))].ID
		}
	}
	// More loose charges, with odd amounts, so every owner has some.
	for i := range 5 {
		b.Charges = append(b.Charges, Charge{ID: int64(100 + i), Platform: "runpod", Amount: MustDecimal(fmt.Sprintf("%d.%03d", rng.IntN(50), rng.IntN(1000))),
			Currency: curs[rng.IntN(2)], At: start.Add(time.Duration(rng.Int64N(int64(span)))), Owner: owners[rng.IntN(len(owners))],
			Project: projects[rng.IntN(len(projects))]})
	}
	return b
}

// checkSplit checks that the rows of each currency add up to exactly the
// statement's total of it, their unpriced lines to the total's unpriced
// count, and that no row is of a currency the statement has no total in.
func checkSplit(t *testing.T, what string, st *Statement, rows []SplitRow) {
	t.Helper()
	sums := map[Currency]Money{}
	unpriced := map[Currency]int{}
	for _, r := range rows {
		if r.Amount.Currency != r.Currency {
			t.Fatalf("%s: row %+v holds money of another currency", what, r)
		}
		sums[r.Currency] = sums[r.Currency].Add(r.Amount)
		unpriced[r.Currency] += r.Unpriced
	}
	for c, tot := range st.Totals {
		if unpriced[c] != tot.Unpriced {
			t.Fatalf("%s: rows of %s count %d unpriced lines, the total %d", what, c, unpriced[c], tot.Unpriced)
		}
	}
	for c, sum := range sums {
		tot, ok := st.Totals[c]
		if !ok {
			t.Fatalf("%s: rows in %s, which the statement has no total of", what, c)
		}
		if sum.Minor != tot.Total.Minor {
			t.Fatalf("%s: rows of %s add up to %s, the total is %s", what, c, sum, tot.Total)
		}
	}
	for c, tot := range st.Totals {
		if _, ok := sums[c]; !ok && tot.Total.Minor != 0 {
			t.Fatalf("%s: the total of %s is %s but no row has it", what, c, tot.Total)
		}
	}
}

// TestSplit_AddsUpToTotals: over random team books (several owners,
// projects and currencies; attached and loose volumes and charges;
// unpriced lines; traffic), the split of a statement from the beginning
// (StatementAsOf) and of windows (Spend) adds up, per currency, to
// exactly the statement's total and its unpriced lines to the total's
// count; so do SplitBy's rows by person and by project. Some books have
// unpriced lines (checked, so the count is not trivially zero).
func TestSplit_AddsUpToTotals(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	span := 60 * day
	withUnpriced := 0
	defer func() {
		if withUnpriced == 0 {
			t.Errorf("no statement had an unpriced line: the unpriced counts were not tested")
		}
	}()
	for i := range 150 {
		b := teamBook(rng, start, span)
		asOf := start.Add(time.Duration(rng.Int64N(int64(span + 10*day))))
		from := start.Add(time.Duration(rng.Int64N(int64(span))))
		to := from.Add(time.Duration(1 + rng.Int64N(int64(20*day))))
		for _, c := range []struct {
			what string
			st   *Statement
		}{
			{fmt.Sprintf("book %d as of %s", i, asOf), StatementAsOf(b, asOf)},
			{fmt.Sprintf("book %d spend %s..%s", i, from, to), Spend(b, from, to)},
		} {
			rows := Split(c.st)
			if len(c.st.Unpriced) > 0 {
				withUnpriced++
			}
			checkSplit(t, c.what, c.st, rows)
			checkSplit(t, c.what+" by person", c.st, SplitBy(rows, false))
			checkSplit(t, c.what+" by project", c.st, SplitBy(rows, true))
			for _, r := range SplitBy(rows, false) {
				if r.Project != "" {
					t.Fatalf("%s: a row by person names project %q", c.what, r.Project)
				}
			}
			for _, r := range SplitBy(rows, true) {
				if r.Owner != 0 {
					t.Fatalf("%s: a row by project names owner %d", c.what, r.Owner)
				}
			}
		}
	}
}

// TestSplit_PersonalBook: a personal ledger's records have no owner and
// no project, so its split is one row per currency, owner 0, equal to the
// total.
func TestSplit_PersonalBook(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		b := randomBook(rng, "Asia/Shanghai", start, 30*day, 8, 6)
		b.Charges = append(b.Charges, Charge{ID: 99, Platform: "runpod", Amount: MustDecimal("3.21"), Currency: USD, At: start.Add(day)})
		st := StatementAsOf(b, start.Add(40*day))
		rows := Split(st)
		if len(rows) != len(st.Totals) {
			t.Fatalf("book %d: %d rows for %d currencies: %+v", i, len(rows), len(st.Totals), rows)
		}
		for _, r := range rows {
			if r.Owner != 0 || r.Project != "" || r.Amount != st.Totals[r.Currency].Total {
				t.Fatalf("book %d: row %+v, want owner 0, no project, the total %s", i, r, st.Totals[r.Currency].Total)
			}
		}
	}
}

// TestSplit_Rows: a small book split by hand: each owner's and project's
// money, the unpriced rental counted as nothing but marked as one
// unpriced line of its row, the rows in currency, owner, project order;
// SplitBy sums them largest first and keeps the unpriced line.
func TestSplit_Rows(t *testing.T) {
	r1 := newRental("a", PerSecond, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 3*time.Hour))
	r1.ID, r1.Owner, r1.Project = 1, 101, "yolo"
	r2 := newRental("b", PerSecond, "1", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 2*time.Hour))
	r2.ID, r2.Owner, r2.Project = 2, 102, "yolo"
	r3 := newRental("c", PerSecond, "9", UnitHour, CNY, ev(EventStart, 0))
	r3.ID, r3.Owner, r3.Priced = 3, 0, false // synced, unclaimed, no price
	b := bookOf(r1, r2, r3)
	b.Charges = []Charge{
		{ID: 1, RentalID: 2, Amount: MustDecimal("0.50"), Currency: CNY, At: off(time.Hour), Owner: 102, Project: "llm"},
		{ID: 2, Amount: MustDecimal("1.25"), Currency: USD, At: off(time.Hour), Owner: 101},
	}
	st := StatementAsOf(b, off(4*time.Hour))
	got := fmt.Sprint(Split(st))
	want := fmt.Sprint([]SplitRow{
		{Owner: 0, Currency: CNY, Amount: Money{Currency: CNY}, Unpriced: 1},
		{Owner: 101, Project: "yolo", Currency: CNY, Amount: Money{Currency: CNY, Minor: 600}},
		{Owner: 102, Project: "llm", Currency: CNY, Amount: Money{Currency: CNY, Minor: 50}},
		{Owner: 102, Project: "yolo", Currency: CNY, Amount: Money{Currency: CNY, Minor: 200}},
		{Owner: 101, Currency: USD, Amount: Money{Currency: USD, Minor: 125}},
	})
	if got != want {
		t.Errorf("Split:\n got %s\nwant %s", got, want)
	}
	byProject := fmt.Sprint(SplitBy(Split(st), true))
	wantP := fmt.Sprint([]SplitRow{
		{Project: "yolo", Currency: CNY, Amount: Money{Currency: CNY, Minor: 800}},
		{Project: "llm", Currency: CNY, Amount: Money{Currency: CNY, Minor: 50}},
		{Currency: CNY, Amount: Money{Currency: CNY}, Unpriced: 1},
		{Currency: USD, Amount: Money{Currency: USD, Minor: 125}},
	})
	if byProject != wantP {
		t.Errorf("SplitBy project:\n got %s\nwant %s", byProject, wantP)
	}
}
