package ledger_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"math/big"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
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

// richLedger records, through the real store, a month of rentals that
// uses every input of the billing rules, for a user in Asia/Shanghai,
// and returns the store, the user and the export's as_of.
func richLedger(t *testing.T) (*sqlite.DB, int64, time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const uid = 42
	if _, err := db.EnsureUser(ctx, ledger.User{ID: uid, Lang: "zh", TZ: "Asia/Shanghai"}); err != nil {
		t.Fatal(err)
	}
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 10, 28, 9, 17, 23, 0, sh)
	asOf := time.Date(2026, 11, 3, 14, 38, 11, 0, sh)
	d := func(s string) time.Time {
		t.Helper()
		x, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return t0.Add(x)
	}
	act := ledger.Action{UserID: uid, At: asOf}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dec := ledger.MustDecimal
	price := func(a string, u ledger.Unit) ledger.Price { return ledger.Price{Amount: dec(a), Unit: u} }
	rent := func(r ledger.Rental, at time.Time) {
		t.Helper()
		r.GPU, r.GPUCount = "RTX 4090", 1
		r.Events = []ledger.Event{{Kind: ledger.EventStart, At: at}}
		must(db.CreateRental(ctx, act, r))
	}
	ev := func(name string, kind ledger.EventKind, at time.Time, p ...ledger.Price) {
		t.Helper()
		e := ledger.Event{Kind: kind, At: at}
		if len(p) > 0 {
			e.Price = p[0]
		}
		must(db.AppendEvent(ctx, act, name, e))
	}
	traffic := func(name string, at time.Time, gb int64, dir ledger.Direction) {
		t.Helper()
		must(db.AddTraffic(ctx, act, name, ledger.TrafficUsage{At: at, Bytes: gb<<30 + 123456789, Direction: dir}))
	}

	// Per-second at ¥1.88/h, stopped and resumed, its price changed
	// mid-run, still running; traffic above a monthly allowance across
	// the month's end, its price changed.
	rent(ledger.Rental{Name: "yolo", Platform: "autodl", Mode: ledger.PerSecond, Priced: true, Price: price("1.88", ledger.UnitHour),
		Currency: ledger.CNY, Traffic: ledger.TrafficTerms{Priced: true, PricePerGB: dec("0.8"), FreeGB: dec("20"), Direction: ledger.Out}}, t0)
	ev("yolo", ledger.EventStop, d("2h13m7s"))
	traffic("yolo", d("3h"), 15, ledger.Out)
	traffic("yolo", d("3h5m"), 40, ledger.In)
	ev("yolo", ledger.EventResume, d("5h0m41s"))
	ev("yolo", ledger.EventPrice, d("6h30m19s"), price("2.08", ledger.UnitHour))
	traffic("yolo", d("24h"), 12, ledger.Out)
	must(db.SetTrafficPriceAt(ctx, act, "yolo", ledger.CNY, ledger.TrafficPrice{At: d("48h"), PricePerGB: dec("0.65")}))
	traffic("yolo", d("50h"), 9, ledger.Out)
	traffic("yolo", d("100h"), 25, ledger.Out) // November: a new allowance

	// Per-minute at $0.0123/min with a 10-minute minimum: a short run,
	// a price change inside a run, released.
	rent(ledger.Rental{Name: "pod", Platform: "runpod", Mode: ledger.PerMinute, Priced: true, Price: price("0.0123", ledger.UnitMinute),
		Currency: ledger.USD, Min: 10 * time.Minute}, d("1h"))
	ev("pod", ledger.EventStop, d("1h3m17s"))
	ev("pod", ledger.EventResume, d("4h"))
	ev("pod", ledger.EventPrice, d("4h31m30s"), price("0.89", ledger.UnitHour))
	ev("pod", ledger.EventStop, d("7h2m1s"))
	ev("pod", ledger.EventResume, d("30h"))
	ev("pod", ledger.EventRelease, d("31h45m59s"))

	// Per-hour with a floor, two runs and a price change: started hours.
	rent(ledger.Rental{Name: "hr", Platform: "vast", Mode: ledger.PerHour, Priced: true, Price: price("0.347", ledger.UnitHour),
		Currency: ledger.USD, Floor: dec("5")}, d("2h"))
	ev("hr", ledger.EventPrice, d("2h40m"), price("0.421", ledger.UnitHour))
	ev("hr", ledger.EventStop, d("3h10m"))
	ev("hr", ledger.EventResume, d("20h"))
	ev("hr", ledger.EventRelease, d("21h0m1s"))

	// Per-second in 15-minute steps with a floor of ¥0.01 (a short job).
	rent(ledger.Rental{Name: "tiny", Platform: "autodl", Mode: ledger.PerSecond, Priced: true, Price: price("0.01", ledger.UnitHour),
		Currency: ledger.CNY, Step: 15 * time.Minute, Floor: dec("0.05")}, d("10h"))
	ev("tiny", ledger.EventRelease, d("10h16m"))

	// Always-on: a daily package, then an hourly price (prorated), stops
	// that do not stop the meter.
	rent(ledger.Rental{Name: "pkg", Platform: "featurize", Mode: ledger.AlwaysOn, Priced: true, Price: price("45", ledger.UnitDay),
		Currency: ledger.CNY}, d("3h"))
	ev("pkg", ledger.EventStop, d("20h"))
	ev("pkg", ledger.EventPrice, d("40h"), price("2.2", ledger.UnitHour))
	ev("pkg", ledger.EventResume, d("41h"))
	ev("pkg", ledger.EventPrice, d("60h"), price("290", ledger.UnitWeek))

	// Always-on by the hour, released; in euros.
	rent(ledger.Rental{Name: "lam", Platform: "lambda", Mode: ledger.AlwaysOn, Priced: true, Price: price("1.29", ledger.UnitHour),
		Currency: "EUR"}, d("5h"))
	ev("lam", ledger.EventStop, d("6h"))
	ev("lam", ledger.EventRelease, d("77h7m7s"))

	// No price: its compute and its traffic are UNPRICED.
	rent(ledger.Rental{Name: "mystery", Platform: "恒源云", Mode: ledger.PerSecond, Currency: ledger.CNY}, d("8h"))
	traffic("mystery", d("9h"), 3, ledger.Out)

	// Volumes: a RunPod volume with a stopped rate on the pod, resized,
	// its price changed; an AutoDL disk on yolo with a free quota,
	// deleted; an unattached one; an unpriced one.
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "vol", RentalName: "pod", Platform: "runpod", Currency: ledger.USD, Priced: true,
		Price: dec("0.1"), PriceUnit: ledger.PerGBMonth, StoppedPrice: dec("0.2"), HasStoppedPrice: true,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("1h"), SizeGB: dec("100")}}}))
	must(db.AppendVolumeEvent(ctx, act, "vol", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: d("5h"), SizeGB: dec("150")}))
	must(db.SetVolumePriceAt(ctx, act, "vol", ledger.USD, ledger.VolumePrice{At: d("26h"), Price: dec("0.07"), PriceUnit: ledger.PerGBMonth,
		StoppedPrice: dec("0.14"), HasStoppedPrice: true}))
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "data", RentalName: "yolo", Platform: "autodl", Currency: ledger.CNY, Priced: true,
		Price: dec("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: dec("50"),
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("30m"), SizeGB: dec("200")}}}))
	must(db.SetVolumePriceAt(ctx, act, "data", ledger.CNY, ledger.VolumePrice{At: d("72h"), Price: dec("0.0132"), PriceUnit: ledger.PerGBDay}))
	must(db.AppendVolumeEvent(ctx, act, "data", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: d("120h")}))
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "cold", Platform: "autodl", Currency: ledger.CNY, Priced: true,
		Price: dec("0.0003"), PriceUnit: ledger.PerGBHour,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("33h"), SizeGB: dec("37.5")}}}))
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "vd3", RentalName: "mystery", Platform: "恒源云", Currency: ledger.CNY,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("8h"), SizeGB: dec("50")}}}))

	// The name "pod" again, for a new pod after the first one's release:
	// the volume stays the first one's, the new one's charge is its own.
	rent(ledger.Rental{Name: "pod", Platform: "runpod", Mode: ledger.PerSecond, Priced: true, Price: price("0.69", ledger.UnitHour),
		Currency: ledger.USD}, d("40h"))
	ev("pod", ledger.EventStop, d("41h1m1s"))
	must(db.AddCharge(ctx, act, "pod", ledger.Charge{Platform: "runpod", Amount: dec("0.125"), Currency: ledger.USD, Note: "template", At: d("41h")}))

	// One-off charges with notes, top-ups and balance readings.
	must(db.AddCharge(ctx, act, "yolo", ledger.Charge{Platform: "autodl", Amount: dec("3.005"), Currency: ledger.CNY, Note: "镜像 image fee", At: d("4h")}))
	must(db.AddCharge(ctx, act, "", ledger.Charge{Platform: "vast", Amount: dec("1.5"), Currency: ledger.USD, Note: "support", At: d("22h")}))
	must(db.AddCharge(ctx, act, "", ledger.Charge{Platform: "lambda", Amount: dec("0.994"), Currency: "EUR", Note: "filesystem", At: d("70h")}))
	must(db.AddTopUp(ctx, act, ledger.TopUp{Platform: "autodl", Amount: dec("100"), Currency: ledger.CNY, At: d("-1h")}))
	must(db.RecordBalance(ctx, act, ledger.BalanceRecord{Platform: "autodl", Amount: dec("80.5"), Currency: ledger.CNY, At: d("30h")}))
	must(db.AddTopUp(ctx, act, ledger.TopUp{Platform: "autodl", Amount: dec("50"), Currency: ledger.CNY, At: d("90h")}))
	must(db.AddTopUp(ctx, act, ledger.TopUp{Platform: "runpod", Amount: dec("25"), Currency: ledger.USD, At: d("30m")}))
	must(db.RecordBalance(ctx, act, ledger.BalanceRecord{Platform: "vast", Amount: dec("20.004"), Currency: ledger.USD, At: d("2h30m")}))
	return db, uid, asOf
}

// TestExport_RecomputeEveryFigure recomputes every line and total of the
// JSON export of a rich ledger from the export alone, and again at an
// earlier as_of (a rental still running then, a volume not yet deleted).
func TestExport_RecomputeEveryFigure(t *testing.T) {
	db, uid, asOf := richLedger(t)
	book, err := db.Book(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	// Idle periods come from an agent's heartbeats: set here on the
	// loaded book, as the store would load them.
	idle := func(name string, from, to time.Duration) {
		r := book.Rental(name)
		iv := ledger.Interval{From: r.StartedAt().Add(from)}
		if to > 0 {
			iv.To = r.StartedAt().Add(to)
		}
		r.Idle = append(r.Idle, iv)
	}
	idle("yolo", time.Hour, 3*time.Hour) // across its stop
	idle("yolo", 30*time.Hour, 0)        // still idle
	idle("pkg", 15*time.Hour, 45*time.Hour)
	for _, at := range []time.Time{asOf, asOf.Add(-4*24*time.Hour + 17*time.Minute + 3*time.Second)} {
		var buf bytes.Buffer
		if err := ledger.WriteExportJSON(&buf, book, at); err != nil {
			t.Fatal(err)
		}
		rc := &recomputer{t: t, loc: loc, asOf: at.Unix()}
		if err := json.Unmarshal(buf.Bytes(), &rc.doc); err != nil {
			t.Fatal(err)
		}
		if rc.doc.TimeZone != "Asia/Shanghai" {
			t.Errorf("time_zone %q, want Asia/Shanghai (the months of traffic allowances are cut in it)", rc.doc.TimeZone)
		}
		if !strings.HasSuffix(rc.doc.AsOf, "+08:00") {
			t.Errorf("as_of %s is not in the user's zone", rc.doc.AsOf)
		}
		if len(rc.doc.Rentals) < 6 || len(rc.doc.Volumes) < 3 {
			t.Fatalf("the ledger exported %d rentals and %d volumes", len(rc.doc.Rentals), len(rc.doc.Volumes))
		}
		refs := map[string]bool{}
		for _, r := range rc.doc.Rentals {
			if refs[r.Ref] || !strings.HasPrefix(r.Ref, r.Name+"@") {
				t.Errorf("rental %s has the address %q, not its own", r.Name, r.Ref)
			}
			refs[r.Ref] = true
		}
		rc.check()
	}
}

// TestExportCSVPeriod_InputsOfTheWindow: the dashboard's month CSV lists
// the one-offs, top-ups and readings inside the window and each listed
// rental's and volume's whole history up to the window's end, and its
// one-off rows add up to the window's "other" totals.
func TestExportCSVPeriod_InputsOfTheWindow(t *testing.T) {
	db, uid, asOf := richLedger(t)
	book, err := db.Book(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 10, 31, 0, 0, 0, 0, asOf.Location())
	var buf bytes.Buffer
	if err := ledger.WriteExportCSVPeriod(&buf, book, from, asOf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	get := func(r []string, c string) string {
		t.Helper()
		i, ok := col[c]
		if !ok {
			t.Fatalf("no column %s", c)
		}
		return r[i]
	}
	inWindow := func(at time.Time) bool { return !at.Before(from) && at.Before(asOf) }
	want := map[string]int{}
	for _, c := range book.Charges {
		if inWindow(c.At) {
			want["one_off"]++
		}
	}
	for _, x := range book.TopUps {
		if inWindow(x.At) {
			want["top_up"]++
		}
	}
	for _, x := range book.Balances {
		if inWindow(x.At) {
			want["balance_reading"]++
		}
	}
	got := map[string]int{}
	other := map[string]*big.Rat{}
	starts := map[string]bool{}
	rentals := map[string]bool{}
	for _, r := range rows[1:] {
		kind := get(r, "record")
		got[kind]++
		switch kind {
		case "rental":
			rentals[get(r, "name")] = true
		case "rental_event":
			if get(r, "kind") == "start" {
				starts[get(r, "rental")] = true
			}
		case "one_off", "top_up", "balance_reading":
			at, err := time.Parse(time.RFC3339, get(r, "at"))
			if err != nil || !inWindow(at) {
				t.Errorf("%s at %q is outside the window [%s, %s)", kind, get(r, "at"), from, asOf)
			}
			if kind == "one_off" {
				cur := get(r, "currency")
				if other[cur] == nil {
					other[cur] = new(big.Rat)
				}
				other[cur].Add(other[cur], rat(t, get(r, "charge")))
			}
		}
	}
	for _, k := range []string{"one_off", "top_up", "balance_reading"} {
		if got[k] != want[k] {
			t.Errorf("%d %s rows, want the window's %d", got[k], k, want[k])
		}
	}
	if want["one_off"] == 0 || want["top_up"] == 0 {
		t.Fatalf("the window holds no one-off or top-up: the test checks nothing (%v)", want)
	}
	// Each line's figures in the window are its charge at the window's
	// end less its charge at its start, rounded each (design section 4),
	// recomputed from the whole export's inputs.
	var js bytes.Buffer
	if err := ledger.WriteExportJSON(&js, book, asOf); err != nil {
		t.Fatal(err)
	}
	rc := &recomputer{t: t, loc: asOf.Location(), asOf: asOf.Unix()}
	if err := json.Unmarshal(js.Bytes(), &rc.doc); err != nil {
		t.Fatal(err)
	}
	a, b := from.Unix(), asOf.Unix()
	window := func(cur string, f func(int64) *big.Rat) string {
		return fmtMinor(roundMinor(f(b), cur)-roundMinor(f(a), cur), cur)
	}
	for _, r := range rows[1:] {
		switch get(r, "record") {
		case "rental":
			x := rc.rental(get(r, "ref"))
			if x == nil {
				t.Errorf("rental row %s is not in the export", get(r, "ref"))
				continue
			}
			want := ledger.Unpriced
			if x.Price != nil {
				want = window(x.Currency, func(t int64) *big.Rat { c, _, _ := rc.computeAt(*x, t); return c })
			}
			if got := get(r, "compute"); got != want {
				t.Errorf("%s's compute in the window: %s, recomputed %s", x.Ref, got, want)
			}
			if x.Traffic != nil && x.Traffic.Priced {
				want := window(x.Currency, func(t int64) *big.Rat { c, _ := rc.trafficAt(*x, t); return c })
				if got := get(r, "traffic"); got != want {
					t.Errorf("%s's traffic in the window: %s, recomputed %s", x.Ref, got, want)
				}
			}
		case "volume":
			for _, v := range rc.doc.Volumes {
				if v.Name != get(r, "name") || v.Price == nil {
					continue
				}
				want := window(v.Currency, func(t int64) *big.Rat { return rc.storageAt(v, t) })
				if got := get(r, "charge"); got != want {
					t.Errorf("volume %s's charge in the window: %s, recomputed %s", v.Name, got, want)
				}
			}
		}
	}
	for name := range rentals {
		if !starts[name] {
			t.Errorf("rental %s is in the window's CSV without its start event (the history its figures depend on)", name)
		}
	}
	for _, r := range rows[1:] {
		if get(r, "record") != "total" {
			continue
		}
		cur := get(r, "currency")
		sum := "0.00"
		if other[cur] != nil {
			sum = other[cur].FloatString(minorDigits(cur))
		}
		if get(r, "other") != sum {
			t.Errorf("total %s: other %s, the one-off rows add up to %s", cur, get(r, "other"), sum)
		}
	}
}

// TestExportCSV_SameInputsAsJSON: the CSV carries the same inputs as the
// JSON, one row each, with what the user typed (a one-off's note and
// amount, a reading's amount) and each rental's terms on its row.
func TestExportCSV_SameInputsAsJSON(t *testing.T) {
	db, uid, asOf := richLedger(t)
	book, err := db.Book(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	var js, cs bytes.Buffer
	if err := ledger.WriteExportJSON(&js, book, asOf); err != nil {
		t.Fatal(err)
	}
	if err := ledger.WriteExportCSV(&cs, book, asOf); err != nil {
		t.Fatal(err)
	}
	var doc xDoc
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	csvText := cs.String()
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	// Each input as "kind|rental address|at|values" from both sides.
	var fromJSON, fromCSV []string
	add := func(list *[]string, parts ...string) { *list = append(*list, strings.Join(parts, "|")) }
	for _, r := range doc.Rentals {
		add(&fromJSON, "rental", r.Ref, "", strconv.FormatInt(r.MinSeconds, 10), strconv.FormatInt(r.StepSeconds, 10), ptrOr(r.Floor))
		for _, e := range r.Events {
			add(&fromJSON, "rental_event", r.Ref, e.At, e.Kind, ptrOr(e.Price), ptrOr(e.PriceUnit))
		}
		if r.Traffic != nil {
			for _, p := range r.Traffic.PriceChanges {
				add(&fromJSON, "traffic_price", r.Ref, p.At, p.PricePerGB)
			}
			for _, u := range r.Traffic.Usage {
				add(&fromJSON, "traffic", r.Ref, u.At, strconv.FormatInt(u.Bytes, 10), u.Direction)
			}
		}
	}
	for _, v := range doc.Volumes {
		for _, e := range v.Events {
			add(&fromJSON, "volume_event", v.Name, e.At, e.Kind, ptrOr(e.SizeGB))
		}
	}
	for _, o := range doc.OneOffs {
		add(&fromJSON, "one_off", ptrOr(o.RentalRef), o.At, o.Amount, o.Currency, o.Charge, o.Note)
	}
	for _, m := range doc.TopUps {
		add(&fromJSON, "top_up", m.Platform, m.At, m.Amount, m.Currency)
	}
	for _, m := range doc.Readings {
		add(&fromJSON, "balance_reading", m.Platform, m.At, m.Amount, m.Currency)
	}
	for _, r := range rows[1:] {
		g := func(c string) string { return r[col[c]] }
		switch k := g("record"); k {
		case "rental":
			add(&fromCSV, k, g("ref"), "", g("min_seconds"), g("step_seconds"), g("floor"))
		case "rental_event":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("kind"), g("price"), g("price_unit"))
		case "traffic_price":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("traffic_price"))
		case "traffic":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("bytes"), g("direction"))
		case "volume_event":
			add(&fromCSV, k, g("name"), g("at"), g("kind"), g("size_gb"))
		case "one_off":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("amount"), g("currency"), g("charge"), g("note"))
		case "top_up", "balance_reading":
			add(&fromCSV, k, g("platform"), g("at"), g("amount"), g("currency"))
		}
		if g("time_zone") != "Asia/Shanghai" {
			t.Errorf("%s row's time_zone %q", g("record"), g("time_zone"))
		}
	}
	sort.Strings(fromJSON)
	sort.Strings(fromCSV)
	if strings.Join(fromJSON, "\n") != strings.Join(fromCSV, "\n") {
		t.Errorf("the CSV's inputs differ from the JSON's:\n--- CSV\n%s\n--- JSON\n%s", strings.Join(fromCSV, "\n"), strings.Join(fromJSON, "\n"))
	}
	if !strings.Contains(csvText, "镜像 image fee") || !strings.Contains(csvText, ",3.005,") {
		t.Errorf("the CSV lost a one-off's note or its amount as typed")
	}
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestExport_FollowsCorrections: after a one-off is deleted, a top-up
// and a traffic record are corrected, the export shows the ledger as it
// now is, and every figure still recomputes from it; an undone deletion
// brings the one-off back.
func TestExport_FollowsCorrections(t *testing.T) {
	db, uid, asOf := richLedger(t)
	ctx := context.Background()
	act := ledger.Action{UserID: uid, At: asOf}
	recs, err := db.Records(ctx, uid, ledger.RecordFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var support, topUp, usage int64
	for _, r := range recs {
		switch {
		case r.Kind == ledger.RecordCharge && r.Note == "support":
			support = r.Ref
		case r.Kind == ledger.RecordTopUp && r.Amount.String() == "50":
			topUp = r.Ref
		case r.Kind == ledger.RecordTraffic && r.Rental == "yolo" && usage == 0:
			usage = r.Ref
		}
	}
	if support == 0 || topUp == 0 || usage == 0 {
		t.Fatalf("records not found: %+v", recs)
	}
	if _, err := db.DeleteRecord(ctx, act, support); err != nil {
		t.Fatal(err)
	}
	sixty := ledger.MustDecimal("60.4")
	if _, _, err := db.FixRecord(ctx, act, topUp, ledger.RecordFix{Amount: &sixty}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.FixRecord(ctx, act, usage, ledger.RecordFix{Bytes: 77 << 30}); err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	export := func() *recomputer {
		t.Helper()
		book, err := db.Book(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := ledger.WriteExportJSON(&buf, book, asOf); err != nil {
			t.Fatal(err)
		}
		rc := &recomputer{t: t, loc: loc, asOf: asOf.Unix()}
		if err := json.Unmarshal(buf.Bytes(), &rc.doc); err != nil {
			t.Fatal(err)
		}
		rc.check()
		return rc
	}
	rc := export()
	for _, o := range rc.doc.OneOffs {
		if o.Note == "support" {
			t.Errorf("the deleted one-off is still exported: %+v", o)
		}
	}
	var amounts []string
	for _, m := range rc.doc.TopUps {
		amounts = append(amounts, m.Amount)
	}
	if !slices.Contains(amounts, "60.4") || slices.Contains(amounts, "50") {
		t.Errorf("top-ups %v, want the corrected 60.4 in place of 50", amounts)
	}
	found := false
	for _, u := range rc.rental(rc.doc.Rentals[0].Ref).Traffic.Usage {
		found = found || u.Bytes == 77<<30
	}
	if !found {
		t.Errorf("the corrected traffic record (77 GiB) is not exported: %+v", rc.doc.Rentals[0].Traffic)
	}
	if _, err := db.Undo(ctx, act); err != nil { // the traffic fix
		t.Fatal(err)
	}
	if _, err := db.Undo(ctx, act); err != nil { // the top-up fix
		t.Fatal(err)
	}
	if _, err := db.Undo(ctx, act); err != nil { // the deletion
		t.Fatal(err)
	}
	rc = export()
	notes := 0
	for _, o := range rc.doc.OneOffs {
		if o.Note == "support" {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("after /undo the deleted one-off is exported %d times, want once", notes)
	}
}
