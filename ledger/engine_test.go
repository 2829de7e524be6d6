package ledger

import (
	"testing"
	"time"
)

// t0 is the origin of the engine tests: 2026-11-01 00:00 UTC.
var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func off(d time.Duration) time.Time { return t0.Add(d) }

func ev(kind EventKind, d time.Duration) Event { return Event{Kind: kind, At: off(d)} }

func priceEv(d time.Duration, amount string, u Unit) Event {
	return Event{Kind: EventPrice, At: off(d), Price: Price{Amount: MustDecimal(amount), Unit: u}}
}

var rentalSeq int64

// newRental returns a priced rental with the given terms and events.
func newRental(name string, mode Mode, amount string, u Unit, cur Currency, events ...Event) *Rental {
	rentalSeq++
	return &Rental{
		ID: rentalSeq, Name: name, Platform: "test", GPU: "RTX 4090", GPUCount: 1,
		Mode: mode, Priced: true, Price: Price{Amount: MustDecimal(amount), Unit: u},
		Currency: cur, Events: events,
	}
}

func with(r *Rental, f func(*Rental)) *Rental { f(r); return r }

func bookOf(rentals ...*Rental) *Book {
	return &Book{User: User{ID: 1, TZ: "UTC"}, Rentals: rentals}
}

func money(t *testing.T, m Money, want string) {
	t.Helper()
	if m.String() != want {
		t.Errorf("got %s %s, want %s", m.String(), m.Currency, want)
	}
}

const (
	sec  = time.Second
	min1 = time.Minute
	hour = time.Hour
	day  = 24 * time.Hour
)

func TestStatementAsOf_Compute(t *testing.T) {
	tests := []struct {
		name       string
		r          *Rental
		asOf       time.Duration
		want       string
		wantBilled int64
		wantRun    int64
	}{
		{"per-second RunPod 10 min at $0.69/h is $0.115, rounds to 0.12",
			newRental("a", PerSecond, "0.69", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 10*min1)),
			hour, "0.12", 600, 600},
		{"per-second still running is billed up to as-of",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0)),
			100 * sec, "0.10", 100, 100},
		{"nothing accrues at the start instant itself",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0)),
			0, "0.00", 0, 0},
		{"AWS 60 s minimum: a 20 s run bills 60 s",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 20*sec)), func(r *Rental) { r.Min = time.Minute }),
			hour, "0.60", 60, 20},
		{"AWS 60 s minimum: two starts of 30 s bill 120 s",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 30*sec), ev(EventResume, 10*min1), ev(EventStop, 10*min1+30*sec)), func(r *Rental) { r.Min = time.Minute }),
			hour, "1.20", 120, 60},
		{"minimum accrues at the segment's first second",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0)), func(r *Rental) { r.Min = time.Minute }),
			1 * sec, "0.60", 60, 1},
		{"GCP minimum, longer run bills its seconds",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 90*sec)), func(r *Rental) { r.Min = time.Minute }),
			hour, "0.90", 90, 90},
		{"Lambda per-minute: 61 s bills 2 min",
			newRental("a", PerMinute, "1.20", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 61*sec)),
			hour, "0.04", 120, 61},
		{"per-minute running: the started minute accrues when it begins",
			newRental("a", PerMinute, "1.20", UnitHour, USD, ev(EventStart, 0)),
			61 * sec, "0.04", 120, 61},
		{"step=30s overrides the mode",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 31*sec)), func(r *Rental) { r.Step = 30 * time.Second }),
			hour, "0.60", 60, 31},
		{"per-hour: 90 min bills 2 started hours",
			newRental("a", PerHour, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 90*min1)),
			5 * hour, "4.00", 7200, 5400},
		{"per-hour: 10 min into a run, the first hour is owed",
			newRental("a", PerHour, "2", UnitHour, CNY, ev(EventStart, 0)),
			10 * min1, "2.00", 3600, 600},
		{"per-hour: exactly one hour bills one hour",
			newRental("a", PerHour, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour)),
			5 * hour, "2.00", 3600, 3600},
		{"per-hour: each segment rounds up on its own",
			newRental("a", PerHour, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 10*min1), ev(EventResume, hour), ev(EventStop, hour+10*min1)),
			5 * hour, "4.00", 7200, 1200},
		{"Featurize 70/day package released after 5 h bills the whole day",
			newRental("a", AlwaysOn, "70", UnitDay, CNY, ev(EventStart, 0), ev(EventRelease, 5*hour)),
			10 * day, "70.00", 86400, 5 * 3600},
		{"day package: the second day accrues when it begins",
			newRental("a", AlwaysOn, "70", UnitDay, CNY, ev(EventStart, 0)),
			day + sec, "140.00", 2 * 86400, 86401},
		{"day package: exactly one day is one period",
			newRental("a", AlwaysOn, "70", UnitDay, CNY, ev(EventStart, 0)),
			day, "70.00", 86400, 86400},
		{"week package crossing into its second week, stopped or not",
			newRental("a", AlwaysOn, "300", UnitWeek, CNY, ev(EventStart, 0), ev(EventStop, hour), ev(EventResume, 8*day)),
			8*day + hour, "600.00", 14 * 86400, 2 * 3600},
		{"month package is 30 days: day 31 starts the second month",
			newRental("a", AlwaysOn, "900", UnitMonth, CNY, ev(EventStart, 0)),
			30*day + sec, "1800.00", 60 * 86400, 30*86400 + 1},
		{"month package released on day 20",
			newRental("a", AlwaysOn, "900", UnitMonth, CNY, ev(EventStart, 0), ev(EventRelease, 20*day)),
			60 * day, "900.00", 30 * 86400, 20 * 86400},
		{"package price change ends the period and starts a new one",
			newRental("a", AlwaysOn, "70", UnitDay, CNY, ev(EventStart, 0), priceEv(2*hour, "60", UnitDay)),
			3 * hour, "130.00", 2 * 86400, 3 * 3600},
		{"always-on per-hour price is prorated over wall-clock time, stopped or not",
			newRental("a", AlwaysOn, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour), ev(EventResume, 2*hour), ev(EventRelease, 3*hour)),
			10 * hour, "6.00", 3 * 3600, 2 * 3600},
		{"Alibaba ¥0.01 lifetime floor on a 1 s run",
			with(newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, sec)), func(r *Rental) { r.Floor = MustDecimal("0.01") }),
			hour, "0.01", 1, 1},
		{"floor below the raw charge changes nothing",
			with(newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 100*sec)), func(r *Rental) { r.Floor = MustDecimal("0.01") }),
			hour, "0.10", 100, 100},
		{"floor does not apply before the start",
			with(newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, hour)), func(r *Rental) { r.Floor = MustDecimal("5") }),
			30 * min1, "0.00", 0, 0},
		{"price change mid-segment: old rate before, new after",
			newRental("a", PerSecond, "2", UnitHour, CNY, ev(EventStart, 0), priceEv(hour, "4", UnitHour), ev(EventStop, 2*hour)),
			3 * hour, "6.00", 7200, 7200},
		{"price change while stopped applies from the resume",
			newRental("a", PerSecond, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour), priceEv(90*min1, "4", UnitHour), ev(EventResume, 2*hour), ev(EventStop, 3*hour)),
			4 * hour, "6.00", 7200, 7200},
		{"per-hour with a price change: each hour at the rate when it began",
			newRental("a", PerHour, "2", UnitHour, CNY, ev(EventStart, 0), priceEv(30*min1, "4", UnitHour)),
			90 * min1, "6.00", 7200, 5400},
		{"minimum kept at the starting rate across a price change",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0), priceEv(10*sec, "72", UnitHour), ev(EventStop, 100*sec)), func(r *Rental) { r.Min = time.Minute }),
			hour, "1.40", 100, 100},
		{"stop and resume: only running time bills",
			newRental("a", PerSecond, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour), ev(EventResume, 2*hour), ev(EventStop, 150*min1)),
			10 * hour, "3.00", 5400, 5400},
		{"released: nothing after the release",
			newRental("a", PerSecond, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventRelease, hour)),
			10 * hour, "2.00", 3600, 3600},
		{"rounding half up at exactly .005",
			newRental("a", PerSecond, "18", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, sec)),
			hour, "0.01", 1, 1},
		{"rounding just below .005 goes down",
			newRental("a", PerSecond, "17.99", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, sec)),
			hour, "0.00", 1, 1},
		{"rounding .015 goes up to .02",
			newRental("a", PerSecond, "54", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, sec)),
			hour, "0.02", 1, 1},
		{"per-second price quoted per minute",
			newRental("a", PerSecond, "0.06", UnitMinute, USD, ev(EventStart, 0), ev(EventStop, hour)),
			2 * hour, "3.60", 3600, 3600},
		{"start and stop in the same second bill nothing, minimum included",
			with(newRental("a", PerSecond, "36", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 0)), func(r *Rental) { r.Min = time.Minute }),
			hour, "0.00", 0, 0},
		{"sub-second parts are dropped",
			newRental("a", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 500*time.Millisecond), ev(EventStop, 10*sec+900*time.Millisecond)),
			hour, "0.01", 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := StatementAsOf(bookOf(tt.r), off(tt.asOf))
			if tt.asOf == 0 || tt.r.StartedAt().After(off(tt.asOf)) {
				if len(st.Rentals) != 0 {
					t.Fatalf("rental listed before its start: %+v", st.Rentals)
				}
				return
			}
			if len(st.Rentals) != 1 {
				t.Fatalf("got %d rentals, want 1", len(st.Rentals))
			}
			rc := st.Rentals[0]
			money(t, rc.Compute, tt.want)
			money(t, rc.Total, tt.want)
			money(t, st.Total(tt.r.Currency).Compute, tt.want)
			if rc.BilledSeconds != tt.wantBilled {
				t.Errorf("billed %d s, want %d", rc.BilledSeconds, tt.wantBilled)
			}
			if rc.RunningSeconds != tt.wantRun {
				t.Errorf("running %d s, want %d", rc.RunningSeconds, tt.wantRun)
			}
		})
	}
}

func TestStatementAsOf_StateAndRate(t *testing.T) {
	r := newRental("a", PerSecond, "2", UnitHour, CNY, ev(EventStart, 0), priceEv(hour, "3", UnitHour), ev(EventStop, 2*hour), ev(EventRelease, 3*hour))
	tests := []struct {
		at    time.Duration
		state State
		rate  string
	}{
		{30 * min1, Running, "2/hour"},
		{hour, Running, "3/hour"},
		{2 * hour, Stopped, "3/hour"},
		{3 * hour, Released, "3/hour"},
	}
	for _, tt := range tests {
		st := StatementAsOf(bookOf(r), off(tt.at))
		if got := st.Rentals[0]; got.State != tt.state || got.Rate.String() != tt.rate {
			t.Errorf("at %s: state %s rate %s, want %s %s", tt.at, got.State, got.Rate, tt.state, tt.rate)
		}
	}
}

func TestStatement_Unpriced(t *testing.T) {
	priced := newRental("p", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0))
	un := newRental("u", PerSecond, "0", UnitHour, CNY, ev(EventStart, 0))
	un.Priced = false
	traffic := newRental("t", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0))
	traffic.TrafficUsage = []TrafficUsage{{At: off(10 * min1), Bytes: 1 << 30, Direction: Out}}
	b := bookOf(priced, un, traffic)
	b.Volumes = []*Volume{{ID: 1, Name: "v", Platform: "test", Currency: CNY, Priced: false,
		Events: []VolumeEvent{{Kind: VolumeCreate, At: off(0), SizeGB: MustDecimal("100")}}}}
	st := StatementAsOf(b, off(hour))
	tot := st.Total(CNY)
	money(t, tot.Compute, "7.20")
	money(t, tot.Total, "7.20")
	if tot.Unpriced != 3 {
		t.Errorf("unpriced = %d, want 3 (compute, traffic, volume)", tot.Unpriced)
	}
	for _, rc := range st.Rentals {
		switch rc.Rental.Name {
		case "u":
			if rc.ComputePriced || rc.Priced() {
				t.Errorf("u: compute reported as priced")
			}
		case "t":
			if rc.TrafficPriced {
				t.Errorf("t: traffic reported as priced")
			}
			money(t, rc.Total, "3.60")
		}
	}
	if st.Volumes[0].Priced {
		t.Errorf("volume reported as priced")
	}
	if n := st.ByPlatform["test"][CNY].Unpriced; n != 3 {
		t.Errorf("by platform unpriced = %d, want 3", n)
	}
}

func volume(name string, size, free, price string, unit StorageUnit, cur Currency, evs ...VolumeEvent) *Volume {
	return &Volume{ID: 1, Name: name, Platform: "autodl", Currency: cur, Priced: true,
		Price: MustDecimal(price), PriceUnit: unit, FreeGB: MustDecimal(free),
		Events: append([]VolumeEvent{{Kind: VolumeCreate, At: off(0), SizeGB: MustDecimal(size)}}, evs...)}
}

func TestStatementAsOf_Storage(t *testing.T) {
	tests := []struct {
		name string
		v    *Volume
		asOf time.Duration
		want string
	}{
		{"AutoDL 200 GB, 50 free, ¥0.0066/GB/day for 30 days", volume("d", "200", "50", "0.0066", PerGBDay, CNY), 30 * day, "29.70"},
		{"prorated by the second", volume("d", "200", "50", "0.0066", PerGBDay, CNY), 12 * hour, "0.50"},
		{"size within the free quota costs nothing", volume("d", "40", "50", "0.0066", PerGBDay, CNY), 30 * day, "0.00"},
		{"resize starts a new segment", volume("d", "100", "0", "0.1", PerGBMonth, USD,
			VolumeEvent{Kind: VolumeResize, At: off(15 * day), SizeGB: MustDecimal("200")}), 30 * day, "15.00"},
		{"delete stops the meter", volume("d", "100", "0", "0.1", PerGBMonth, USD,
			VolumeEvent{Kind: VolumeDelete, At: off(10 * day)}), 30 * day, "3.33"},
		{"per GB-hour", volume("d", "1000", "0", "0.0007", PerGBHour, CNY), 10 * hour, "7.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bookOf()
			b.Volumes = []*Volume{tt.v}
			st := StatementAsOf(b, off(tt.asOf))
			money(t, st.Volumes[0].Charge, tt.want)
			money(t, st.Total(tt.v.Currency).Storage, tt.want)
		})
	}
}

func TestStatement_StorageBillsWhileStoppedAndCountsInRental(t *testing.T) {
	r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour))
	v := volume("data1", "200", "50", "0.0066", PerGBDay, CNY)
	v.RentalID = r.ID
	free := volume("loose", "100", "0", "0.0066", PerGBDay, CNY)
	free.ID = 2
	b := bookOf(r)
	b.Volumes = []*Volume{v, free}
	st := StatementAsOf(b, off(30*day))
	rc := st.Rentals[0]
	money(t, rc.Compute, "1.88")
	money(t, rc.Storage, "29.70")
	money(t, rc.Total, "31.58")
	money(t, st.Total(CNY).Storage, "49.50")
	money(t, st.Total(CNY).Total, "51.38")
}

func TestStatement_Traffic(t *testing.T) {
	gib := int64(1 << 30)
	tests := []struct {
		name  string
		terms TrafficTerms
		usage []TrafficUsage
		asOf  time.Time
		want  string
	}{
		{"AWS 100 GiB free out, then per GiB",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09"), FreeGB: MustDecimal("100")},
			[]TrafficUsage{{At: off(day), Bytes: 60 * gib, Direction: Out}, {At: off(2 * day), Bytes: 90 * gib, Direction: Out}, {At: off(3 * day), Bytes: 500 * gib, Direction: In}},
			off(10 * day), "4.50"},
		{"the allowance resets at the month boundary",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09"), FreeGB: MustDecimal("100")},
			[]TrafficUsage{{At: off(day), Bytes: 150 * gib, Direction: Out}, {At: off(31 * day), Bytes: 150 * gib, Direction: Out}},
			off(40 * day), "9.00"},
		{"usage below the allowance is free",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09"), FreeGB: MustDecimal("100")},
			[]TrafficUsage{{At: off(day), Bytes: 99 * gib, Direction: Out}},
			off(40 * day), "0.00"},
		{"direction both charges in and out",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.1"), Direction: Both},
			[]TrafficUsage{{At: off(day), Bytes: 10 * gib, Direction: Out}, {At: off(day), Bytes: 10 * gib, Direction: In}},
			off(2 * day), "2.00"},
		{"direction in charges only inbound",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.1"), Direction: In},
			[]TrafficUsage{{At: off(day), Bytes: 10 * gib, Direction: Out}, {At: off(day), Bytes: 5 * gib, Direction: In}},
			off(2 * day), "0.50"},
		{"usage accrues at its At, not before",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("1")},
			[]TrafficUsage{{At: off(day), Bytes: 10 * gib, Direction: Out}},
			off(day), "0.00"},
		{"fractional free allowance",
			TrafficTerms{Priced: true, PricePerGB: MustDecimal("1"), FreeGB: MustDecimal("0.5")},
			[]TrafficUsage{{At: off(day), Bytes: gib, Direction: Out}},
			off(2 * day), "0.50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRental("a", PerSecond, "0", UnitHour, USD, ev(EventStart, 0))
			r.Traffic, r.TrafficUsage = tt.terms, tt.usage
			st := StatementAsOf(bookOf(r), tt.asOf)
			money(t, st.Rentals[0].Traffic, tt.want)
			money(t, st.Total(USD).Traffic, tt.want)
		})
	}
}

func TestStatement_TrafficMonthInUserZone(t *testing.T) {
	// 2026-11-30 20:00 UTC is already December in Shanghai: the second
	// usage starts a new allowance there but not in UTC.
	gib := int64(1 << 30)
	r := newRental("a", PerSecond, "0", UnitHour, CNY, ev(EventStart, 0))
	r.Traffic = TrafficTerms{Priced: true, PricePerGB: MustDecimal("1"), FreeGB: MustDecimal("10")}
	r.TrafficUsage = []TrafficUsage{
		{At: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Bytes: 10 * gib, Direction: Out},
		{At: time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC), Bytes: 10 * gib, Direction: Out},
	}
	for _, tc := range []struct{ tz, want string }{{"UTC", "10.00"}, {"Asia/Shanghai", "0.00"}} {
		b := bookOf(r)
		b.User.TZ = tc.tz
		st := StatementAsOf(b, time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
		money(t, st.Rentals[0].Traffic, tc.want)
	}
}

func TestStatement_OneOffCharges(t *testing.T) {
	r := newRental("box1", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour))
	b := bookOf(r)
	b.Charges = []Charge{
		{ID: 1, RentalID: r.ID, Amount: MustDecimal("5"), Currency: CNY, Note: "image", At: off(30 * min1)},
		{ID: 2, Platform: "vast", Amount: MustDecimal("1.005"), Currency: USD, Note: "support", At: off(10 * min1)},
		{ID: 3, RentalID: r.ID, Amount: MustDecimal("2"), Currency: CNY, At: off(2 * hour)},
	}
	st := StatementAsOf(b, off(2*hour))
	money(t, st.Rentals[0].Other, "5.00")
	money(t, st.Rentals[0].Total, "8.60")
	money(t, st.Total(CNY).Other, "5.00")
	money(t, st.Total(USD).Other, "1.01")
	money(t, st.ByPlatform["test"][CNY].Total, "8.60")
	money(t, st.ByPlatform["vast"][USD].Total, "1.01")
	if len(st.Others) != 2 || st.Others[0].Charge.ID != 2 {
		t.Errorf("others = %+v, want charges 2 then 1", st.Others)
	}
	st = StatementAsOf(b, off(3*hour))
	money(t, st.Total(CNY).Other, "7.00")
}

func TestStatement_Idle(t *testing.T) {
	tests := []struct {
		name     string
		r        *Rental
		idle     []Interval
		asOf     time.Duration
		wantSecs int64
		want     string
	}{
		{"idle inside a running segment",
			newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0)),
			[]Interval{{From: off(10 * min1), To: off(40 * min1)}}, hour, 1800, "1.80"},
		{"an open idle interval counts up to as-of",
			newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0)),
			[]Interval{{From: off(50 * min1)}}, hour, 600, "0.60"},
		{"idle while stopped does not count",
			newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 20*min1), ev(EventResume, 40*min1)),
			[]Interval{{From: off(10 * min1), To: off(50 * min1)}}, hour, 1200, "1.20"},
		{"idle across a price change uses the rate in force",
			newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0), priceEv(30*min1, "7.2", UnitHour)),
			[]Interval{{From: off(20 * min1), To: off(40 * min1)}}, hour, 1200, "1.80"},
		{"per-hour: idle ignores the step",
			newRental("a", PerHour, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 10*min1)),
			[]Interval{{From: off(5 * min1), To: off(20 * min1)}}, hour, 300, "0.30"},
		{"always-on: idle wall-clock time counts, stopped or not",
			newRental("a", AlwaysOn, "86.4", UnitDay, CNY, ev(EventStart, 0), ev(EventStop, 10*min1)),
			[]Interval{{From: off(0), To: off(30 * min1)}}, hour, 1800, "1.80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Idle = tt.idle
			st := StatementAsOf(bookOf(tt.r), off(tt.asOf))
			rc := st.Rentals[0]
			if rc.IdleSeconds != tt.wantSecs {
				t.Errorf("idle %d s, want %d", rc.IdleSeconds, tt.wantSecs)
			}
			money(t, rc.IdleCost, tt.want)
			money(t, st.IdleCost[CNY], tt.want)
		})
	}
}

func TestSpend_Window(t *testing.T) {
	r := newRental("a", PerHour, "2", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, 150*min1))
	old := newRental("old", PerSecond, "2", UnitHour, CNY, ev(EventStart, -10*day), ev(EventRelease, -9*day))
	b := bookOf(r, old)
	tests := []struct {
		from, to time.Duration
		want     string
		rentals  int
	}{
		{0, hour, "2.00", 1},
		{hour, hour + sec, "2.00", 1}, // the second hour accrues at its start
		{hour + sec, 2 * hour, "0.00", 1},
		{2 * hour, 3 * hour, "2.00", 1},
		{3 * hour, 4 * hour, "0.00", 1},
		{-10 * day, 0, "48.00", 1},
		{-20 * day, 10 * day, "54.00", 2},
	}
	for _, tt := range tests {
		st := Spend(b, off(tt.from), off(tt.to))
		money(t, st.Total(CNY).Total, tt.want)
		if len(st.Rentals) != tt.rentals {
			t.Errorf("[%s, %s): %d rentals listed, want %d", tt.from, tt.to, len(st.Rentals), tt.rentals)
		}
	}
}

func TestRateMoney_FastPathMatchesRat(t *testing.T) {
	prices := []Price{
		{MustDecimal("1.88"), UnitHour}, {MustDecimal("0.000000001"), UnitSecond},
		{MustDecimal("70"), UnitWeek}, {MustDecimal("999999999.999999999"), UnitSecond},
		{MustDecimal("0.69"), UnitHour}, {MustDecimal("3"), UnitMonth},
	}
	for i, p := range prices {
		for _, secs := range []int64{0, 1, 59, 3600, 86400 * 365, 1 << 40} {
			rates := []rate{newRate(p)}
			for _, floor := range []Decimal{{}, MustDecimal("0.01"), MustDecimal("123456.789")} {
				got := rateMoney(rates, []int64{secs}, floor, true, CNY)
				want := Round(rateRat(rates, []int64{secs}, floor, true), CNY)
				if got != want {
					t.Errorf("price %d %s × %d s floor %s: fast %s, exact %s", i, p, secs, floor, got, want)
				}
			}
		}
	}
	if r := newRate(prices[3]); r.wok {
		t.Errorf("an absurd per-second price should overflow the fast weight and use big.Rat")
	}
	// The rounding half-way case through the fast path.
	if got := rateMoney([]rate{newRate(Price{MustDecimal("18"), UnitHour})}, []int64{1}, Decimal{}, false, CNY); got.Minor != 1 {
		t.Errorf("0.005 rounded to %s", got)
	}
}

// TestStatementAsOf_StoragePerState: a volume with a stopped price bills
// at it while its rental is stopped or released (RunPod's volume disk:
// $0.10/GB/month running, $0.20 stopped), at its price while running, and
// a volume without one bills the same in every state.
func TestStatementAsOf_StoragePerState(t *testing.T) {
	stopped := func(price string) func(*Volume) {
		return func(v *Volume) { v.HasStoppedPrice, v.StoppedPrice = true, MustDecimal(price) }
	}
	runpod := func(f func(*Volume), evs ...VolumeEvent) *Volume {
		v := volume("vol", "100", "0", "0.10", PerGBMonth, USD, evs...)
		v.RentalID = 7
		if f != nil {
			f(v)
		}
		return v
	}
	pod := func(evs ...Event) *Rental {
		r := newRental("pod", PerSecond, "0", UnitHour, USD, append([]Event{ev(EventStart, 0)}, evs...)...)
		r.ID = 7
		return r
	}
	tests := []struct {
		name string
		r    *Rental
		v    *Volume
		asOf time.Duration
		want string
	}{
		{"running all month at the running price", pod(), runpod(stopped("0.20")), 30 * day, "10.00"},
		{"stopped 10 of 30 days: 20×0.10/30×100 + 10×0.20/30×100", pod(ev(EventStop, 10*day), ev(EventResume, 20*day)),
			runpod(stopped("0.20")), 30 * day, "13.33"},
		{"stopped for good from day 15", pod(ev(EventStop, 15*day)), runpod(stopped("0.20")), 30 * day, "15.00"},
		{"released counts as stopped", pod(ev(EventRelease, 15*day)), runpod(stopped("0.20")), 30 * day, "15.00"},
		{"asked mid-stop: prorated by the second", pod(ev(EventStop, 10*day)), runpod(stopped("0.20")), 10*day + 12*hour, "3.67"},
		{"not billed while stopped (zero stopped price)", pod(ev(EventStop, 10*day), ev(EventResume, 20*day)),
			runpod(stopped("0")), 30 * day, "6.67"},
		{"no stopped price: one rate in every state", pod(ev(EventStop, 10*day)), runpod(nil), 30 * day, "10.00"},
		{"resize while stopped", pod(ev(EventStop, 10*day)),
			runpod(stopped("0.20"), VolumeEvent{Kind: VolumeResize, At: off(20 * day), SizeGB: MustDecimal("200")}), 30 * day, "23.33"},
		{"deleted while stopped", pod(ev(EventStop, 10*day)),
			runpod(stopped("0.20"), VolumeEvent{Kind: VolumeDelete, At: off(20 * day)}), 30 * day, "10.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bookOf(tt.r)
			b.Volumes = []*Volume{tt.v}
			st := StatementAsOf(b, off(tt.asOf))
			money(t, st.Volumes[0].Charge, tt.want)
			money(t, st.Total(USD).Storage, tt.want)
		})
	}
}
