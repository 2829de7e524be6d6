package ledger

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

var randPrices = []Price{
	{MustDecimal("1.88"), UnitHour}, {MustDecimal("0.69"), UnitHour}, {MustDecimal("21.52"), UnitHour},
	{MustDecimal("0.0003"), UnitSecond}, {MustDecimal("0.05"), UnitMinute}, {MustDecimal("70"), UnitDay},
	{MustDecimal("300"), UnitWeek}, {MustDecimal("900"), UnitMonth}, {MustDecimal("0"), UnitHour},
	{MustDecimal("3.333"), UnitHour},
}

// randomRental returns a rental starting at start with about n events over
// span, in a random mode with random min, step and floor.
func randomRental(rng *rand.Rand, name string, start time.Time, span time.Duration, n int) *Rental {
	modes := []Mode{PerSecond, PerMinute, PerHour, AlwaysOn}
	r := &Rental{
		ID: rng.Int64N(1 << 40), Name: name, Platform: []string{"autodl", "runpod", "aws"}[rng.IntN(3)],
		GPU: "RTX 4090", GPUCount: 1, Mode: modes[rng.IntN(len(modes))], Priced: rng.IntN(10) > 0,
		Price: randPrices[rng.IntN(len(randPrices))], Currency: CNY,
	}
	switch rng.IntN(4) {
	case 0:
		r.Min = time.Duration(rng.IntN(120)) * time.Second
	case 1:
		r.Step = time.Duration(1+rng.IntN(600)) * time.Second
	case 2:
		r.Floor = MustDecimal("0.01")
	}
	at := start
	r.Events = []Event{{Kind: EventStart, At: at}}
	running := true
	gap := span / time.Duration(n+1)
	for i := 1; i < n; i++ {
		at = at.Add(time.Duration(rng.Int64N(int64(2*gap) + 1))).Truncate(time.Second)
		switch {
		case rng.IntN(5) == 0:
			r.Events = append(r.Events, Event{Kind: EventPrice, At: at, Price: randPrices[rng.IntN(len(randPrices))]})
		case running:
			r.Events = append(r.Events, Event{Kind: EventStop, At: at})
			running = false
		default:
			r.Events = append(r.Events, Event{Kind: EventResume, At: at})
			running = true
		}
	}
	if rng.IntN(3) == 0 {
		r.Events = append(r.Events, Event{Kind: EventRelease, At: at.Add(time.Duration(rng.Int64N(int64(gap) + 1)))})
	}
	if rng.IntN(2) == 0 {
		for t := start; t.Before(at); t = t.Add(time.Duration(1 + rng.Int64N(int64(3*gap)))) {
			r.Idle = append(r.Idle, Interval{From: t, To: t.Add(time.Duration(rng.Int64N(int64(gap) + 1)))})
			t = r.Idle[len(r.Idle)-1].To
		}
	}
	if rng.IntN(2) == 0 {
		r.Traffic = TrafficTerms{Priced: rng.IntN(4) > 0, PricePerGB: MustDecimal("0.09"), FreeGB: MustDecimal("1.5"),
			Direction: []Direction{"", Out, In, Both}[rng.IntN(4)]}
		for t := start; t.Before(at); t = t.Add(time.Duration(1 + rng.Int64N(int64(gap)))) {
			r.TrafficUsage = append(r.TrafficUsage, TrafficUsage{At: t, Bytes: rng.Int64N(1 << 31),
				Direction: []Direction{In, Out}[rng.IntN(2)]})
		}
	}
	return r
}

func randomVolume(rng *rand.Rand, name string, start time.Time, span time.Duration) *Volume {
	v := &Volume{ID: rng.Int64N(1 << 40), Name: name, Platform: "autodl", Currency: CNY, Priced: rng.IntN(8) > 0,
		Price:     MustDecimal([]string{"0.0066", "0.1", "0.0007"}[rng.IntN(3)]),
		PriceUnit: []StorageUnit{PerGBDay, PerGBMonth, PerGBHour}[rng.IntN(3)], FreeGB: MustDecimal("50")}
	at := start
	v.Events = []VolumeEvent{{Kind: VolumeCreate, At: at, SizeGB: DecimalFromInt(rng.Int64N(500))}}
	for range rng.IntN(4) {
		at = at.Add(time.Duration(rng.Int64N(int64(span / 4))))
		v.Events = append(v.Events, VolumeEvent{Kind: VolumeResize, At: at, SizeGB: DecimalFromInt(rng.Int64N(500))})
	}
	if rng.IntN(2) == 0 {
		v.Events = append(v.Events, VolumeEvent{Kind: VolumeDelete, At: at.Add(time.Duration(rng.Int64N(int64(span / 4))))})
	}
	return v
}

func randomBook(rng *rand.Rand, tz string, start time.Time, span time.Duration, rentals, eventsPer int) *Book {
	b := &Book{User: User{ID: 1, TZ: tz}}
	for i := range rentals {
		s := start.Add(time.Duration(rng.Int64N(int64(span / 2)))).Truncate(time.Second)
		b.Rentals = append(b.Rentals, randomRental(rng, fmt.Sprintf("r%d", i), s, span/2, eventsPer))
	}
	for i := range max(rentals/10, 1) {
		b.Volumes = append(b.Volumes, randomVolume(rng, fmt.Sprintf("v%d", i), start.Add(time.Duration(rng.Int64N(int64(span/2)))), span))
		if v := b.Volumes[i]; v.ID%2 == 0 && len(b.Rentals) > 0 {
			// Half the volumes have a stopped rate on a rental that stops and
			// resumes (drawn from the id, so the other draws stay as they were).
			v.RentalID, v.HasStoppedPrice, v.StoppedPrice = b.Rentals[i%len(b.Rentals)].ID, true, MustDecimal("0.2")
		}
		b.Charges = append(b.Charges, Charge{ID: int64(i + 1), Platform: "autodl", Amount: MustDecimal("1.005"),
			Currency: CNY, At: start.Add(time.Duration(rng.Int64N(int64(span))))})
	}
	return b
}

// TestProperty_SplitDoesNotChangeCharge: stopping and resuming at the same
// instant inside a plain per-second segment changes nothing, at any time.
func TestProperty_SplitDoesNotChangeCharge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		r := newRental("a", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
		if i%2 == 0 {
			r.Mode = AlwaysOn // prorated: a stop does not even pause it
		}
		end := time.Duration(1+rng.Int64N(int64(10*day/time.Second))) * time.Second
		var events []Event
		for _, d := range []time.Duration{end / 3, 2 * end / 3} {
			if rng.IntN(2) == 0 {
				events = append(events, Event{Kind: EventPrice, At: off(d.Truncate(time.Second)), Price: randPrices[rng.IntN(5)]})
			}
		}
		r.Events = append(r.Events, events...)
		r.Events = append(r.Events, ev(EventStop, end))
		r.Idle = []Interval{{From: off(end / 4), To: off(end / 2)}}
		cut := time.Duration(1+rng.Int64N(int64(end/time.Second))) * time.Second
		split := *r
		split.Events = nil
		for _, e := range r.Events {
			if e.At.After(off(cut)) && len(split.Events) > 0 && !split.Events[len(split.Events)-1].At.After(off(cut)) &&
				split.Events[len(split.Events)-1].Kind != EventStop {
				split.Events = append(split.Events, ev(EventStop, cut), ev(EventResume, cut))
			}
			split.Events = append(split.Events, e)
		}
		for _, asOf := range []time.Duration{cut - sec, cut, cut + sec, end, end + day, time.Duration(rng.Int64N(int64(end)))} {
			a := StatementAsOf(bookOf(r), off(asOf))
			b := StatementAsOf(bookOf(&split), off(asOf))
			if len(a.Rentals) != len(b.Rentals) {
				t.Fatalf("case %d: listed %d vs %d", i, len(a.Rentals), len(b.Rentals))
			}
			if len(a.Rentals) == 0 {
				continue
			}
			x, y := a.Rentals[0], b.Rentals[0]
			if x.Compute != y.Compute || x.BilledSeconds != y.BilledSeconds || x.IdleCost != y.IdleCost || x.IdleSeconds != y.IdleSeconds {
				t.Fatalf("case %d (%s) cut %s as of %s: whole %s/%ds/idle %s, split %s/%ds/idle %s",
					i, r.Mode, cut, asOf, x.Compute, x.BilledSeconds, x.IdleCost, y.Compute, y.BilledSeconds, y.IdleCost)
			}
		}
	}
}

// TestProperty_ChargesNeverDecrease: every line's charge, exact and
// rounded, is non-decreasing in time, for every mode and option.
func TestProperty_ChargesNeverDecrease(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		b := randomBook(rng, "America/New_York", t0, 20*day, 3, 12)
		e := newEngine(b)
		type key struct {
			kind string
			i    int
		}
		last := map[key]int64{}
		for t1 := t0.Add(-hour); t1.Before(t0.Add(25 * day)); t1 = t1.Add(time.Duration(1+rng.Int64N(int64(6*hour/time.Second))) * time.Second) {
			tt := unix(t1)
			check := func(k key, v int64) {
				if prev, ok := last[k]; ok && v < prev {
					t.Fatalf("book %d: %s %d went down from %d to %d at %s", i, k.kind, k.i, prev, v, t1)
				}
				last[k] = v
			}
			for j, r := range b.Rentals {
				m := e.rentalMeter(r)
				p := e.rentalAt(m, tt)
				check(key{"compute", j}, p.compute.Minor)
				check(key{"billed", j}, p.billed)
				check(key{"running", j}, p.running)
				check(key{"idle", j}, p.idle.Minor)
				check(key{"idleSecs", j}, p.idleSecs)
				check(key{"traffic", j}, p.traffic.Minor)
				secs := make([]int64, m.k())
				m.computeAt(tt, secs)
				exact := rateRat(m.rates, secs, r.Floor, tt > m.start)
				if Round(exact, r.Currency) != p.compute && r.Priced {
					t.Fatalf("book %d rental %d: fast path %s, exact %s", i, j, p.compute, exact.FloatString(6))
				}
			}
			for j, v := range b.Volumes {
				check(key{"storage", j}, e.volumeAt(e.volumeMeter(v), tt).Minor)
			}
		}
	}
}

// TestProperty_DaysAddUpToMonth: the spend of each day of a month (in a
// zone with a DST change) sums to the month's spend, line by line.
func TestProperty_DaysAddUpToMonth(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	for i := range 40 {
		start := time.Date(2026, 10, 15, 0, 0, 0, 0, loc)
		b := randomBook(rng, "America/New_York", start, 40*day, 6, 20)
		from, to := MonthRange(time.Date(2026, 11, 10, 0, 0, 0, 0, loc), loc)
		month := Spend(b, from, to)
		sum := map[Currency]*Totals{}
		days := 0
		for d := from; d.Before(to); {
			_, next := DayRange(d, loc)
			for c, tot := range Spend(b, d, next).Totals {
				if sum[c] == nil {
					sum[c] = newTotals(c)
				}
				for _, cat := range []Category{CategoryCompute, CategoryStorage, CategoryTraffic, CategoryOther} {
					sum[c].add(cat, tot.Of(cat))
				}
			}
			d = next
			days++
		}
		if days != 30 {
			t.Fatalf("November has %d local days", days)
		}
		for c, tot := range month.Totals {
			got := sum[c]
			if got == nil {
				got = newTotals(c)
			}
			for _, cat := range []Category{CategoryCompute, CategoryStorage, CategoryTraffic, CategoryOther, ""} {
				if got.Of(cat) != tot.Of(cat) {
					t.Fatalf("book %d %s %s: days sum to %s, month is %s", i, c, cat, got.Of(cat), tot.Of(cat))
				}
			}
		}
		// DailySpend gives the same days.
		now := to
		ds := DailySpend(b, 30, now.Add(-time.Second))
		var chart Money
		for _, d := range ds {
			if tot, ok := d.Totals[CNY]; ok {
				chart = chart.Add(tot.Total)
			}
		}
		want := Spend(b, ds[0].Day, now.Add(-time.Second)).Total(CNY).Total
		if chart.Minor != want.Minor {
			t.Fatalf("book %d: DailySpend sums to %s, Spend says %s", i, chart, want)
		}
	}
}

// TestProperty_StoragePerStateMatchesReference: a volume with a stopped
// price, attached to a random rental, costs what a plain walk over every
// change (volume events and the rental's state) says: for each stretch,
// (size − free)⁺ × the price of the rental's state × seconds, exact, then
// rounded once.
func TestProperty_StoragePerStateMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	stoppedPrices := []string{"0", "0.20", "0.0132", "0.0003"}
	for i := range 300 {
		span := time.Duration(1+rng.Int64N(60)) * day
		r := randomRental(rng, "r", t0, span, 2+rng.IntN(8))
		v := randomVolume(rng, "v", t0.Add(time.Duration(rng.Int64N(int64(span/3)))).Truncate(time.Second), span)
		v.Priced, v.RentalID = true, r.ID
		v.HasStoppedPrice, v.StoppedPrice = true, MustDecimal(stoppedPrices[rng.IntN(len(stoppedPrices))])
		// The ledger keeps whole seconds; the generators do not.
		for k := range r.Events {
			r.Events[k].At = r.Events[k].At.Truncate(time.Second)
		}
		for k := range v.Events {
			v.Events[k].At = v.Events[k].At.Truncate(time.Second)
		}
		b := &Book{User: User{ID: 1, TZ: "UTC"}, Rentals: []*Rental{r}, Volumes: []*Volume{v}}
		asOf := t0.Add(time.Duration(rng.Int64N(int64(span + span/2)))).Truncate(time.Second)

		// The reference: every instant where anything changes, in order.
		points := []time.Time{asOf}
		for _, e := range r.Events {
			points = append(points, e.At)
		}
		for _, e := range v.Events {
			points = append(points, e.At)
		}
		sort.Slice(points, func(a, b int) bool { return points[a].Before(points[b]) })
		want := new(big.Rat)
		sizeAt := func(t time.Time) (Decimal, bool) {
			var size Decimal
			alive := false
			for _, e := range v.Events {
				if e.At.After(t) {
					break
				}
				alive = e.Kind != VolumeDelete
				size = e.SizeGB
			}
			return size, alive
		}
		for k := 0; k+1 < len(points); k++ {
			a, z := points[k], points[k+1]
			if !a.Before(z) || !a.Before(asOf) {
				continue
			}
			if z.After(asOf) {
				z = asOf
			}
			size, alive := sizeAt(a)
			if !alive {
				continue
			}
			billable := new(big.Rat).Sub(size.Rat(), v.FreeGB.Rat())
			if billable.Sign() <= 0 {
				continue
			}
			price := v.Price
			if st := r.stateAt(a); st == Stopped || st == Released {
				price = v.StoppedPrice
			}
			x := new(big.Rat).Mul(billable, price.Rat())
			x.Mul(x, new(big.Rat).SetFrac64(int64(z.Sub(a)/time.Second), v.PriceUnit.Seconds()))
			want.Add(want, x)
		}
		got := Money{Currency: CNY}
		if st := StatementAsOf(b, asOf); len(st.Volumes) > 0 {
			got = st.Volumes[0].Charge
		}
		if w := Round(want, CNY); got != w {
			t.Fatalf("case %d: charge %s, reference %s (rental %+v, volume %+v, as of %s)", i, got, w, r.Events, v.Events, asOf)
		}
	}
}
