package ledger

import (
	"testing"
	"time"
)

// TestCostOver: the cost of a span of a rental, each figure worked out by
// hand: seconds × the rate in force ÷ the unit's seconds, plus the
// attached volumes' storage and the traffic share.
func TestCostOver(t *testing.T) {
	gib := int64(1 << 30)
	tests := []struct {
		name          string
		r             *Rental
		vols          []*Volume
		from, to      time.Duration
		compute       string
		storage       string
		traffic       string
		total         string
		billed, run   int64
		proRata       bool
		clipFrom, clp time.Duration // the clipped span
	}{
		{"per-second: 36 min at ¥1.88/h is ¥1.128",
			newRental("a", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0)),
			nil, 30 * min1, 66 * min1, "1.13", "0.00", "0.00", "1.13", 2160, 2160, false, 30 * min1, 66 * min1},
		{"per-hour: 10 min inside a started hour is its share, $0.60, not the hour's $3.60",
			newRental("a", PerHour, "3.6", UnitHour, USD, ev(EventStart, 0)),
			nil, 10 * min1, 20 * min1, "0.60", "0.00", "0.00", "0.60", 600, 600, false, 10 * min1, 20 * min1},
		{"a price change inside the span: 30 min at $3.6/h then 30 min at $7.2/h",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0), priceEv(hour, "7.2", UnitHour)),
			nil, 30 * min1, 90 * min1, "5.40", "0.00", "0.00", "5.40", 3600, 3600, false, 30 * min1, 90 * min1},
		{"a stop inside the span: only the running hour of the two is billed",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0), ev(EventStop, hour), ev(EventResume, 2*hour)),
			nil, 30 * min1, 150 * min1, "3.60", "0.00", "0.00", "3.60", 3600, 3600, false, 30 * min1, 150 * min1},
		{"always-on bills the stopped half too",
			newRental("a", AlwaysOn, "3.6", UnitHour, USD, ev(EventStart, 0), ev(EventStop, hour)),
			nil, 30 * min1, 90 * min1, "3.60", "0.00", "0.00", "3.60", 3600, 1800, false, 30 * min1, 90 * min1},
		{"a day package's share: 1 h of ¥48/day is ¥2",
			newRental("a", AlwaysOn, "48", UnitDay, CNY, ev(EventStart, 0)),
			nil, 5 * hour, 6 * hour, "2.00", "0.00", "0.00", "2.00", 3600, 3600, false, 5 * hour, 6 * hour},
		{"the rental's minimum is not the job's: 20 s at $36/h is $0.20",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0)), func(r *Rental) { r.Min = time.Minute }),
			nil, 0, 20 * sec, "0.20", "0.00", "0.00", "0.20", 20, 20, false, 0, 20 * sec},
		{"nor its floor: 100 s at $3.6/h is $0.10",
			with(newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0)), func(r *Rental) { r.Floor = MustDecimal("10") }),
			nil, 0, 100 * sec, "0.10", "0.00", "0.00", "0.10", 100, 100, false, 0, 100 * sec},
		{"clipped at the start: the hour before it costs nothing",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, hour), ev(EventRelease, 3*hour)),
			nil, 0, 2 * hour, "3.60", "0.00", "0.00", "3.60", 3600, 3600, false, hour, 2 * hour},
		{"clipped at the release",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, hour), ev(EventRelease, 3*hour)),
			nil, 2 * hour, 5 * hour, "3.60", "0.00", "0.00", "3.60", 3600, 3600, false, 2 * hour, 3 * hour},
		{"wholly after the release: nothing",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, hour), ev(EventRelease, 3*hour)),
			nil, 4 * hour, 5 * hour, "0.00", "0.00", "0.00", "0.00", 0, 0, false, 4 * hour, 4 * hour},
		{"wholly before the start: nothing",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, hour)),
			nil, 0, 30 * min1, "0.00", "0.00", "0.00", "0.00", 0, 0, false, hour, hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bookOf(tt.r)
			b.Volumes = tt.vols
			sc, err := CostOver(b, tt.r, off(tt.from), off(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			money(t, sc.Compute, tt.compute)
			money(t, sc.Storage, tt.storage)
			money(t, sc.Traffic, tt.traffic)
			money(t, sc.Total, tt.total)
			if sc.BilledSeconds != tt.billed || sc.RunningSeconds != tt.run {
				t.Errorf("billed %d running %d, want %d %d", sc.BilledSeconds, sc.RunningSeconds, tt.billed, tt.run)
			}
			if !sc.From.Equal(off(tt.clipFrom)) || !sc.To.Equal(off(tt.clp)) {
				t.Errorf("span %v..%v, want %v..%v", sc.From, sc.To, off(tt.clipFrom), off(tt.clp))
			}
			if !sc.Priced() {
				t.Error("not priced")
			}
		})
	}

	t.Run("storage of the attached volumes only, in the rental's currency", func(t *testing.T) {
		r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
		v := volume("data1", "200", "50", "0.0066", PerGBDay, CNY) // 150 GB × ¥0.0066/day
		v.RentalID = r.ID
		loose := volume("loose", "100", "0", "0.0066", PerGBDay, CNY)
		loose.ID = 2
		usd := volume("usd", "100", "0", "0.1", PerGBDay, USD)
		usd.ID, usd.RentalID = 3, r.ID
		b := bookOf(r)
		b.Volumes = []*Volume{v, loose, usd}
		sc, err := CostOver(b, r, off(0), off(12*hour))
		if err != nil {
			t.Fatal(err)
		}
		money(t, sc.Compute, "22.56") // 12 × 1.88
		money(t, sc.Storage, "0.50")  // 150 × 0.0066 × 0.5 = 0.495
		money(t, sc.Total, "23.06")
		if !sc.Priced() {
			t.Error("not priced")
		}
	})
	t.Run("an unpriced attached volume leaves storage unpriced", func(t *testing.T) {
		r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
		v := volume("data1", "200", "50", "0", PerGBDay, CNY)
		v.RentalID, v.Priced = r.ID, false
		b := bookOf(r)
		b.Volumes = []*Volume{v}
		sc, err := CostOver(b, r, off(0), off(hour))
		if err != nil {
			t.Fatal(err)
		}
		if sc.StoragePriced || sc.Priced() {
			t.Error("storage priced")
		}
		money(t, sc.Total, "1.88")
	})
	t.Run("traffic recorded inside the span", func(t *testing.T) {
		r := newRental("a", PerSecond, "0", UnitHour, USD, ev(EventStart, 0))
		r.Traffic = TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.1")}
		r.TrafficUsage = []TrafficUsage{{At: off(30 * min1), Bytes: 10 * gib, Direction: Out}, {At: off(3 * hour), Bytes: 20 * gib, Direction: Out}}
		sc, err := CostOver(bookOf(r), r, off(0), off(hour))
		if err != nil {
			t.Fatal(err)
		}
		money(t, sc.Traffic, "1.00")
		if sc.TrafficProRata {
			t.Error("pro rata although a record lies inside the span")
		}
	})
	t.Run("traffic pro rata by time when no record lies in the span", func(t *testing.T) {
		r := newRental("a", PerSecond, "0", UnitHour, USD, ev(EventStart, 0), ev(EventRelease, 10*hour))
		r.Traffic = TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.1")}
		r.TrafficUsage = []TrafficUsage{{At: off(9 * hour), Bytes: 50 * gib, Direction: Out}} // $5 over 10 h
		sc, err := CostOver(bookOf(r), r, off(hour), off(3*hour))
		if err != nil {
			t.Fatal(err)
		}
		money(t, sc.Traffic, "1.00") // 2 h of 10
		money(t, sc.Total, "1.00")
		if !sc.TrafficProRata {
			t.Error("not pro rata")
		}
	})
	t.Run("unpriced traffic that was used", func(t *testing.T) {
		r := newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0))
		r.TrafficUsage = []TrafficUsage{{At: off(30 * min1), Bytes: gib, Direction: Out}}
		sc, err := CostOver(bookOf(r), r, off(0), off(hour))
		if err != nil {
			t.Fatal(err)
		}
		if sc.TrafficPriced || sc.Priced() {
			t.Error("traffic priced")
		}
		money(t, sc.Total, "3.60")
	})
	t.Run("unpriced compute", func(t *testing.T) {
		r := newRental("a", PerSecond, "0", UnitHour, USD, ev(EventStart, 0))
		r.Priced = false
		sc, err := CostOver(bookOf(r), r, off(0), off(hour))
		if err != nil {
			t.Fatal(err)
		}
		if sc.ComputePriced || sc.Priced() || sc.BilledSeconds != 3600 {
			t.Errorf("priced %v, billed %d", sc.ComputePriced, sc.BilledSeconds)
		}
	})
	t.Run("ErrBackwards", func(t *testing.T) {
		r := newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0))
		_, err := CostOver(bookOf(r), r, off(hour), off(0))
		if e, ok := err.(*Error); !ok || e.Code != EINVALID || e.Key != "span_backwards" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ErrNotStarted", func(t *testing.T) {
		if _, err := CostOver(bookOf(), nil, off(0), off(hour)); ErrorCode(err) != EINVALID {
			t.Errorf("err = %v", err)
		}
		r := newRental("a", PerSecond, "3.6", UnitHour, USD)
		if _, err := CostOver(bookOf(r), r, off(0), off(hour)); ErrorCode(err) != EINVALID {
			t.Errorf("err = %v", err)
		}
	})
}

// TestCostOver_AddsUpToTheStatement: a per-second rental's spans that
// tile its life add up to its statement (to the cent each), so a job's
// share is the same money the bill shows.
func TestCostOver_AddsUpToTheStatement(t *testing.T) {
	r := newRental("a", PerSecond, "1.2", UnitHour, USD, ev(EventStart, 0), priceEv(50*min1, "2.4", UnitHour), ev(EventStop, 2*hour), ev(EventResume, 3*hour), ev(EventRelease, 4*hour))
	b := bookOf(r)
	var sum Money
	for h := time.Duration(0); h < 4*hour; h += hour {
		sc, err := CostOver(b, r, off(h), off(h+hour))
		if err != nil {
			t.Fatal(err)
		}
		sum = sum.Add(sc.Compute)
	}
	// 50 min × 1.2 + 70 min × 2.4 + 60 min × 2.4 = 1.00 + 2.80 + 2.40
	money(t, sum, "6.20")
	money(t, StatementAsOf(b, off(5*hour)).Rentals[0].Compute, "6.20")
}
