package ledger

import (
	"math"
	"math/big"
	"sort"
	"time"
)

// BalanceStatus is a prepaid platform balance worked out from what the
// user recorded, and how long it lasts at the current burn rate.
type BalanceStatus struct {
	Platform string
	Currency Currency
	Balance  Money
	AsOf     time.Time // the now it was computed for
	Since    time.Time // the balance record (or first top-up) it starts from
	Recorded bool      // true: from a balance record; false: from top-ups alone
	// FromAPI is true when that record was read from the platform's API
	// (BalanceRecord.API), not typed with /balance.
	FromAPI bool
	// BurnPerHour is the current spend rate: running rentals' compute
	// (always-on ones until released; a prepaid package burns nothing
	// until its period ends, since it is already paid) plus live volumes'
	// storage. Rounded for display; RunsOutAt uses the exact rate.
	BurnPerHour Money
	// RunsOutAt is when the balance reaches zero at that rate: AsOf if it
	// is already zero or below, nil if nothing burns.
	RunsOutAt *time.Time
	Unpriced  int // lines of this platform and currency that could not be charged
}

// Balances returns, per platform, the balance now: the last balance record
// at or before now, plus top-ups after it, minus charges accrued from it
// until now (every compute, storage, traffic and one-off line of that
// platform and currency). With no balance record it is the sum of top-ups
// minus the charges since the first top-up; a platform with neither has no
// entry. A platform's currency is that of its latest record or top-up;
// amounts in other currencies on the same platform are ignored. A top-up
// recorded at the very instant of the balance record is taken as already
// in it.
func Balances(b *Book, now time.Time) map[string]BalanceStatus {
	type fact struct {
		at  time.Time
		cur Currency
	}
	latest := map[string]fact{}
	note := func(p string, at time.Time, c Currency) {
		if at.After(now) {
			return
		}
		if f, ok := latest[p]; !ok || !at.Before(f.at) {
			latest[p] = fact{at, c}
		}
	}
	for _, r := range b.Balances {
		note(r.Platform, r.At, r.Currency)
	}
	for _, t := range b.TopUps {
		note(t.Platform, t.At, t.Currency)
	}
	out := make(map[string]BalanceStatus, len(latest))
	if len(latest) == 0 {
		return out
	}
	e := newEngine(b)
	platforms := make([]string, 0, len(latest))
	for p := range latest {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	for _, p := range platforms {
		out[p] = e.balance(p, latest[p].cur, now)
	}
	return out
}

func (e *engine) balance(plat string, c Currency, now time.Time) BalanceStatus {
	bs := BalanceStatus{Platform: plat, Currency: c, AsOf: now, Balance: Money{Currency: c}, BurnPerHour: Money{Currency: c}}
	var rec *BalanceRecord
	for i := range e.b.Balances {
		r := &e.b.Balances[i]
		if r.Platform == plat && r.Currency == c && !r.At.After(now) && (rec == nil || !r.At.Before(rec.At)) {
			rec = r
		}
	}
	if rec != nil {
		bs.Since, bs.Recorded, bs.FromAPI = rec.At, true, rec.API
		bs.Balance = MoneyFromDecimal(rec.Amount, c)
	} else {
		first := true
		for _, t := range e.b.TopUps {
			if t.Platform == plat && t.Currency == c && !t.At.After(now) && (first || t.At.Before(bs.Since)) {
				bs.Since, first = t.At, false
			}
		}
	}
	for _, t := range e.b.TopUps {
		if t.Platform != plat || t.Currency != c || t.At.After(now) {
			continue
		}
		if rec == nil || t.At.After(rec.At) {
			bs.Balance = bs.Balance.Add(MoneyFromDecimal(t.Amount, c))
		}
	}
	a, b := unix(bs.Since), unix(now)
	burn := new(big.Rat)
	for _, r := range e.b.Rentals {
		if r.Platform != plat || r.Currency != c || !e.rentalActive(r, a, b) {
			continue
		}
		m := e.rentalMeter(r)
		pa, pb := e.rentalAt(m, a), e.rentalAt(m, b)
		if r.Priced {
			bs.Balance = bs.Balance.Add(sub(pa.compute, pb.compute))
			burn.Add(burn, r.ratePerSecond(now))
		} else if m.start < b && m.end > a {
			bs.Unpriced++
		}
		if m.traffic != nil {
			if r.Traffic.Priced {
				bs.Balance = bs.Balance.Add(sub(pa.traffic, pb.traffic))
			} else if m.traffic.usedIn(a, b) {
				bs.Unpriced++
			}
		}
	}
	for _, v := range e.b.Volumes {
		if v.Platform != plat || v.Currency != c || !volumeActive(v, a, b) {
			continue
		}
		if !v.Priced {
			bs.Unpriced++
			continue
		}
		m := e.volumeMeter(v)
		bs.Balance = bs.Balance.Add(sub(e.volumeAt(m, a), e.volumeAt(m, b)))
		burn.Add(burn, m.ratePerSecond(b))
	}
	for i := range e.b.Charges {
		ch := &e.b.Charges[i]
		if at := unix(ch.At); at < a || at >= b || ch.Currency != c || e.chargePlatform(ch) != plat {
			continue
		}
		bs.Balance = bs.Balance.Add(MoneyFromDecimal(ch.Amount, c).neg())
	}
	bs.BurnPerHour = Round(new(big.Rat).Mul(burn, big.NewRat(3600, 1)), c)
	switch {
	case bs.Balance.Minor <= 0:
		t := now
		bs.RunsOutAt = &t
	case burn.Sign() > 0:
		secs := new(big.Rat).Quo(bs.Balance.Decimal().Rat(), burn)
		q := new(big.Int).Quo(secs.Num(), secs.Denom())
		if q.IsInt64() && q.Int64() < math.MaxInt64/int64(time.Second)/2 {
			t := now.Add(time.Duration(q.Int64()) * time.Second)
			bs.RunsOutAt = &t
		}
	}
	return bs
}

func (m Money) neg() Money { return Money{Currency: m.Currency, Minor: -m.Minor} }

// BudgetStatus compares the month-to-date spend with the monthly budget.
type BudgetStatus struct {
	Month, End time.Time // the current local month [Month, End)
	Budget     Money
	Spent      Money    // priced spend this month to now, in the budget's currency
	Fraction   *big.Rat // Spent / Budget, exact
	Percent    int      // ⌊100 × Spent / Budget⌋
	Over       bool     // Spent > Budget
	Unpriced   int      // lines of that currency left out for having no price
}

// Budgets returns, for each of the user's budgets (User.Budgets, in that
// order), the month-to-date spend in that budget's currency against it.
// Spend in a currency with no budget is not counted against another
// currency's: there are no exchange rates in the ledger.
func Budgets(b *Book, now time.Time) []BudgetStatus {
	if len(b.User.Budgets) == 0 {
		return nil
	}
	from, end := MonthRange(now, b.User.Location())
	st := Spend(b, from, now)
	out := make([]BudgetStatus, 0, len(b.User.Budgets))
	for _, mb := range b.User.Budgets {
		if mb.Amount.Sign() <= 0 {
			continue
		}
		tot := st.Total(mb.Currency)
		bs := BudgetStatus{
			Month: from, End: end,
			Budget:   MoneyFromDecimal(mb.Amount, mb.Currency),
			Spent:    tot.Total,
			Unpriced: tot.Unpriced,
		}
		bs.Fraction, bs.Percent = BudgetShare(bs.Spent, mb.Amount)
		bs.Over = bs.Fraction.Cmp(big.NewRat(1, 1)) > 0
		out = append(out, bs)
	}
	return out
}

// BudgetShare returns spent / budget exactly and ⌊100 × spent / budget⌋
// (the percent /budget and the dashboard show), for a budget > 0.
func BudgetShare(spent Money, budget Decimal) (*big.Rat, int) {
	f := new(big.Rat).Quo(spent.Decimal().Rat(), budget.Rat())
	pct := new(big.Rat).Mul(f, big.NewRat(100, 1))
	q := new(big.Int).Div(pct.Num(), pct.Denom()) // Euclidean: the floor, as Denom > 0
	if !q.IsInt64() {
		return f, math.MaxInt
	}
	return f, int(q.Int64())
}

// SpendCurrencies returns the currencies the user spends in (those of their
// rentals, volumes and charges), sorted by code.
func SpendCurrencies(b *Book) []Currency {
	seen := map[Currency]bool{}
	for _, r := range b.Rentals {
		seen[r.Currency] = true
	}
	for _, v := range b.Volumes {
		seen[v.Currency] = true
	}
	for _, c := range b.Charges {
		seen[c.Currency] = true
	}
	delete(seen, "")
	out := make([]Currency, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
