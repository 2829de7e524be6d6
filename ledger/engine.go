package ledger

import (
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"
)

// The cost engine (DESIGN.md section 4) is pure: it reads a Book and an
// instant and returns charges; it never reads the clock or a database.
//
// Every billed line (a rental's compute, a volume, a rental's traffic, a
// one-off charge) has an exact cumulative charge C(t): what accrued
// strictly before t (instants in whole seconds). A line's charge as of T
// is Round(C(T)), rounded once, half away from zero, to its currency's
// minor unit; its spend in a window [a, b) is Round(C(b)) − Round(C(a)).
// So windows telescope exactly (thirty days' spend add up to the month's)
// and totals are sums of rounded lines.
//
// When charges accrue:
//   - per-second: continuously, one second at a time.
//   - step=S (per-minute: 1 min, per-hour: 1 h): each started step of a
//     running segment accrues in full when it begins; steps count from
//     the segment's start.
//   - min=M: a running segment owes max(M, its stepped time) from its
//     first second. A price change inside a segment does not start a new
//     minimum or realign steps (the platform sees one run): the minimum is
//     priced at the rate in force when the segment began, each later step
//     at the rate in force when the step began. Every billed second gets
//     its rate once, so C never decreases.
//   - A segment that starts and stops within the same second bills nothing.
//   - always-on, per-hour or finer price: prorated by the second over wall
//     clock time from start to release, stopped or not (Min and Step do
//     not apply).
//   - always-on, per-day, per-week or per-month price: a prepaid package;
//     each started period (1, 7 or 30 days from the start) accrues in full
//     when it begins. A price change ends the package and starts a new
//     period at the new price.
//   - floor=F: the rental's compute as of t (after its start) is
//     max(F, what the rules above give).
//   - storage: (size − free)⁺ × price × seconds, from creation to deletion
//     whatever the instance's state; a resize starts a new segment.
//   - traffic: GiB (2^30 bytes) in the charged direction above the free
//     allowance of each calendar month of the user's zone, × price; usage
//     accrues at its At.
//   - one-off charges accrue in full at their At, in their own currency.
//
// Lines without a price are UNPRICED: reported with a false Priced flag,
// left out of every total and counted in Totals.Unpriced.

// Category is a kind of charge.
type Category string

// Charge categories.
const (
	CategoryCompute Category = "compute"
	CategoryStorage Category = "storage"
	CategoryTraffic Category = "traffic"
	CategoryOther   Category = "other"
)

// Totals sums the priced lines of one currency by category. Unpriced
// counts the lines left out because they have no price.
type Totals struct {
	Currency                                Currency
	Compute, Storage, Traffic, Other, Total Money
	Unpriced                                int
}

func newTotals(c Currency) *Totals {
	z := Money{Currency: c}
	return &Totals{Currency: c, Compute: z, Storage: z, Traffic: z, Other: z, Total: z}
}

func (t *Totals) add(cat Category, m Money) {
	switch cat {
	case CategoryCompute:
		t.Compute = t.Compute.Add(m)
	case CategoryStorage:
		t.Storage = t.Storage.Add(m)
	case CategoryTraffic:
		t.Traffic = t.Traffic.Add(m)
	case CategoryOther:
		t.Other = t.Other.Add(m)
	}
	t.Total = t.Total.Add(m)
}

// Of returns the amount of one category.
func (t *Totals) Of(cat Category) Money {
	switch cat {
	case CategoryCompute:
		return t.Compute
	case CategoryStorage:
		return t.Storage
	case CategoryTraffic:
		return t.Traffic
	case CategoryOther:
		return t.Other
	}
	return t.Total
}

// RentalCost is what one rental accrued in a statement's window. Money
// fields are in the rental's currency; a part whose Priced flag is false
// is UNPRICED and its Money is zero and meaningless.
type RentalCost struct {
	Rental *Rental
	State  State // after the events at or before the statement's To
	Rate   Price // the compute price in force at To

	RunningSeconds int64 // running (start/resume to stop/release)
	BilledSeconds  int64 // seconds charged for: after minimums, steps, packages
	IdleSeconds    int64 // billed seconds the agent saw the host idle

	ComputePriced bool
	Compute       Money
	StoragePriced bool  // false if an attached volume is unpriced
	Storage       Money // the attached volumes of the rental's currency
	TrafficPriced bool  // false if traffic was used but has no price
	Traffic       Money
	Other         Money // one-off charges attached to the rental, its currency
	Total         Money // the sum of the priced parts above
	IdleCost      Money // compute accrued while idle (included in Compute)

	// Ref is the rental's address (RentalRef) when another rental of the
	// book has its name, for listings to tell them apart; "" otherwise.
	Ref string
}

// Label is how a listing names the rental: its address when its name is
// shared, else its name.
func (rc *RentalCost) Label() string {
	if rc.Ref != "" {
		return rc.Ref
	}
	return rc.Rental.Name
}

// Priced reports whether every part of the rental's cost has a price.
func (rc *RentalCost) Priced() bool {
	return rc.ComputePriced && rc.StoragePriced && rc.TrafficPriced
}

// VolumeCost is what one volume accrued in a statement's window.
type VolumeCost struct {
	Volume  *Volume
	SizeGB  Decimal // the size at the statement's To
	Deleted bool    // deleted at or before To
	Priced  bool    // false: UNPRICED, Charge is meaningless
	Charge  Money
}

// ChargeCost is a one-off charge that falls in a statement's window.
type ChargeCost struct {
	Charge   *Charge
	Platform string // the charge's platform, or its rental's
	Amount   Money
}

// Statement is what a user's ledger accrued in [From, To). From is the
// zero time for a statement from the beginning. Rentals are sorted by
// start time then name, volumes by creation then name, others by time.
type Statement struct {
	From, To   time.Time
	Rentals    []RentalCost
	Volumes    []VolumeCost
	Others     []ChargeCost
	Totals     map[Currency]*Totals
	ByPlatform map[string]map[Currency]*Totals
	IdleCost   map[Currency]Money

	// Unpriced names the lines counted in Totals.Unpriced, in the order
	// the statement met them (the book's rentals, then its volumes), so a
	// reply can say which lines a total leaves out and how to price them.
	Unpriced []UnpricedLine
}

// UnpricedLine is one line a statement could not charge for want of a
// price: a rental's compute or traffic (Rental set), or a volume's
// storage (Volume set; Rental too when the volume is attached to one in
// the statement).
type UnpricedLine struct {
	Category Category
	Rental   *Rental
	Volume   *Volume

	// Ref is the rental's address (RentalRef) when another rental of the
	// book has its name, so a command that prices the line reaches it
	// and not the newer rental of that name; "" otherwise.
	Ref string
}

// Total returns the totals of currency c (zero totals if there are none).
func (s *Statement) Total(c Currency) *Totals {
	if t, ok := s.Totals[c]; ok {
		return t
	}
	return newTotals(c)
}

// Currencies returns the statement's currencies in alphabetical order.
func (s *Statement) Currencies() []Currency {
	out := make([]Currency, 0, len(s.Totals))
	for c := range s.Totals {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// StatementAsOf returns everything accrued from the beginning up to (not
// including) the instant asOf: the figures of /status and the export.
func StatementAsOf(b *Book, asOf time.Time) *Statement {
	return newEngine(b).statement(math.MinInt64, unix(asOf), time.Time{}, asOf)
}

// Spend returns what accrued in [from, to): each line's rounded charge at
// to minus its rounded charge at from. Lines with nothing in the window
// are left out without being metered.
func Spend(b *Book, from, to time.Time) *Statement {
	return newEngine(b).statement(unix(from), unix(to), from, to)
}

// engine holds the meters of one book for one call. Not safe for
// concurrent use.
type engine struct {
	b       *Book
	loc     *time.Location
	rentals map[*Rental]*rentalMeter
	volumes map[*Volume]*volumeMeter
	byID    map[int64]*Rental
	scratch []int64
	refs    map[*Rental]string // the addresses of rentals whose name is shared
}

func newEngine(b *Book) *engine {
	e := &engine{
		b:       b,
		loc:     b.User.Location(),
		rentals: make(map[*Rental]*rentalMeter, len(b.Rentals)),
		volumes: make(map[*Volume]*volumeMeter, len(b.Volumes)),
		byID:    make(map[int64]*Rental, len(b.Rentals)),
	}
	for _, r := range b.Rentals {
		if r.ID != 0 {
			e.byID[r.ID] = r
		}
	}
	e.refs = RentalRefs(b.Rentals, e.loc)
	return e
}

func (e *engine) rentalMeter(r *Rental) *rentalMeter {
	m, ok := e.rentals[r]
	if !ok {
		m = newRentalMeter(r, e.loc)
		e.rentals[r] = m
	}
	return m
}

func (e *engine) volumeMeter(v *Volume) *volumeMeter {
	m, ok := e.volumes[v]
	if !ok {
		m = newVolumeMeter(v, e.byID[v.RentalID])
		e.volumes[v] = m
	}
	return m
}

func (e *engine) buf(k int) []int64 {
	if cap(e.scratch) < k {
		e.scratch = make([]int64, k)
	}
	s := e.scratch[:k]
	clear(s)
	return s
}

// rentalPoint is a rental's cumulative figures at an instant.
type rentalPoint struct {
	compute                   Money
	billed, running, idleSecs int64
	idle                      Money
	traffic                   Money
}

func (e *engine) rentalAt(m *rentalMeter, t int64) rentalPoint {
	r := m.r
	z := Money{Currency: r.Currency}
	p := rentalPoint{compute: z, idle: z, traffic: z}
	if t == math.MinInt64 || len(r.Events) == 0 || t <= m.start {
		return p
	}
	secs := e.buf(m.k())
	p.billed = m.computeAt(t, secs)
	if r.Priced {
		p.compute = rateMoney(m.rates, secs, r.Floor, true, r.Currency)
	}
	p.running = m.runningAt(t)
	if len(m.idle) > 0 {
		secs = e.buf(m.k())
		p.idleSecs = m.idleAt(t, secs)
		if r.Priced {
			p.idle = rateMoney(m.rates, secs, Decimal{}, false, r.Currency)
		}
	}
	if m.traffic != nil && r.Traffic.Priced {
		p.traffic = Round(m.traffic.chargeAt(t), r.Currency)
	}
	return p
}

func sub(a, b Money) Money { return Money{Currency: a.Currency, Minor: a.Minor - b.Minor} }

func (e *engine) volumeAt(m *volumeMeter, t int64) Money {
	if t == math.MinInt64 || len(m.segs) == 0 || t <= m.start {
		return Money{Currency: m.v.Currency}
	}
	return Round(m.chargeAt(t), m.v.Currency)
}

// chargePlatform returns a one-off charge's platform: its own, else its
// rental's.
func (e *engine) chargePlatform(c *Charge) string {
	if c.Platform != "" {
		return c.Platform
	}
	if r, ok := e.byID[c.RentalID]; ok {
		return r.Platform
	}
	return ""
}

// rentalActive reports whether r can have accrued anything in [a, b):
// its life overlaps the window, or it has traffic or a charge there.
func (e *engine) rentalActive(r *Rental, a, b int64) bool {
	if len(r.Events) == 0 {
		return false
	}
	start := unix(r.Events[0].At)
	if start >= b {
		return false
	}
	end := int64(forever)
	if at, ok := r.ReleasedAt(); ok {
		end = unix(at)
	}
	if end > a {
		return true
	}
	for _, u := range r.TrafficUsage {
		if at := unix(u.At); at >= a && at < b {
			return true
		}
	}
	return false
}

func volumeActive(v *Volume, a, b int64) bool {
	if len(v.Events) == 0 || unix(v.Events[0].At) >= b {
		return false
	}
	at, deleted := v.Deleted()
	return !deleted || unix(at) > a
}

type totalsSet struct {
	byCur  map[Currency]*Totals
	byPlat map[string]map[Currency]*Totals
}

func (ts *totalsSet) get(plat string, c Currency) (*Totals, *Totals) {
	t, ok := ts.byCur[c]
	if !ok {
		t = newTotals(c)
		ts.byCur[c] = t
	}
	pm, ok := ts.byPlat[plat]
	if !ok {
		pm = make(map[Currency]*Totals)
		ts.byPlat[plat] = pm
	}
	pt, ok := pm[c]
	if !ok {
		pt = newTotals(c)
		pm[c] = pt
	}
	return t, pt
}

func (ts *totalsSet) add(plat string, cat Category, m Money) {
	t, pt := ts.get(plat, m.Currency)
	t.add(cat, m)
	pt.add(cat, m)
}

func (ts *totalsSet) unpriced(plat string, c Currency) {
	t, pt := ts.get(plat, c)
	t.Unpriced++
	pt.Unpriced++
}

func (e *engine) statement(a, b int64, from, to time.Time) *Statement {
	st := &Statement{
		From:       from,
		To:         to,
		Totals:     make(map[Currency]*Totals),
		ByPlatform: make(map[string]map[Currency]*Totals),
		IdleCost:   make(map[Currency]Money),
	}
	ts := &totalsSet{byCur: st.Totals, byPlat: st.ByPlatform}
	st.Rentals = make([]RentalCost, 0, len(e.b.Rentals))
	idx := make(map[*Rental]int)
	for _, r := range e.b.Rentals {
		if !e.rentalActive(r, a, b) {
			continue
		}
		m := e.rentalMeter(r)
		pa, pb := e.rentalAt(m, a), e.rentalAt(m, b)
		z := Money{Currency: r.Currency}
		rc := RentalCost{
			Rental:         r,
			State:          r.stateAt(to),
			Rate:           r.rateAt(to),
			RunningSeconds: pb.running - pa.running,
			BilledSeconds:  pb.billed - pa.billed,
			IdleSeconds:    pb.idleSecs - pa.idleSecs,
			ComputePriced:  r.Priced,
			Compute:        sub(pb.compute, pa.compute),
			StoragePriced:  true,
			Storage:        z,
			TrafficPriced:  true,
			Traffic:        sub(pb.traffic, pa.traffic),
			Other:          z,
			IdleCost:       sub(pb.idle, pa.idle),
		}
		if r.Priced {
			ts.add(r.Platform, CategoryCompute, rc.Compute)
			if rc.IdleCost.Minor != 0 {
				st.IdleCost[r.Currency] = st.IdleCost[r.Currency].Add(rc.IdleCost)
			}
		} else if m.start < b && m.end > a {
			ts.unpriced(r.Platform, r.Currency)
			st.Unpriced = append(st.Unpriced, UnpricedLine{Category: CategoryCompute, Rental: r, Ref: e.refs[r]})
		}
		if m.traffic != nil && !r.Traffic.Priced && m.traffic.usedIn(a, b) {
			rc.TrafficPriced = false
			ts.unpriced(r.Platform, r.Currency)
			st.Unpriced = append(st.Unpriced, UnpricedLine{Category: CategoryTraffic, Rental: r, Ref: e.refs[r]})
		} else if r.Traffic.Priced && m.traffic != nil {
			ts.add(r.Platform, CategoryTraffic, rc.Traffic)
		}
		rc.Ref = e.refs[r]
		idx[r] = len(st.Rentals)
		st.Rentals = append(st.Rentals, rc)
	}
	byID := make(map[int64]int)
	for r, i := range idx {
		if r.ID != 0 {
			byID[r.ID] = i
		}
	}
	attached := func(id int64, name string) *RentalCost {
		if i, ok := byID[id]; ok && id != 0 {
			return &st.Rentals[i]
		}
		if id == 0 && name != "" {
			for i := range st.Rentals {
				if st.Rentals[i].Rental.Name == name {
					return &st.Rentals[i]
				}
			}
		}
		return nil
	}
	for _, v := range e.b.Volumes {
		if !volumeActive(v, a, b) {
			continue
		}
		vc := VolumeCost{Volume: v, SizeGB: v.sizeAt(to), Priced: v.Priced}
		if at, ok := v.Deleted(); ok && !at.After(to) {
			vc.Deleted = true
		}
		rc := attached(v.RentalID, v.RentalName)
		if v.Priced {
			m := e.volumeMeter(v)
			vc.Charge = sub(e.volumeAt(m, b), e.volumeAt(m, a))
			ts.add(v.Platform, CategoryStorage, vc.Charge)
			if rc != nil && rc.Rental.Currency == v.Currency {
				rc.Storage = rc.Storage.Add(vc.Charge)
			}
		} else {
			vc.Charge = Money{Currency: v.Currency}
			ts.unpriced(v.Platform, v.Currency)
			line := UnpricedLine{Category: CategoryStorage, Volume: v}
			if rc != nil {
				rc.StoragePriced = false
				line.Rental = rc.Rental
			}
			st.Unpriced = append(st.Unpriced, line)
		}
		st.Volumes = append(st.Volumes, vc)
	}
	for i := range e.b.Charges {
		c := &e.b.Charges[i]
		if at := unix(c.At); at < a || at >= b {
			continue
		}
		cc := ChargeCost{Charge: c, Platform: e.chargePlatform(c), Amount: MoneyFromDecimal(c.Amount, c.Currency)}
		ts.add(cc.Platform, CategoryOther, cc.Amount)
		if rc := attached(c.RentalID, ""); rc != nil && rc.Rental.Currency == c.Currency {
			rc.Other = rc.Other.Add(cc.Amount)
		}
		st.Others = append(st.Others, cc)
	}
	for i := range st.Rentals {
		rc := &st.Rentals[i]
		total := rc.Storage.Add(rc.Other)
		if rc.ComputePriced {
			total = total.Add(rc.Compute)
		}
		if rc.TrafficPriced {
			total = total.Add(rc.Traffic)
		}
		rc.Total = total
	}
	slices.SortStableFunc(st.Rentals, func(x, y RentalCost) int {
		if c := x.Rental.StartedAt().Compare(y.Rental.StartedAt()); c != 0 {
			return c
		}
		return strings.Compare(x.Rental.Name, y.Rental.Name)
	})
	sort.SliceStable(st.Volumes, func(i, j int) bool {
		vi, vj := st.Volumes[i].Volume, st.Volumes[j].Volume
		if ci, cj := vi.Events[0].At, vj.Events[0].At; !ci.Equal(cj) {
			return ci.Before(cj)
		}
		return vi.Name < vj.Name
	})
	sort.SliceStable(st.Others, func(i, j int) bool {
		ci, cj := st.Others[i].Charge, st.Others[j].Charge
		if !ci.At.Equal(cj.At) {
			return ci.At.Before(cj.At)
		}
		return ci.ID < cj.ID
	})
	return st
}

// sizeAt returns the volume's size after its events at or before t.
func (v *Volume) sizeAt(t time.Time) Decimal {
	var s Decimal
	for _, e := range v.Events {
		if e.At.After(t) {
			break
		}
		if e.Kind != VolumeDelete {
			s = e.SizeGB
		}
	}
	return s
}

// ratePerSecond returns the rental's compute burn at t: the price in force
// per second if it is running (always-on: until released), zero
// otherwise. A prepaid package burns nothing until its period ends (it is
// already paid); the next period shows up as a charge when it begins.
func (r *Rental) ratePerSecond(t time.Time) *big.Rat {
	if !r.Priced || len(r.Events) == 0 || r.StartedAt().After(t) {
		return new(big.Rat)
	}
	st := r.stateAt(t)
	if st == Released || (st == Stopped && r.Mode != AlwaysOn) {
		return new(big.Rat)
	}
	p := r.rateAt(t)
	if r.Mode == AlwaysOn && p.Unit.IsPackage() {
		return new(big.Rat)
	}
	return newRate(p).perSecond()
}
