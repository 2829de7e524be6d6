package ledger_test

import (
	"math/big"
	"sort"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file recomputes every figure of the JSON export from the export
// alone, with its own small implementation of DESIGN.md section 4's rules
// (big.Rat, one half-up rounding per line): it never calls the engine.
// It is what a user reconciling in a spreadsheet does, so a rule input
// the export leaves out (a rental's price history, its stops, a volume's
// resize, a traffic price) makes a line impossible to recompute and fails
// here.

// The export as this test reads it: only what recomputation needs.
type xDoc struct {
	AsOf     string                   `json:"as_of"`
	TimeZone string                   `json:"time_zone"`
	Rentals  []xRental                `json:"rentals"`
	Volumes  []xVolume                `json:"volumes"`
	OneOffs  []xOneOff                `json:"one_offs"`
	TopUps   []xMoneyAt               `json:"top_ups"`
	Readings []xMoneyAt               `json:"balance_readings"`
	Totals   map[string]xTotals       `json:"totals"`
	Balances map[string]xBalanceEntry `json:"balances"`
}

type xRental struct {
	Name           string  `json:"name"`
	Ref            string  `json:"ref"`
	Platform       string  `json:"platform"`
	Mode           string  `json:"mode"`
	Price          *string `json:"price"`
	PriceUnit      *string `json:"price_unit"`
	Currency       string  `json:"currency"`
	State          string  `json:"state"`
	RunningSeconds int64   `json:"running_seconds"`
	BilledSeconds  int64   `json:"billed_seconds"`
	IdleSeconds    int64   `json:"idle_seconds"`
	Idle           []struct {
		From string  `json:"from"`
		To   *string `json:"to"`
	} `json:"idle_periods"`
	MinSeconds  int64    `json:"min_seconds"`
	StepSeconds int64    `json:"step_seconds"`
	Floor       *string  `json:"floor"`
	Events      []xEvent `json:"events"`
	Traffic     *struct {
		Priced       bool    `json:"priced"`
		PricePerGB   *string `json:"price_per_gb"`
		FreeGB       string  `json:"free_gb"`
		Direction    string  `json:"direction"`
		PriceChanges []struct {
			At         string `json:"at"`
			PricePerGB string `json:"price_per_gb"`
		} `json:"price_changes"`
		Usage []struct {
			At        string `json:"at"`
			Bytes     int64  `json:"bytes"`
			Direction string `json:"direction"`
		} `json:"usage"`
	} `json:"traffic"`
	Charges xTotals `json:"charges"`
}

type xEvent struct {
	Kind      string  `json:"kind"`
	At        string  `json:"at"`
	Price     *string `json:"price"`
	PriceUnit *string `json:"price_unit"`
	SizeGB    *string `json:"size_gb"`
}

type xVolume struct {
	Name         string   `json:"name"`
	Platform     string   `json:"platform"`
	Rental       *string  `json:"rental"`
	RentalRef    *string  `json:"rental_ref"`
	FreeGB       string   `json:"free_gb"`
	Price        *string  `json:"price"`
	PriceUnit    string   `json:"price_unit"`
	StoppedPrice *string  `json:"stopped_price"`
	Currency     string   `json:"currency"`
	Events       []xEvent `json:"events"`
	Charge       string   `json:"charge"`
	PriceChanges []struct {
		At           string  `json:"at"`
		Price        string  `json:"price"`
		PriceUnit    string  `json:"price_unit"`
		StoppedPrice *string `json:"stopped_price"`
	} `json:"price_changes"`
}

type xOneOff struct {
	At        string  `json:"at"`
	Platform  string  `json:"platform"`
	Rental    *string `json:"rental"`
	RentalRef *string `json:"rental_ref"`
	Amount    string  `json:"amount"`
	Currency  string  `json:"currency"`
	Charge    string  `json:"charge"`
	Note      string  `json:"note"`
}

type xMoneyAt struct {
	At       string `json:"at"`
	Platform string `json:"platform"`
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

type xTotals struct {
	Compute  string `json:"compute"`
	Storage  string `json:"storage"`
	Traffic  string `json:"traffic"`
	Other    string `json:"other"`
	Total    string `json:"total"`
	Unpriced int    `json:"unpriced"`
}

type xBalanceEntry struct {
	Currency  string  `json:"currency"`
	Balance   string  `json:"balance"`
	RunsOutAt *string `json:"runs_out_at"`
}

// rat parses a decimal string exactly.
func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a decimal: %q", s)
	}
	return r
}

// minorDigits is the rounding unit of the currencies this test uses.
func minorDigits(cur string) int {
	if cur == "JPY" {
		return 0
	}
	return 2
}

// roundMinor rounds r half away from zero to the currency's minor unit
// and returns it in minor units.
func roundMinor(r *big.Rat, cur string) int64 {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(minorDigits(cur))), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	neg := x.Sign() < 0
	x.Abs(x)
	x.Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if neg {
		q.Neg(q)
	}
	return q.Int64()
}

// fmtMinor writes minor units as the export does ("12.30", "-0.05", "7").
func fmtMinor(n int64, cur string) string {
	d := minorDigits(cur)
	if d == 0 {
		return big.NewInt(n).String()
	}
	return new(big.Rat).SetFrac(big.NewInt(n), big.NewInt(100)).FloatString(d)
}

var unitSecs = map[string]int64{
	"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "month": 30 * 86400,
	"gb_hour": 3600, "gb_day": 86400, "gb_month": 30 * 86400,
}

type recomputer struct {
	t    *testing.T
	loc  *time.Location
	asOf int64
	doc  xDoc
}

func (rc *recomputer) at(s string) int64 {
	rc.t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		rc.t.Fatalf("time %q: %v", s, err)
	}
	return tm.Unix()
}

// perSecond returns amount per unit as a per-second rate.
func (rc *recomputer) perSecond(amount, unit string) *big.Rat {
	rc.t.Helper()
	n, ok := unitSecs[unit]
	if !ok {
		rc.t.Fatalf("unknown unit %q", unit)
	}
	return new(big.Rat).Quo(rat(rc.t, amount), big.NewRat(n, 1))
}

type priceAt struct {
	at     int64
	amount string
	unit   string
}

// computeAt returns a rental's exact compute charge accrued before t and
// its billed and running seconds, from its exported events and terms.
func (rc *recomputer) computeAt(r xRental, t int64) (charge *big.Rat, billed, running int64) {
	charge = new(big.Rat)
	if len(r.Events) == 0 {
		rc.t.Errorf("rental %s: the export has no events: its compute cannot be recomputed", r.Name)
		return charge, 0, 0
	}
	var prices []priceAt
	for _, e := range r.Events {
		if (e.Kind == "start" || e.Kind == "price") && e.Price != nil {
			prices = append(prices, priceAt{rc.at(e.At), *e.Price, *e.PriceUnit})
		}
	}
	rateAt := func(x int64) priceAt {
		var p priceAt
		for _, q := range prices {
			if q.at <= x {
				p = q
			}
		}
		return p
	}
	start := rc.at(r.Events[0].At)
	if t <= start {
		return charge, 0, 0
	}
	secs := map[priceAt]int64{}
	// Running segments, cut at t.
	type seg struct{ s, e int64 }
	var segs []seg
	open, end := int64(-1), t
	for _, e := range r.Events {
		at := rc.at(e.At)
		switch e.Kind {
		case "start", "resume":
			if open < 0 {
				open = at
			}
		case "stop", "release":
			if open >= 0 {
				segs = append(segs, seg{open, min(at, t)})
				open = -1
			}
			if e.Kind == "release" {
				end = min(end, at)
			}
		}
	}
	if open >= 0 {
		segs = append(segs, seg{open, t})
	}
	for _, s := range segs {
		if s.e > s.s {
			running += s.e - s.s
		}
	}
	if r.Mode == "always-on" {
		// Wall clock from start to release, in runs cut at each price
		// change; a package price bills each started period in full.
		cuts := []int64{start}
		for _, p := range prices[1:] {
			if p.at > start && p.at < end {
				cuts = append(cuts, p.at)
			}
		}
		cuts = append(cuts, end)
		for i := 0; i+1 < len(cuts); i++ {
			s, e := cuts[i], cuts[i+1]
			if e <= s {
				continue
			}
			p := rateAt(s)
			step := int64(1)
			if p.unit == "day" || p.unit == "week" || p.unit == "month" {
				step = unitSecs[p.unit]
			}
			n := (e - s + step - 1) / step * step
			secs[p] += n
			billed += n
		}
	} else {
		step, minS := r.StepSeconds, r.MinSeconds
		if step <= 0 {
			rc.t.Errorf("rental %s: step_seconds %d", r.Name, step)
			return charge, 0, running
		}
		for _, s := range segs {
			y := s.e - s.s
			if y <= 0 {
				continue
			}
			ns := (y + step - 1) / step * step
			billed += max(minS, ns)
			if minS > 0 {
				secs[rateAt(s.s)] += minS
			}
			for o := int64(0); o < ns; o += step {
				lo, hi := max(o, minS), min(o+step, ns)
				if hi > lo {
					secs[rateAt(s.s+o)] += hi - lo
				}
			}
		}
	}
	for p, n := range secs {
		if p.unit == "" {
			continue // an unpriced rental: billed seconds, no charge
		}
		x := rc.perSecond(p.amount, p.unit)
		charge.Add(charge, x.Mul(x, big.NewRat(n, 1)))
	}
	if r.Floor != nil {
		if f := rat(rc.t, *r.Floor); charge.Cmp(f) < 0 {
			charge = f
		}
	}
	return charge, billed, running
}

// idleAt returns the seconds before t that the agent saw the host idle
// while the rental was billed: running (always-on: from start to
// release).
func (rc *recomputer) idleAt(r xRental, t int64) int64 {
	type span struct{ s, e int64 }
	var spans []span
	open := int64(-1)
	for _, e := range r.Events {
		at := rc.at(e.At)
		switch {
		case e.Kind == "start" || e.Kind == "resume" && r.Mode != "always-on":
			if open < 0 {
				open = at
			}
		case e.Kind == "release" || e.Kind == "stop" && r.Mode != "always-on":
			if open >= 0 {
				spans = append(spans, span{open, at})
				open = -1
			}
		}
	}
	if open >= 0 {
		spans = append(spans, span{open, t})
	}
	var n int64
	for _, iv := range r.Idle {
		from, to := rc.at(iv.From), t
		if iv.To != nil {
			to = min(rc.at(*iv.To), t)
		}
		for _, sp := range spans {
			if d := min(to, sp.e, t) - max(from, sp.s); d > 0 {
				n += d
			}
		}
	}
	return n
}

// trafficAt returns a rental's exact traffic charge accrued before t and
// whether any usage (any direction) lies before t.
func (rc *recomputer) trafficAt(r xRental, t int64) (*big.Rat, bool) {
	sum := new(big.Rat)
	tr := r.Traffic
	if tr == nil {
		return sum, false
	}
	used := false
	gib := big.NewRat(1<<30, 1)
	var free *big.Rat
	if tr.Priced {
		free = new(big.Rat).Mul(rat(rc.t, tr.FreeGB), gib)
	}
	month := ""
	cum := new(big.Rat)
	excess := func(b *big.Rat) *big.Rat {
		x := new(big.Rat).Sub(b, free)
		if x.Sign() < 0 {
			return new(big.Rat)
		}
		return x
	}
	for _, u := range tr.Usage {
		at := rc.at(u.At)
		if at >= t {
			continue
		}
		used = true
		if !tr.Priced || tr.Direction != "both" && u.Direction != tr.Direction {
			continue
		}
		if m := time.Unix(at, 0).In(rc.loc).Format("2006-01"); m != month {
			month, cum = m, new(big.Rat)
		}
		before := excess(cum)
		cum = new(big.Rat).Add(cum, big.NewRat(u.Bytes, 1))
		price := *tr.PricePerGB
		for _, p := range tr.PriceChanges {
			if rc.at(p.At) <= at {
				price = p.PricePerGB
			}
		}
		d := new(big.Rat).Sub(excess(cum), before)
		d.Quo(d, gib)
		sum.Add(sum, d.Mul(d, rat(rc.t, price)))
	}
	return sum, used
}

// rental returns the exported rental with the address ref: a name may
// be reused, an address not.
func (rc *recomputer) rental(ref string) *xRental {
	for i := range rc.doc.Rentals {
		if rc.doc.Rentals[i].Ref == ref {
			return &rc.doc.Rentals[i]
		}
	}
	return nil
}

// storageAt returns a volume's exact storage charge accrued before t.
func (rc *recomputer) storageAt(v xVolume, t int64) *big.Rat {
	sum := new(big.Rat)
	if len(v.Events) == 0 {
		rc.t.Errorf("volume %s: the export has no events: its charge cannot be recomputed", v.Name)
		return sum
	}
	type terms struct {
		at          int64
		price, unit string
		stopped     *string
	}
	first := terms{at: rc.at(v.Events[0].At), price: *v.Price, unit: v.PriceUnit, stopped: v.StoppedPrice}
	all := []terms{first}
	for _, p := range v.PriceChanges {
		all = append(all, terms{at: rc.at(p.At), price: p.Price, unit: p.PriceUnit, stopped: p.StoppedPrice})
	}
	var rental *xRental
	if v.RentalRef != nil {
		rental = rc.rental(*v.RentalRef)
	}
	cuts := []int64{}
	end := t
	for _, e := range v.Events {
		at := rc.at(e.At)
		cuts = append(cuts, at)
		if e.Kind == "delete" {
			end = min(end, at)
		}
	}
	for _, p := range all {
		cuts = append(cuts, p.at)
	}
	if rental != nil {
		for _, e := range rental.Events {
			cuts = append(cuts, rc.at(e.At))
		}
	}
	cuts = append(cuts, end)
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	start := rc.at(v.Events[0].At)
	free := rat(rc.t, v.FreeGB)
	for i := 0; i+1 < len(cuts); i++ {
		s, e := max(cuts[i], start), min(cuts[i+1], end)
		if e <= s {
			continue
		}
		size := new(big.Rat)
		for _, ev := range v.Events {
			if ev.Kind != "delete" && rc.at(ev.At) <= s {
				if ev.SizeGB == nil {
					rc.t.Errorf("volume %s: its %s event has no size_gb", v.Name, ev.Kind)
					return sum
				}
				size = rat(rc.t, *ev.SizeGB)
			}
		}
		tm := first
		for _, p := range all {
			if p.at <= s {
				tm = p
			}
		}
		stopped := rental != nil && rentalStoppedAt(rc, *rental, s)
		price := tm.price
		if stopped && tm.stopped != nil {
			price = *tm.stopped
		}
		billable := new(big.Rat).Sub(size, free)
		if billable.Sign() <= 0 {
			continue
		}
		x := rc.perSecond(price, tm.unit)
		x.Mul(x, billable)
		sum.Add(sum, x.Mul(x, big.NewRat(e-s, 1)))
	}
	return sum
}

// rentalStoppedAt reports whether the rental is stopped or released after
// its events at or before s (running before it starts).
func rentalStoppedAt(rc *recomputer, r xRental, s int64) bool {
	stopped := false
	for _, ev := range r.Events {
		if rc.at(ev.At) > s {
			break
		}
		switch ev.Kind {
		case "stop", "release":
			stopped = true
		case "start", "resume":
			stopped = false
		}
	}
	return stopped
}

// burnAt returns what the platform's lines of the currency burn per
// second at t: the running rentals' compute (always-on ones until
// released; a prepaid package burns nothing, it is paid) and the live
// volumes' storage at the rate of their rental's state.
func (rc *recomputer) burnAt(plat, cur string, t int64) *big.Rat {
	burn := new(big.Rat)
	for _, r := range rc.doc.Rentals {
		if r.Platform != plat || r.Currency != cur || r.Price == nil || len(r.Events) == 0 || rc.at(r.Events[0].At) > t {
			continue
		}
		state, amount, unit := "running", "", ""
		for _, e := range r.Events {
			if rc.at(e.At) > t {
				break
			}
			switch e.Kind {
			case "start", "resume":
				state = "running"
			case "stop":
				state = "stopped"
			case "release":
				state = "released"
			}
			if e.Price != nil {
				amount, unit = *e.Price, *e.PriceUnit
			}
		}
		if state == "released" || state == "stopped" && r.Mode != "always-on" {
			continue
		}
		if r.Mode == "always-on" && (unit == "day" || unit == "week" || unit == "month") {
			continue
		}
		burn.Add(burn, rc.perSecond(amount, unit))
	}
	for _, v := range rc.doc.Volumes {
		if v.Platform != plat || v.Currency != cur || v.Price == nil {
			continue
		}
		// One second's charge at t is the rate in force then.
		x := rc.storageAt(v, t+1)
		burn.Add(burn, x.Sub(x, rc.storageAt(v, t)))
	}
	return burn
}

// line is one recomputed line in minor units; priced false is UNPRICED.
type line struct {
	platform, currency string
	priced             bool
	minor              int64
}

func (l line) String() string {
	if !l.priced {
		return ledger.Unpriced
	}
	return fmtMinor(l.minor, l.currency)
}

// check recomputes every line, every rental's parts, every total and
// every balance, and reports each that differs from the export.
func (rc *recomputer) check() {
	t := rc.t
	type tot struct {
		compute, storage, traffic, other int64
		unpriced                         int
	}
	totals := map[string]*tot{}
	totOf := func(c string) *tot {
		if totals[c] == nil {
			totals[c] = &tot{}
		}
		return totals[c]
	}
	storageOf := map[string][]line{} // by rental address
	otherOf := map[string]int64{}
	for _, v := range rc.doc.Volumes {
		l := line{platform: v.Platform, currency: v.Currency, priced: v.Price != nil}
		if l.priced {
			l.minor = roundMinor(rc.storageAt(v, rc.asOf), v.Currency)
			totOf(v.Currency).storage += l.minor
		} else {
			totOf(v.Currency).unpriced++
		}
		if got := v.Charge; got != l.String() && l.priced {
			t.Errorf("volume %s: charge %s, recomputed %s", v.Name, got, l)
		}
		if v.RentalRef != nil {
			storageOf[*v.RentalRef] = append(storageOf[*v.RentalRef], l)
		}
	}
	for _, o := range rc.doc.OneOffs {
		m := roundMinor(rat(t, o.Amount), o.Currency)
		if o.Charge != fmtMinor(m, o.Currency) {
			t.Errorf("one-off %q: charge %s, recomputed %s", o.Note, o.Charge, fmtMinor(m, o.Currency))
		}
		totOf(o.Currency).other += m
		if o.RentalRef != nil {
			if r := rc.rental(*o.RentalRef); r != nil && r.Currency == o.Currency {
				otherOf[*o.RentalRef] += m
			}
		}
	}
	for _, r := range rc.doc.Rentals {
		tt := totOf(r.Currency)
		c, billed, running := rc.computeAt(r, rc.asOf)
		compute := line{currency: r.Currency, priced: r.Price != nil, minor: roundMinor(c, r.Currency)}
		if compute.priced {
			tt.compute += compute.minor
		} else {
			tt.unpriced++
		}
		tr, used := rc.trafficAt(r, rc.asOf)
		traffic := line{currency: r.Currency, priced: true}
		if r.Traffic != nil && r.Traffic.Priced {
			traffic.minor = roundMinor(tr, r.Currency)
			tt.traffic += traffic.minor
		} else if used {
			traffic.priced = false
			tt.unpriced++
		}
		storage := line{currency: r.Currency, priced: true}
		for _, l := range storageOf[r.Ref] {
			if !l.priced {
				storage.priced = false
			} else if l.currency == r.Currency {
				storage.minor += l.minor
			}
		}
		other := line{currency: r.Currency, priced: true, minor: otherOf[r.Ref]}
		total := line{currency: r.Currency, priced: compute.priced && storage.priced && traffic.priced,
			minor: compute.minor + storage.minor + traffic.minor + other.minor}
		for _, f := range []struct {
			what, got string
			want      line
		}{
			{"compute", r.Charges.Compute, compute}, {"storage", r.Charges.Storage, storage},
			{"traffic", r.Charges.Traffic, traffic}, {"other", r.Charges.Other, other}, {"total", r.Charges.Total, total},
		} {
			if f.got != f.want.String() {
				t.Errorf("rental %s: %s %s, recomputed %s", r.Name, f.what, f.got, f.want)
			}
		}
		if idle := rc.idleAt(r, rc.asOf); r.IdleSeconds != idle {
			t.Errorf("rental %s: idle %d s, recomputed %d s", r.Name, r.IdleSeconds, idle)
		}
		if r.BilledSeconds != billed || r.RunningSeconds != running {
			t.Errorf("rental %s: billed %d s, running %d s; recomputed %d s, %d s", r.Name, r.BilledSeconds, r.RunningSeconds, billed, running)
		}
	}
	for c, want := range totals {
		got, ok := rc.doc.Totals[c]
		if !ok {
			t.Errorf("totals: no %s entry", c)
			continue
		}
		w := xTotals{Compute: fmtMinor(want.compute, c), Storage: fmtMinor(want.storage, c), Traffic: fmtMinor(want.traffic, c),
			Other: fmtMinor(want.other, c), Total: fmtMinor(want.compute+want.storage+want.traffic+want.other, c), Unpriced: want.unpriced}
		if got != w {
			t.Errorf("totals %s: %+v, recomputed %+v", c, got, w)
		}
	}
	if len(rc.doc.Totals) != len(totals) {
		t.Errorf("totals has %d currencies, recomputed %d", len(rc.doc.Totals), len(totals))
	}
	rc.checkBalances()
}

// checkBalances recomputes each platform's balance: its last reading (or
// its first top-up), plus the top-ups after it, less what each line of
// that platform and currency accrued from then to as_of.
func (rc *recomputer) checkBalances() {
	t := rc.t
	type fact struct {
		at  int64
		cur string
	}
	latest := map[string]fact{}
	for _, list := range [][]xMoneyAt{rc.doc.Readings, rc.doc.TopUps} {
		for _, m := range list {
			if f, ok := latest[m.Platform]; !ok || rc.at(m.At) >= f.at {
				latest[m.Platform] = fact{rc.at(m.At), m.Currency}
			}
		}
	}
	for plat, f := range latest {
		cur := f.cur
		var since int64
		var bal int64
		var reading *xMoneyAt
		for i, m := range rc.doc.Readings {
			if m.Platform == plat && m.Currency == cur && (reading == nil || rc.at(m.At) >= rc.at(reading.At)) {
				reading = &rc.doc.Readings[i]
			}
		}
		if reading != nil {
			since, bal = rc.at(reading.At), roundMinor(rat(t, reading.Amount), cur)
		} else {
			since = rc.asOf
			for _, m := range rc.doc.TopUps {
				if m.Platform == plat && m.Currency == cur {
					since = min(since, rc.at(m.At))
				}
			}
		}
		for _, m := range rc.doc.TopUps {
			if m.Platform == plat && m.Currency == cur && (reading == nil || rc.at(m.At) > since) {
				bal += roundMinor(rat(t, m.Amount), cur)
			}
		}
		spent := func(a, b *big.Rat) int64 { return roundMinor(b, cur) - roundMinor(a, cur) }
		for _, r := range rc.doc.Rentals {
			if r.Platform != plat || r.Currency != cur {
				continue
			}
			if r.Price != nil {
				a, _, _ := rc.computeAt(r, since)
				b, _, _ := rc.computeAt(r, rc.asOf)
				bal -= spent(a, b)
			}
			if r.Traffic != nil && r.Traffic.Priced {
				a, _ := rc.trafficAt(r, since)
				b, _ := rc.trafficAt(r, rc.asOf)
				bal -= spent(a, b)
			}
		}
		for _, v := range rc.doc.Volumes {
			if v.Platform == plat && v.Currency == cur && v.Price != nil {
				bal -= spent(rc.storageAt(v, since), rc.storageAt(v, rc.asOf))
			}
		}
		for _, o := range rc.doc.OneOffs {
			if o.Platform == plat && o.Currency == cur && rc.at(o.At) >= since {
				bal -= roundMinor(rat(t, o.Amount), cur)
			}
		}
		got, ok := rc.doc.Balances[plat]
		if want := fmtMinor(bal, cur); !ok || got.Balance != want || got.Currency != cur {
			t.Errorf("balance of %s: %+v, recomputed %s %s", plat, got, want, cur)
		}
		// The runway: the balance over what burns at as_of, whole seconds.
		burn := rc.burnAt(plat, cur, rc.asOf)
		want := "null"
		switch {
		case bal <= 0:
			want = time.Unix(rc.asOf, 0).In(rc.loc).Format(time.RFC3339)
		case burn.Sign() > 0:
			secs := new(big.Rat).Quo(new(big.Rat).SetFrac(big.NewInt(bal), big.NewInt(100)), burn)
			q := new(big.Int).Quo(secs.Num(), secs.Denom())
			want = time.Unix(rc.asOf+q.Int64(), 0).In(rc.loc).Format(time.RFC3339)
		}
		if g := ptrOr(got.RunsOutAt); g != want && !(g == "" && want == "null") {
			t.Errorf("balance of %s runs out at %q, recomputed %s (burn %s/s)", plat, g, want, burn.FloatString(9))
		}
	}
	if len(rc.doc.Balances) != len(latest) {
		t.Errorf("balances has %d platforms, recomputed %d", len(rc.doc.Balances), len(latest))
	}
}
