package ledger

import (
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
