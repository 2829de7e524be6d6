package ledger

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"sort"
	"time"
)

// Meters turn a line's history into its cumulative charge function C(t):
// the exact amount accrued strictly before the instant t. Instants are
// whole Unix seconds (sub-second parts are dropped), so a window [a, b)
// holds everything that accrued at a ≤ x < b and its spend is
// Round(C(b)) − Round(C(a)). Each meter is built once in O(events) and
// answers C(t) in O(log events) from prefix sums, so one statement, a
// window or thirty days of a chart cost the same few lookups per line.

const forever = math.MaxInt64

func unix(t time.Time) int64 { return t.Unix() }

// ceilTo rounds x ≥ 0 up to a multiple of s > 0.
func ceilTo(x, s int64) int64 {
	if x >= forever-s {
		return forever
	}
	return (x + s - 1) / s * s
}

// billRun is a stretch over which a rental's compute is metered as one
// unit: a running segment (start or resume to stop or release) for the
// per-second family, or, for always-on, the wall-clock time between two
// price changes (a new price starts a new package period).
type billRun struct {
	s, e      int64 // [s, e); e is forever while open
	min, step int64 // seconds; step ≥ 1
	p0, p1    int   // pieces[p0:p1]: the rates in force over the run
}

// billPiece says that from at on, the run is billed at rates[rate].
type billPiece struct {
	at   int64
	rate int
}

// span is a half-open interval of Unix seconds with a rate index.
type span struct {
	from, to int64
	rate     int
}

// rentalMeter meters one rental's compute, idle time and traffic.
type rentalMeter struct {
	r       *Rental
	rates   []rate
	start   int64
	end     int64 // release, or forever
	runs    []billRun
	pieces  []billPiece
	closed  []int64 // closed[i*k+j]: seconds billed at rate j by runs[:i]
	billed  []int64 // billed[i]: seconds billed by runs[:i]
	live    []span  // running intervals (rate unused)
	liveSum []int64 // liveSum[i]: running seconds in live[:i]
	idle    []span  // idle ∩ billed time, with the rate in force
	idleSum []int64 // idleSum[i*k+j]: idle seconds at rate j in idle[:i]
	traffic *trafficMeter
}

func (m *rentalMeter) k() int { return len(m.rates) }

func (m *rentalMeter) rateIndex(p Price) int {
	for i, r := range m.rates {
		if r.price.Unit == p.Unit && r.price.Amount.norm() == p.Amount.norm() {
			return i
		}
	}
	m.rates = append(m.rates, newRate(p))
	return len(m.rates) - 1
}

// effectiveStep is the rental's billing increment in seconds: its own
// Step when set, else the mode's (per-minute 60 s, per-hour 3600 s).
func effectiveStep(r *Rental) int64 {
	if s := int64(r.Step / time.Second); s > 0 {
		return s
	}
	switch r.Mode {
	case PerMinute:
		return 60
	case PerHour:
		return 3600
	}
	return 1
}

func newRentalMeter(r *Rental, loc *time.Location) *rentalMeter {
	m := &rentalMeter{r: r, end: forever}
	if len(r.Events) == 0 {
		return m
	}
	m.start = unix(r.Events[0].At)
	n := len(r.Events)/2 + 1
	m.runs = make([]billRun, 0, n)
	m.pieces = make([]billPiece, 0, n)
	m.live = make([]span, 0, n)
	cur := m.rateIndex(r.Price)
	alwaysOn := r.Mode == AlwaysOn
	step, minSecs := effectiveStep(r), int64(r.Min/time.Second)
	running := false
	liveOpen := false
	openRun := func(at int64) {
		st, mn := step, minSecs
		if alwaysOn {
			mn, st = 0, 1
			if u := m.rates[cur].price.Unit; u.IsPackage() {
				st = u.Seconds()
			}
		}
		m.runs = append(m.runs, billRun{s: at, e: forever, min: mn, step: st, p0: len(m.pieces)})
		m.pieces = append(m.pieces, billPiece{at: at, rate: cur})
		running = true
	}
	closeRun := func(at int64) {
		last := &m.runs[len(m.runs)-1]
		last.e, last.p1 = at, len(m.pieces)
		running = false
	}
events:
	for _, ev := range r.Events {
		at := unix(ev.At)
		switch ev.Kind {
		case EventStart, EventResume:
			if !liveOpen {
				m.live = append(m.live, span{from: at, to: forever})
				liveOpen = true
			}
			if !running && (!alwaysOn || ev.Kind == EventStart) {
				openRun(at)
			}
		case EventPrice:
			cur = m.rateIndex(ev.Price)
			if !running {
				continue
			}
			last := &m.runs[len(m.runs)-1]
			if alwaysOn {
				if last.s == at {
					m.runs = m.runs[:len(m.runs)-1]
					m.pieces = m.pieces[:last.p0]
				} else {
					closeRun(at)
				}
				openRun(at)
				continue
			}
			if p := &m.pieces[len(m.pieces)-1]; p.at == at {
				p.rate = cur
			} else {
				m.pieces = append(m.pieces, billPiece{at: at, rate: cur})
			}
		case EventStop, EventRelease:
			if liveOpen {
				m.live[len(m.live)-1].to = at
				liveOpen = false
			}
			if running && (!alwaysOn || ev.Kind == EventRelease) {
				closeRun(at)
			}
			if ev.Kind == EventRelease {
				m.end = at
				break events
			}
		}
	}
	if running {
		m.runs[len(m.runs)-1].p1 = len(m.pieces)
	}
	m.buildPrefix()
	m.buildIdle()
	if len(r.TrafficUsage) > 0 {
		m.traffic = newTrafficMeter(r, loc)
	}
	return m
}

func (m *rentalMeter) buildPrefix() {
	k := m.k()
	m.closed = make([]int64, (len(m.runs)+1)*k)
	m.billed = make([]int64, len(m.runs)+1)
	for i := range m.runs {
		row, next := m.closed[i*k:(i+1)*k], m.closed[(i+1)*k:(i+2)*k]
		for j, v := range row { // k is tiny: a loop beats copy's call
			next[j] = v
		}
		run := &m.runs[i]
		b := int64(0)
		if run.e != forever {
			b = m.runSecs(run, run.e-run.s, next)
		}
		m.billed[i+1] = m.billed[i] + b
	}
	m.liveSum = make([]int64, len(m.live)+1)
	for i, s := range m.live {
		d := int64(0)
		if s.to != forever {
			d = s.to - s.from
		}
		m.liveSum[i+1] = m.liveSum[i] + d
	}
}

// runSecs adds to out the seconds run bills at each rate when it has run
// for y seconds, and returns their sum. Steps are counted from the run's
// start and accrue when they begin (so y seconds bill ⌈y/step⌉ steps); the
// minimum accrues at the start at the rate then in force; a step beyond
// the minimum is billed at the rate in force when it begins. Every billed
// second thus gets its rate once and for all, which keeps C(t)
// non-decreasing across price changes.
func (m *rentalMeter) runSecs(run *billRun, y int64, out []int64) int64 {
	if y <= 0 {
		return 0
	}
	st := run.step
	ns := ceilTo(y, st)
	b := max(run.min, ns)
	if run.min > 0 {
		out[m.pieces[run.p0].rate] += run.min
	}
	p1 := run.p1
	if run.e == forever {
		p1 = len(m.pieces)
	}
	for i := run.p0; i < p1; i++ {
		lo := ceilTo(m.pieces[i].at-run.s, st)
		hi := int64(forever)
		if i+1 < p1 {
			hi = ceilTo(m.pieces[i+1].at-run.s, st)
		}
		lo, hi = max(lo, run.min), min(hi, ns)
		if hi > lo {
			out[m.pieces[i].rate] += hi - lo
		}
		if hi >= ns {
			break
		}
	}
	return b
}

// computeAt fills secs (length k, zeroed by the caller) with the seconds
// billed at each rate before t and returns the total billed seconds.
func (m *rentalMeter) computeAt(t int64, secs []int64) int64 {
	j := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].s >= t })
	if j == 0 {
		return 0
	}
	k := m.k()
	copy(secs, m.closed[(j-1)*k:j*k])
	run := &m.runs[j-1]
	return m.billed[j-1] + m.runSecs(run, min(t, run.e)-run.s, secs)
}

// runningAt returns the seconds the rental was running before t.
func (m *rentalMeter) runningAt(t int64) int64 {
	j := sort.Search(len(m.live), func(i int) bool { return m.live[i].from >= t })
	if j == 0 {
		return 0
	}
	s := m.live[j-1]
	return m.liveSum[j-1] + min(t, s.to) - s.from
}

// billedSpans returns the billed time of the rental as spans with the
// rate in force: running segments for the per-second family, start to
// release for always-on.
func (m *rentalMeter) billedSpans() []span {
	out := make([]span, 0, len(m.pieces))
	for ri := range m.runs {
		run := &m.runs[ri]
		p1 := run.p1
		if run.e == forever {
			p1 = len(m.pieces)
		}
		for i := run.p0; i < p1; i++ {
			to := run.e
			if i+1 < p1 {
				to = m.pieces[i+1].at
			}
			if to > m.pieces[i].at {
				out = append(out, span{from: m.pieces[i].at, to: to, rate: m.pieces[i].rate})
			}
		}
	}
	return out
}

// buildIdle intersects the agent's idle intervals with billed time.
func (m *rentalMeter) buildIdle() {
	if len(m.r.Idle) == 0 {
		return
	}
	idle := make([]span, 0, len(m.r.Idle))
	for _, iv := range m.r.Idle {
		to := int64(forever)
		if !iv.To.IsZero() {
			to = unix(iv.To)
		}
		if from := unix(iv.From); to > from {
			idle = append(idle, span{from: from, to: to})
		}
	}
	if !sort.SliceIsSorted(idle, func(i, j int) bool { return idle[i].from < idle[j].from }) {
		sort.Slice(idle, func(i, j int) bool { return idle[i].from < idle[j].from })
	}
	billed := m.billedSpans()
	m.idle = make([]span, 0, len(idle))
	for i, j := 0, 0; i < len(idle) && j < len(billed); {
		from, to := max(idle[i].from, billed[j].from), min(idle[i].to, billed[j].to)
		if to > from && (len(m.idle) == 0 || from >= m.idle[len(m.idle)-1].to) {
			m.idle = append(m.idle, span{from: from, to: to, rate: billed[j].rate})
		}
		if idle[i].to < billed[j].to {
			i++
		} else {
			j++
		}
	}
	k := m.k()
	m.idleSum = make([]int64, (len(m.idle)+1)*k)
	for i, s := range m.idle {
		row, next := m.idleSum[i*k:(i+1)*k], m.idleSum[(i+1)*k:(i+2)*k]
		for j, v := range row {
			next[j] = v
		}
		if s.to != forever {
			m.idleSum[(i+1)*k+s.rate] += s.to - s.from
		}
	}
}

// idleAt fills secs (length k, zeroed) with the idle billed seconds before
// t per rate and returns their sum. An idle interval still open counts up
// to t.
func (m *rentalMeter) idleAt(t int64, secs []int64) int64 {
	j := sort.Search(len(m.idle), func(i int) bool { return m.idle[i].from >= t })
	if j == 0 {
		return 0
	}
	k := m.k()
	copy(secs, m.idleSum[(j-1)*k:j*k])
	s := m.idle[j-1]
	secs[s.rate] += min(t, s.to) - s.from
	var sum int64
	for _, v := range secs {
		sum += v
	}
	return sum
}

// rateAt returns the price in force at t (events at or before t).
func (r *Rental) rateAt(t time.Time) Price {
	p := r.Price
	for _, ev := range r.Events {
		if ev.At.After(t) {
			break
		}
		if ev.Kind == EventPrice {
			p = ev.Price
		}
	}
	return p
}

// stateAt returns the rental's state after its events at or before t.
func (r *Rental) stateAt(t time.Time) State {
	st := Running
	for _, e := range r.Events {
		if e.At.After(t) {
			break
		}
		switch e.Kind {
		case EventStart, EventResume:
			st = Running
		case EventStop:
			st = Stopped
		case EventRelease:
			st = Released
		}
	}
	return st
}

// trafficMeter meters a rental's traffic in the charged direction: per
// calendar month of the user's zone, the GiB above the free allowance,
// each at the price in force when it was used. Usage is grouped in blocks
// (a month, cut again at each price change) so that big-number work is
// done once per block, not per usage.
type trafficMeter struct {
	at         []int64 // usage instants, sorted
	cum        []int64 // bytes in the same month up to and including usage i
	block      []int   // index into blocks of usage i
	blocks     []trafficBlock
	scale      *big.Int // 10^scale(free)
	freeScaled *big.Int // free × 2^30 × scale
	denom      *big.Int // scale × 10^MaxDecimalScale × 2^30
	all        []int64  // instants of all usage in any direction, sorted (unpriced lines)
}

// trafficBlock is a run of usage in one month at one price: startEx is
// the month's excess (bytes × scale above the allowance) before it, price
// its price × 10^MaxDecimalScale, and pre the charge of all earlier
// blocks over denom.
type trafficBlock struct {
	startEx *big.Int
	price   *big.Int
	pre     *big.Int
}

func chargedDirection(t TrafficTerms) Direction {
	if t.Direction == "" {
		return Out
	}
	return t.Direction
}

func newTrafficMeter(r *Rental, loc *time.Location) *trafficMeter {
	tm := &trafficMeter{}
	dir := chargedDirection(r.Traffic)
	type use struct {
		at    int64
		bytes int64
	}
	uses := make([]use, 0, len(r.TrafficUsage))
	tm.all = make([]int64, 0, len(r.TrafficUsage))
	for _, u := range r.TrafficUsage {
		tm.all = append(tm.all, unix(u.At))
		ud := u.Direction
		if ud == "" {
			ud = Out
		}
		if dir == Both || ud == dir {
			uses = append(uses, use{unix(u.At), max(u.Bytes, 0)})
		}
	}
	slices.Sort(tm.all)
	slices.SortStableFunc(uses, func(a, b use) int { return cmp.Compare(a.at, b.at) })
	tm.freeScaled = tm.freeBytesScaled(r.Traffic.FreeGB)
	tm.scale = big.NewInt(pow10[r.Traffic.FreeGB.scale])
	tm.denom = new(big.Int).Mul(tm.scale, big.NewInt(pow10[MaxDecimalScale]))
	tm.denom.Lsh(tm.denom, 30)
	tm.at = make([]int64, 0, len(uses))
	tm.cum = make([]int64, 0, len(uses))
	tm.block = make([]int, 0, len(uses))
	var (
		monthEnd int64 = math.MinInt64
		cum      int64 // bytes so far in the month
		k        int   // the price changes in force: r.TrafficPrices[:k]
		kBlock   = -1  // k of the current block
	)
	for _, u := range uses {
		newMonth := u.at >= monthEnd
		for k < len(r.TrafficPrices) && unix(r.TrafficPrices[k].At) <= u.at {
			k++
		}
		if newMonth || k != kBlock {
			pre := new(big.Int)
			if n := len(tm.blocks); n > 0 {
				last := tm.blocks[n-1]
				x := tm.excess(cum)
				x.Sub(x, last.startEx)
				x.Mul(x, last.price)
				pre.Add(last.pre, x)
			}
			if newMonth {
				_, e := MonthRange(time.Unix(u.at, 0), loc)
				monthEnd, cum = unix(e), 0
			}
			price := r.Traffic.PricePerGB
			if k > 0 {
				price = r.TrafficPrices[k-1].PricePerGB
			}
			tm.blocks = append(tm.blocks, trafficBlock{startEx: tm.excess(cum), price: volPrice(price), pre: pre})
			kBlock = k
		}
		if cum > math.MaxInt64-u.bytes {
			cum = math.MaxInt64
		} else {
			cum += u.bytes
		}
		tm.at = append(tm.at, u.at)
		tm.cum = append(tm.cum, cum)
		tm.block = append(tm.block, len(tm.blocks)-1)
	}
	return tm
}

// excess returns the month's excess after bytes: bytes × scale above the
// allowance, never negative.
func (tm *trafficMeter) excess(bytes int64) *big.Int {
	return excessOf(bytes, tm.scale, tm.freeScaled)
}

// freeBytesScaled returns free GiB × 2^30 × 10^scale(free): an integer.
func (tm *trafficMeter) freeBytesScaled(free Decimal) *big.Int {
	f := big.NewInt(max(free.coef, 0))
	return f.Lsh(f, 30)
}

func excessOf(bytes int64, scale, freeScaled *big.Int) *big.Int {
	x := new(big.Int).Mul(big.NewInt(bytes), scale)
	x.Sub(x, freeScaled)
	if x.Sign() < 0 {
		x.SetInt64(0)
	}
	return x
}

// chargeAt returns the exact traffic charge accrued before t. Usage
// accrues at its At.
func (tm *trafficMeter) chargeAt(t int64) *big.Rat {
	j := sort.Search(len(tm.at), func(i int) bool { return tm.at[i] >= t })
	if j == 0 {
		return new(big.Rat)
	}
	b := tm.blocks[tm.block[j-1]]
	n := tm.excess(tm.cum[j-1])
	n.Sub(n, b.startEx)
	n.Mul(n, b.price)
	n.Add(n, b.pre)
	return new(big.Rat).SetFrac(n, tm.denom)
}

// usedIn reports whether any usage (any direction) was recorded in [a, b).
func (tm *trafficMeter) usedIn(a, b int64) bool {
	j := sort.Search(len(tm.all), func(i int) bool { return tm.all[i] >= a })
	return j < len(tm.all) && tm.all[j] < b
}

// volumeMeter meters one volume: (size − free)⁺ × price × time, from
// creation to deletion, a new segment at each resize, at each change of
// its price terms and, for a volume with a stopped price, at each stop,
// resume and release of its rental.
type volumeMeter struct {
	v      *Volume
	start  int64
	end    int64 // deletion, or forever
	segs   []volSeg
	prefix []*big.Int // prefix[i]: Σ billable × seconds × rate over segs[:i]
	denom  *big.Int   // 10^9 (size scale) × 10^MaxDecimalScale × storageUnitLCM
}

// volSeg is a stretch of a volume's life at one size and one rate;
// billable is the size above the free quota in units of 10^-9 GB, and
// rate the price in force (running or stopped) over denom per 10^-9 GB
// and second.
type volSeg struct {
	from, to int64
	billable int64
	rate     *big.Int
}

// storageUnitLCM is a multiple of every storage unit's seconds (an hour
// and a day divide the 30-day month), so prices in different units share
// one denominator.
const storageUnitLCM = 30 * 86400

// volPrice returns d × 10^MaxDecimalScale.
func volPrice(d Decimal) *big.Int {
	return new(big.Int).Mul(big.NewInt(d.coef), big.NewInt(pow10[MaxDecimalScale-int(d.scale)]))
}

// volRates returns p's running and stopped rates over the meter's
// denominator.
func volRates(p VolumePrice) [2]*big.Int {
	k := big.NewInt(storageUnitLCM / max(p.PriceUnit.Seconds(), 1))
	run := new(big.Int).Mul(volPrice(p.Price), k)
	stopped := run
	if p.HasStoppedPrice {
		stopped = new(big.Int).Mul(volPrice(p.StoppedPrice), k)
	}
	return [2]*big.Int{run, stopped}
}

// newVolumeMeter meters v; r is its attached rental, or nil. The rental
// matters only when some of v's price terms have a stopped price.
func newVolumeMeter(v *Volume, r *Rental) *volumeMeter {
	vm := &volumeMeter{v: v, end: forever}
	vm.denom = new(big.Int).Mul(big.NewInt(pow10[MaxDecimalScale]), big.NewInt(pow10[MaxDecimalScale]))
	vm.denom.Mul(vm.denom, big.NewInt(storageUnitLCM))
	vm.prefix = []*big.Int{new(big.Int)}
	if len(v.Events) == 0 {
		return vm
	}
	vm.start = unix(v.Events[0].At)
	free := scaled9(v.FreeGB)
	terms := [][2]*big.Int{volRates(v.firstPrice())}
	hasStopped := v.HasStoppedPrice
	for _, p := range v.Prices {
		terms = append(terms, volRates(p))
		hasStopped = hasStopped || p.HasStoppedPrice
	}
	// changes merges the volume's events, its price changes and its
	// rental's state changes in time order; at the same second a volume
	// event comes first, then a price change, then a rental change.
	type change struct {
		at      int64
		order   int   // 0 volume event, 1 price change, 2 rental change
		size    int64 // -1: no size change
		del     bool
		stopped int // -1: no state change
		term    int // -1: no price change, else an index into terms
	}
	var cs []change
	for _, ev := range v.Events {
		c := change{at: unix(ev.At), size: -1, stopped: -1, term: -1, del: ev.Kind == VolumeDelete}
		if !c.del {
			c.size = max(scaled9(ev.SizeGB)-free, 0)
		}
		cs = append(cs, c)
	}
	for i, p := range v.Prices {
		cs = append(cs, change{at: unix(p.At), order: 1, size: -1, stopped: -1, term: i + 1})
	}
	if hasStopped && r != nil {
		for _, ev := range r.Events {
			c := change{at: unix(ev.At), order: 2, size: -1, stopped: -1, term: -1}
			switch ev.Kind {
			case EventStart, EventResume:
				c.stopped = 0
			case EventStop, EventRelease:
				c.stopped = 1
			default:
				continue
			}
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].at != cs[j].at {
			return cs[i].at < cs[j].at
		}
		return cs[i].order < cs[j].order
	})
	var billable int64
	stopped, term, created := 0, 0, false
	for _, c := range cs {
		if c.stopped >= 0 {
			if c.stopped == stopped {
				continue
			}
			stopped = c.stopped
		}
		if c.term >= 0 {
			term = c.term
		}
		if c.size >= 0 {
			billable, created = c.size, true
		}
		if !created {
			continue // the rental's changes before the volume exists
		}
		if n := len(vm.segs); n > 0 {
			vm.segs[n-1].to = c.at
		}
		if c.del {
			vm.end = c.at
			break
		}
		vm.segs = append(vm.segs, volSeg{from: c.at, to: forever, billable: billable, rate: terms[term][stopped]})
	}
	for i, s := range vm.segs {
		p := new(big.Int).Set(vm.prefix[i])
		if s.to != forever {
			x := new(big.Int).Mul(s.rate, big.NewInt(s.billable))
			p.Add(p, x.Mul(x, big.NewInt(s.to-s.from)))
		}
		vm.prefix = append(vm.prefix, p)
	}
	return vm
}

// scaled9 returns d × 10^9 as an integer (sizes are below 10^7 GB).
func scaled9(d Decimal) int64 { return d.coef * pow10[MaxDecimalScale-int(d.scale)] }

// chargeAt returns the exact storage charge accrued before t.
func (vm *volumeMeter) chargeAt(t int64) *big.Rat {
	j := sort.Search(len(vm.segs), func(i int) bool { return vm.segs[i].from >= t })
	if j == 0 {
		return new(big.Rat)
	}
	s := vm.segs[j-1]
	n := new(big.Int).Mul(s.rate, big.NewInt(s.billable))
	n.Mul(n, big.NewInt(min(t, s.to)-s.from))
	n.Add(n, vm.prefix[j-1])
	return new(big.Rat).SetFrac(n, vm.denom)
}

// ratePerSecond returns the storage rate in force at t, 0 outside the
// volume's life.
func (vm *volumeMeter) ratePerSecond(t int64) *big.Rat {
	for _, s := range vm.segs {
		if s.from <= t && t < s.to {
			n := new(big.Int).Mul(big.NewInt(s.billable), s.rate)
			return new(big.Rat).SetFrac(n, vm.denom)
		}
	}
	return new(big.Rat)
}
