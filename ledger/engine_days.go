package ledger

import (
	"math/big"
	"sort"
	"time"
)

// DaySpend is one local day's spend, for the nightly chart and the
// dashboard's month.
type DaySpend struct {
	Day    time.Time // local midnight that starts the day
	End    time.Time // the next midnight, or now for today
	Totals map[Currency]*Totals
	Idle   map[Currency]Money // compute accrued while idle (part of Compute)
}

// DailySpend returns the spend of each of the last days local days, oldest
// first, today (up to now) last. Each line is metered once per day
// boundary, so the days add up exactly to the spend of the whole span.
func DailySpend(b *Book, days int, now time.Time) []DaySpend {
	if days <= 0 {
		return nil
	}
	loc := b.User.Location()
	today, _ := DayRange(now, loc)
	y, mo, d := today.Date()
	bounds := make([]time.Time, days+1)
	for i := range days {
		bounds[i] = time.Date(y, mo, d-(days-1-i), 0, 0, 0, 0, loc)
	}
	bounds[days] = now
	return spendByDay(b, bounds)
}

// MonthDays returns the spend of each local day in [from, to), oldest
// first: from's day first (cut from from), the day holding to last (cut
// at to). For a month, from is the 1st's local midnight and to the next
// month's start or now. Each line is metered once per day boundary, so
// the days add up exactly to Spend(b, from, to). Nil when to is not after
// from.
func MonthDays(b *Book, from, to time.Time) []DaySpend {
	if !to.After(from) {
		return nil
	}
	loc := b.User.Location()
	bounds := []time.Time{from}
	day, _ := DayRange(from, loc)
	y, mo, d := day.Date()
	for i := 1; ; i++ {
		next := time.Date(y, mo, d+i, 0, 0, 0, 0, loc)
		if !next.Before(to) {
			break
		}
		bounds = append(bounds, next)
	}
	bounds = append(bounds, to)
	return spendByDay(b, bounds)
}

// spendByDay returns the spend between consecutive bounds (at least two,
// increasing): out[i] is [bounds[i], bounds[i+1]).
func spendByDay(b *Book, bounds []time.Time) []DaySpend {
	e := newEngine(b)
	days := len(bounds) - 1
	out := make([]DaySpend, days)
	ts := make([]int64, days+1)
	for i, t := range bounds {
		ts[i] = unix(t)
		if i < days {
			out[i] = DaySpend{Day: t, End: bounds[i+1], Totals: make(map[Currency]*Totals), Idle: make(map[Currency]Money)}
		}
	}
	a, bEnd := ts[0], ts[days]
	add := func(i int, cat Category, m Money) {
		t, ok := out[i].Totals[m.Currency]
		if !ok {
			t = newTotals(m.Currency)
			out[i].Totals[m.Currency] = t
		}
		t.add(cat, m)
	}
	unpriced := func(i int, c Currency) {
		t, ok := out[i].Totals[c]
		if !ok {
			t = newTotals(c)
			out[i].Totals[c] = t
		}
		t.Unpriced++
	}
	prev := make([]rentalPoint, days+1)
	for _, r := range b.Rentals {
		if !e.rentalActive(r, a, bEnd) {
			continue
		}
		m := e.rentalMeter(r)
		for i, t := range ts {
			prev[i] = e.rentalAt(m, t)
		}
		start, end := m.start, m.end
		for i := range out {
			lo, hi := ts[i], ts[i+1]
			if r.Priced {
				add(i, CategoryCompute, sub(prev[i+1].compute, prev[i].compute))
				if idle := sub(prev[i+1].idle, prev[i].idle); idle.Minor != 0 {
					out[i].Idle[r.Currency] = out[i].Idle[r.Currency].Add(idle)
				}
			} else if start < hi && end > lo {
				unpriced(i, r.Currency)
			}
			if m.traffic != nil {
				if r.Traffic.Priced {
					add(i, CategoryTraffic, sub(prev[i+1].traffic, prev[i].traffic))
				} else if m.traffic.usedIn(lo, hi) {
					unpriced(i, r.Currency)
				}
			}
		}
	}
	for _, v := range b.Volumes {
		if !volumeActive(v, a, bEnd) {
			continue
		}
		m := e.volumeMeter(v)
		var last Money
		for i, t := range ts {
			if !v.Priced {
				if i < days && volumeActive(v, t, ts[i+1]) {
					unpriced(i, v.Currency)
				}
				continue
			}
			cur := e.volumeAt(m, t)
			if i > 0 {
				add(i-1, CategoryStorage, sub(cur, last))
			}
			last = cur
		}
	}
	for i := range b.Charges {
		c := &b.Charges[i]
		at := unix(c.At)
		if at < a || at >= bEnd {
			continue
		}
		j := sort.Search(days, func(k int) bool { return ts[k+1] > at })
		add(j, CategoryOther, MoneyFromDecimal(c.Amount, c.Currency))
	}
	return out
}

// BurnPerHour returns the current spend rate per currency, across all
// platforms: running rentals' compute (always-on ones until released; a
// prepaid package burns nothing until its period ends) plus live priced
// volumes' storage, as BalanceStatus.BurnPerHour does for one platform.
// Rounded once to the currency's minor unit; currencies that burn nothing
// have no entry.
func BurnPerHour(b *Book, now time.Time) map[Currency]Money {
	e := newEngine(b)
	rates := map[Currency]*big.Rat{}
	add := func(c Currency, r *big.Rat) {
		if r.Sign() == 0 {
			return
		}
		if rates[c] == nil {
			rates[c] = new(big.Rat)
		}
		rates[c].Add(rates[c], r)
	}
	t := unix(now)
	for _, r := range b.Rentals {
		add(r.Currency, r.ratePerSecond(now))
	}
	for _, v := range b.Volumes {
		if !v.Priced || !volumeActive(v, t, t+1) {
			continue
		}
		add(v.Currency, e.volumeMeter(v).ratePerSecond(t))
	}
	out := make(map[Currency]Money, len(rates))
	for c, r := range rates {
		out[c] = Round(new(big.Rat).Mul(r, big.NewRat(3600, 1)), c)
	}
	return out
}
