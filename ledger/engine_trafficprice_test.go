package ledger

import (
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestStatementAsOf_TrafficPriceChange: a rental's traffic price that
// changes part-way bills the GB above the month's free allowance at the
// price in force when each byte was used.
func TestStatementAsOf_TrafficPriceChange(t *testing.T) {
	const gib = int64(1) << 30
	use := func(d time.Duration, gb int64) TrafficUsage {
		return TrafficUsage{At: off(d), Bytes: gb * gib, Direction: Out}
	}
	tests := []struct {
		name   string
		free   string
		prices []TrafficPrice
		usage  []TrafficUsage
		want   string
	}{
		{"no change: 30 GB × 0.5", "0", nil, []TrafficUsage{use(hour, 10), use(3*hour, 20)}, "15.00"},
		{"10 GB at 0.5, then 20 GB at 0.8", "0", []TrafficPrice{{At: off(2 * hour), PricePerGB: MustDecimal("0.8")}},
			[]TrafficUsage{use(hour, 10), use(3*hour, 20)}, "21.00"},
		{"usage at the change's second is at the new price", "0", []TrafficPrice{{At: off(3 * hour), PricePerGB: MustDecimal("0.8")}},
			[]TrafficUsage{use(hour, 10), use(3*hour, 20)}, "21.00"},
		// 25 GB free: the first 10 GB and 15 of the next 20 are free; the
		// 5 above it were used after the change.
		{"the allowance is used up first", "25", []TrafficPrice{{At: off(2 * hour), PricePerGB: MustDecimal("0.8")}},
			[]TrafficUsage{use(hour, 10), use(3*hour, 20)}, "4.00"},
		{"two changes", "0", []TrafficPrice{{At: off(2 * hour), PricePerGB: MustDecimal("0.8")}, {At: off(4 * hour), PricePerGB: MustDecimal("0")}},
			[]TrafficUsage{use(hour, 10), use(3*hour, 20), use(5*hour, 100)}, "21.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRental("box1", PerSecond, "0", UnitHour, CNY, ev(EventStart, 0))
			r.Traffic = TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.5"), FreeGB: MustDecimal(tt.free), Direction: Out}
			r.TrafficPrices, r.TrafficUsage = tt.prices, tt.usage
			st := StatementAsOf(bookOf(r), off(6*hour))
			money(t, st.Rentals[0].Traffic, tt.want)
			money(t, st.Total(CNY).Traffic, tt.want)
		})
	}
}

// TestProperty_TrafficPriceChangesMatchReference: random usage over a few
// months with random price changes costs exactly what a plain walk says:
// per calendar month, in time order, the GiB above the allowance not yet
// used up, each at the price in force at its usage, summed as exact
// rationals and rounded once.
func TestProperty_TrafficPriceChangesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 23))
	prices := []string{"0", "0.5", "0.8", "0.09", "1.234"}
	frees := []string{"0", "5", "100", "0.5"}
	for i := range 300 {
		span := time.Duration(1+rng.Int64N(90)) * day
		r := newRental("r", PerSecond, "0", UnitHour, CNY, ev(EventStart, 0))
		r.Traffic = TrafficTerms{Priced: true, PricePerGB: MustDecimal(prices[rng.IntN(len(prices))]),
			FreeGB: MustDecimal(frees[rng.IntN(len(frees))]), Direction: []Direction{Out, In, Both}[rng.IntN(3)]}
		for range rng.IntN(12) {
			r.TrafficUsage = append(r.TrafficUsage, TrafficUsage{
				At:    off(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Second),
				Bytes: rng.Int64N(200 << 30), Direction: []Direction{Out, In}[rng.IntN(2)],
			})
		}
		sort.SliceStable(r.TrafficUsage, func(a, b int) bool { return r.TrafficUsage[a].At.Before(r.TrafficUsage[b].At) })
		for range rng.IntN(4) {
			r.TrafficPrices = append(r.TrafficPrices, TrafficPrice{
				At: off(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Second), PricePerGB: MustDecimal(prices[rng.IntN(len(prices))]),
			})
		}
		sort.SliceStable(r.TrafficPrices, func(a, b int) bool { return r.TrafficPrices[a].At.Before(r.TrafficPrices[b].At) })
		asOf := off(time.Duration(rng.Int64N(int64(span + span/4)))).Truncate(time.Second)

		want := new(big.Rat)
		left := map[string]*big.Rat{} // free GiB left per month
		for _, u := range r.TrafficUsage {
			if !u.At.Before(asOf) || r.Traffic.Direction != Both && u.Direction != r.Traffic.Direction {
				continue
			}
			month := u.At.UTC().Format("2006-01")
			if left[month] == nil {
				left[month] = r.Traffic.FreeGB.Rat()
			}
			gib := new(big.Rat).SetFrac(big.NewInt(u.Bytes), big.NewInt(1<<30))
			free := left[month]
			if gib.Cmp(free) <= 0 {
				free.Sub(free, gib)
				continue
			}
			gib.Sub(gib, free)
			free.SetInt64(0)
			price := r.Traffic.PricePerGB
			for _, p := range r.TrafficPrices {
				if !p.At.After(u.At) {
					price = p.PricePerGB
				}
			}
			want.Add(want, gib.Mul(gib, price.Rat()))
		}
		st := StatementAsOf(bookOf(r), asOf)
		if got, w := st.Rentals[0].Traffic, Round(want, CNY); got != w {
			t.Fatalf("case %d: traffic %s, reference %s (terms %+v, usage %+v, prices %+v, as of %s)",
				i, got, w, r.Traffic, r.TrafficUsage, r.TrafficPrices, asOf)
		}
	}
}
