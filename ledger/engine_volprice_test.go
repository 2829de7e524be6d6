package ledger

import (
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestStatementAsOf_StoragePriceChange: a volume whose price changes
// part-way bills each stretch at the price in force, each in its own
// unit, and a stopped rate only while the terms that carry it apply.
func TestStatementAsOf_StoragePriceChange(t *testing.T) {
	change := func(d time.Duration, price string, u StorageUnit) VolumePrice {
		return VolumePrice{At: off(d), Price: MustDecimal(price), PriceUnit: u}
	}
	tests := []struct {
		name    string
		prices  []VolumePrice
		stopped bool // the rental is stopped from day 10 to day 20
		asOf    time.Duration
		want    string
	}{
		{"0.01 then 0.02 from day 15: 15×100×0.01 + 15×100×0.02", []VolumePrice{change(15*day, "0.02", PerGBDay)}, false, 30 * day, "45.00"},
		{"asked before the change: the old price only", []VolumePrice{change(15*day, "0.02", PerGBDay)}, false, 10 * day, "10.00"},
		{"asked mid-way through the new price", []VolumePrice{change(15*day, "0.02", PerGBDay)}, false, 20 * day, "25.00"},
		{"same rate in another unit changes nothing", []VolumePrice{change(15*day, "0.3", PerGBMonth)}, false, 30 * day, "30.00"},
		{"two changes, the last back to the first price", []VolumePrice{change(10*day, "0.02", PerGBDay), change(20*day, "0.01", PerGBDay)}, false, 30 * day, "40.00"},
		{"two at the same second: the later recorded wins", []VolumePrice{change(15*day, "0.05", PerGBDay), change(15*day, "0.02", PerGBDay)}, false, 30 * day, "45.00"},
		{"a change at creation replaces the first price", []VolumePrice{change(0, "0.02", PerGBDay)}, false, 30 * day, "60.00"},
		// Stopped 0.03 from creation; from day 15 one rate (0.02) in every
		// state: 10×1 + 5×3 (stopped, old terms) + 5×2 (stopped, new) + 10×2.
		{"the stopped rate ends with the terms that carried it", []VolumePrice{change(15*day, "0.02", PerGBDay)}, true, 30 * day, "55.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRental("box1", PerSecond, "0", UnitHour, CNY, ev(EventStart, 0))
			r.ID = 7
			v := volume("data1", "100", "0", "0.01", PerGBDay, CNY)
			v.RentalID, v.Prices = r.ID, tt.prices
			if tt.stopped {
				r.Events = append(r.Events, ev(EventStop, 10*day), ev(EventResume, 20*day))
				v.HasStoppedPrice, v.StoppedPrice = true, MustDecimal("0.03")
			}
			b := bookOf(r)
			b.Volumes = []*Volume{v}
			st := StatementAsOf(b, off(tt.asOf))
			money(t, st.Volumes[0].Charge, tt.want)
			money(t, st.Total(CNY).Storage, tt.want)
		})
	}
}

// TestProperty_StoragePriceChangesMatchReference: a volume with random
// price changes (each in a random unit, some with a stopped rate),
// attached to a random rental, costs exactly what a plain walk over every
// change says: per stretch, (size − free)⁺ × the rate of the terms in
// force and the rental's state × seconds, summed as Decimal-exact
// rationals and rounded once.
func TestProperty_StoragePriceChangesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	prices := []string{"0", "0.01", "0.02", "0.0066", "0.20", "0.0003", "1.5"}
	units := []StorageUnit{PerGBHour, PerGBDay, PerGBMonth}
	for i := range 300 {
		span := time.Duration(1+rng.Int64N(60)) * day
		r := randomRental(rng, "r", t0, span, 2+rng.IntN(8))
		for k := range r.Events {
			r.Events[k].At = r.Events[k].At.Truncate(time.Second)
		}
		v := randomVolume(rng, "v", t0.Add(time.Duration(rng.Int64N(int64(span/3)))).Truncate(time.Second), span)
		for k := range v.Events {
			v.Events[k].At = v.Events[k].At.Truncate(time.Second)
		}
		v.Priced, v.RentalID = true, r.ID
		v.Price, v.PriceUnit = MustDecimal(prices[rng.IntN(len(prices))]), units[rng.IntN(len(units))]
		if rng.IntN(2) == 0 {
			v.HasStoppedPrice, v.StoppedPrice = true, MustDecimal(prices[rng.IntN(len(prices))])
		}
		created := v.Events[0].At
		for range rng.IntN(4) {
			p := VolumePrice{
				At:    created.Add(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Second),
				Price: MustDecimal(prices[rng.IntN(len(prices))]), PriceUnit: units[rng.IntN(len(units))],
			}
			if rng.IntN(2) == 0 {
				p.HasStoppedPrice, p.StoppedPrice = true, MustDecimal(prices[rng.IntN(len(prices))])
			}
			v.Prices = append(v.Prices, p)
		}
		sort.SliceStable(v.Prices, func(a, b int) bool { return v.Prices[a].At.Before(v.Prices[b].At) })
		b := &Book{User: User{ID: 1, TZ: "UTC"}, Rentals: []*Rental{r}, Volumes: []*Volume{v}}
		asOf := t0.Add(time.Duration(rng.Int64N(int64(span + span/2)))).Truncate(time.Second)

		points := []time.Time{asOf}
		for _, e := range r.Events {
			points = append(points, e.At)
		}
		for _, e := range v.Events {
			points = append(points, e.At)
		}
		for _, p := range v.Prices {
			points = append(points, p.At)
		}
		sort.Slice(points, func(a, b int) bool { return points[a].Before(points[b]) })
		termsAt := func(t time.Time) (price Decimal, unit StorageUnit, stopped Decimal, hasStopped bool) {
			price, unit, stopped, hasStopped = v.Price, v.PriceUnit, v.StoppedPrice, v.HasStoppedPrice
			for _, p := range v.Prices {
				if !p.At.After(t) {
					price, unit, stopped, hasStopped = p.Price, p.PriceUnit, p.StoppedPrice, p.HasStoppedPrice
				}
			}
			return
		}
		want := new(big.Rat)
		for k := 0; k+1 < len(points); k++ {
			a, z := points[k], points[k+1]
			if !a.Before(z) || !a.Before(asOf) {
				continue
			}
			z = minTime(z, asOf)
			var size Decimal
			alive := false
			for _, e := range v.Events {
				if e.At.After(a) {
					break
				}
				alive, size = e.Kind != VolumeDelete, e.SizeGB
			}
			if !alive {
				continue
			}
			billable := new(big.Rat).Sub(size.Rat(), v.FreeGB.Rat())
			if billable.Sign() <= 0 {
				continue
			}
			price, unit, stopped, hasStopped := termsAt(a)
			if st := r.stateAt(a); hasStopped && (st == Stopped || st == Released) {
				price = stopped
			}
			x := new(big.Rat).Mul(billable, price.Rat())
			x.Mul(x, new(big.Rat).SetFrac64(int64(z.Sub(a)/time.Second), unit.Seconds()))
			want.Add(want, x)
		}
		got := Money{Currency: CNY}
		if st := StatementAsOf(b, asOf); len(st.Volumes) > 0 {
			got = st.Volumes[0].Charge
		}
		if w := Round(want, CNY); got != w {
			t.Fatalf("case %d: charge %s, reference %s (rental %+v, volume %+v, prices %+v, as of %s)",
				i, got, w, r.Events, v.Events, v.Prices, asOf)
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
