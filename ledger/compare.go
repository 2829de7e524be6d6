package ledger

import (
	"cmp"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// The user's own price/performance table (/compare, the dashboard's
// compare page): what their rentals delivered, measured by their agents'
// benches and timed by their own labelled jobs, against what they cost.
// Compare is pure, like the engine: it reads what the store returned and
// an instant. Money is never converted: every row is of one currency.
// Bench figures are the agents' claims, bounded at the hub's door; they
// are shown, never acted on.

// CompareInput is what Compare reads: the user's book and, from the
// store (ledger.BenchStore), all their benches, job runs and first works.
type CompareInput struct {
	Book       *Book
	Benches    []BenchRecord       // UserBenches, oldest first
	Runs       []JobRun            // JobRuns(user, ""), oldest first
	FirstWorks map[int64]time.Time // FirstWorks, by rental ID
	Now        time.Time
}

// CompareTable is the user's own table.
type CompareTable struct {
	Cards  []CardRow    // per platform × GPU model × currency
	Setup  []SetupRow   // per platform × currency: start to first work
	Labels []LabelTable // per label, by name
}

// CardRow is what one GPU model delivered on one platform, over the
// user's rentals of it in one currency. Figures are medians per GPU over
// the benches' GPUs (0: not measured); money figures are medians over
// the rentals that have them.
type CardRow struct {
	Platform string
	GPU      string // display name, e.g. "RTX 4090": the benches' most common, else the rentals'
	Key      string // perf.ModelKey of GPU: the grouping
	MIG      bool   // MIG slices: their own row, never compared with whole cards
	Currency Currency

	Rentals int // the user's rentals of this platform and model
	Benched int // of them with a bench

	TensorTFLOPS float64 // median per GPU of perf.TensorTFLOPS
	FP32TFLOPS   float64
	MemGBps      float64
	H2DGBps      float64
	// PCIeGen and PCIeWidth are the link seen most often (0 unknown).
	PCIeGen, PCIeWidth int

	// HourPerGPU is the median price of a GPU-hour over PricedRentals.
	PricedRentals int
	HourPerGPU    Decimal
	// PerTFLOPHour is the median over PerUnitRentals of the rental's
	// price per hour ÷ its bench's tensor TFLOPS (all its GPUs): the
	// price of a tensor-TFLOP-hour. Rentals unpriced or without a tensor
	// figure are left out; 0 rentals: none.
	PerUnitRentals int
	PerTFLOPHour   Decimal
}

// SetupRow is the setup tax of one platform: from a rental's start to its
// first sustained GPU work (FirstWork), median over its rentals.
type SetupRow struct {
	Platform string
	Currency Currency
	Rentals  int           // rentals with a first work
	Time     time.Duration // median
	Priced   int           // of them priced
	Money    Decimal       // median of CostOver(start, first work)
}

// LabelTable is one label's runs, per platform × GPU model.
type LabelTable struct {
	Label string
	// Rows are grouped by currency (in alphabetical order), best first in
	// each: the cheapest median money per run, then the fastest; rows
	// without a priced run after those with.
	Rows   []LabelRow
	Runs   int // succeeded runs, all rows
	Failed int // failed runs, all rows
}

// LabelRow is one label on one platform × GPU model in one currency.
type LabelRow struct {
	Platform string
	GPU      string
	Key      string
	MIG      bool
	Currency Currency
	Runs     int           // succeeded runs: what the medians rest on
	Failed   int           // failed runs, counted apart
	Time     time.Duration // median time per succeeded run
	Priced   int           // succeeded runs with every part priced
	Money    Decimal       // median CostOver per priced run
}

// Label returns the table of label l.
func (t CompareTable) Label(l string) (LabelTable, bool) {
	for _, x := range t.Labels {
		if x.Label == l {
			return x, true
		}
	}
	return LabelTable{}, false
}

// LabelNames returns the labels of the table, in order.
func (t CompareTable) LabelNames() []string {
	out := make([]string, len(t.Labels))
	for i, x := range t.Labels {
		out[i] = x.Label
	}
	return out
}

// Empty reports whether the table has nothing measured: no bench and no
// labelled run.
func (t CompareTable) Empty() bool {
	if len(t.Labels) > 0 {
		return false
	}
	for _, c := range t.Cards {
		if c.Benched > 0 {
			return false
		}
	}
	return true
}

// groupKey is a row's identity.
type groupKey struct {
	platform, key string
	mig           bool
	cur           Currency
}

// rentalModel is how Compare names what a rental ran on: its bench's
// GPU when it has one (what was measured, which may not be what was
// logged), else the GPU it was logged with.
type rentalModel struct {
	display string
	key     string
	mig     bool
}

func cmpModelOf(r *Rental, bench *BenchRecord) rentalModel {
	if bench != nil && len(bench.Bench.GPUs) > 0 {
		g := bench.Bench.GPUs[0]
		name := g.Model
		if name == "" {
			name = perf.DisplayName(g.Name)
		}
		if name != "" {
			m := rentalModel{display: name, key: perf.ModelKey(name)}
			for _, x := range bench.Bench.GPUs {
				m.mig = m.mig || x.MIG
			}
			return m
		}
	}
	return rentalModel{display: r.GPU, key: perf.ModelKey(r.GPU)}
}

// Compare builds the user's table from in. Rows are deterministic: ties
// are broken by platform, GPU and currency.
func Compare(in CompareInput) CompareTable {
	b := in.Book
	if b == nil {
		b = &Book{}
	}
	first := make(map[int64]*BenchRecord)
	for i := range in.Benches {
		rec := &in.Benches[i]
		if old, ok := first[rec.RentalID]; !ok || rec.At.Before(old.At) {
			first[rec.RentalID] = rec
		}
	}
	byID := make(map[int64]*Rental, len(b.Rentals))
	models := make(map[int64]rentalModel, len(b.Rentals))
	for _, r := range b.Rentals {
		if len(r.Events) == 0 {
			continue
		}
		byID[r.ID] = r
		models[r.ID] = cmpModelOf(r, first[r.ID])
	}
	costs := &spanCosts{b: b, by: map[*Rental]*spanMeter{}}
	return CompareTable{
		Cards:  compareCards(b, in, byID, models, first),
		Setup:  compareSetup(b, in, byID, costs),
		Labels: compareLabels(in, byID, models, costs),
	}
}

// spanCosts is CostOver with one meter per rental for all its spans.
type spanCosts struct {
	b  *Book
	by map[*Rental]*spanMeter
}

func (c *spanCosts) over(r *Rental, from, to time.Time) (SpanCost, error) {
	sm, ok := c.by[r]
	if !ok {
		var err error
		if sm, err = newSpanMeter(c.b, r); err != nil {
			return SpanCost{}, err
		}
		c.by[r] = sm
	}
	return sm.cost(from, to)
}

type cardAcc struct {
	row                    CardRow
	names                  map[string]int
	tensor, fp32, mem, h2d []float64
	links                  map[[2]int]int
	hourPerGPU, perUnit    []Decimal
}

func compareCards(b *Book, in CompareInput, byID map[int64]*Rental, models map[int64]rentalModel, first map[int64]*BenchRecord) []CardRow {
	accs := map[groupKey]*cardAcc{}
	var order []groupKey
	for _, r := range b.Rentals {
		m, ok := models[r.ID]
		if !ok || byID[r.ID] != r {
			continue
		}
		k := groupKey{platform: r.Platform, key: m.key, mig: m.mig, cur: r.Currency}
		a, ok := accs[k]
		if !ok {
			a = &cardAcc{row: CardRow{Platform: r.Platform, Key: m.key, MIG: m.mig, Currency: r.Currency},
				names: map[string]int{}, links: map[[2]int]int{}}
			accs[k] = a
			order = append(order, k)
		}
		a.row.Rentals++
		a.names[m.display]++
		hourly, priced := cmpHourly(r, in.Now)
		if priced {
			a.hourPerGPU = append(a.hourPerGPU, cmpRound(new(big.Rat).Quo(hourly, big.NewRat(int64(max(r.GPUCount, 1)), 1)), 6))
		}
		rec := first[r.ID]
		if rec == nil {
			continue
		}
		a.row.Benched++
		for _, g := range rec.Bench.GPUs {
			if t := perf.TensorTFLOPS(perf.Bench{GPUs: []perf.GPU{g}}); t > 0 {
				a.tensor = append(a.tensor, t)
			}
			if g.FP32TFLOPS > 0 {
				a.fp32 = append(a.fp32, g.FP32TFLOPS)
			}
			if g.MemGBps > 0 {
				a.mem = append(a.mem, g.MemGBps)
			}
			if g.H2DGBps > 0 {
				a.h2d = append(a.h2d, g.H2DGBps)
			}
			if g.PCIeGen > 0 && g.PCIeWidth > 0 {
				a.links[[2]int{g.PCIeGen, g.PCIeWidth}]++
			}
		}
		if per := PerTFLOPHour(hourly, r.GPUCount, rec.Bench); priced && per != nil {
			a.perUnit = append(a.perUnit, cmpRound(per, 8))
		}
	}
	out := make([]CardRow, 0, len(order))
	for _, k := range order {
		a := accs[k]
		row := a.row
		row.GPU = cmpMostSeen(a.names)
		row.TensorTFLOPS = cmpMedianF64(a.tensor)
		row.FP32TFLOPS = cmpMedianF64(a.fp32)
		row.MemGBps = cmpMedianF64(a.mem)
		row.H2DGBps = cmpMedianF64(a.h2d)
		var best [2]int
		for l, n := range a.links {
			if n > a.links[best] || n == a.links[best] && (l[0] > best[0] || l[0] == best[0] && l[1] > best[1]) {
				best = l
			}
		}
		row.PCIeGen, row.PCIeWidth = best[0], best[1]
		row.PricedRentals, row.HourPerGPU = len(a.hourPerGPU), cmpMedianDec(a.hourPerGPU)
		row.PerUnitRentals, row.PerTFLOPHour = len(a.perUnit), cmpMedianDec(a.perUnit)
		out = append(out, row)
	}
	// Per currency, the cheapest tensor-TFLOP-hour first; rows without
	// one after, by platform and GPU.
	slices.SortStableFunc(out, func(x, y CardRow) int {
		if c := cmp.Compare(x.Currency, y.Currency); c != 0 {
			return c
		}
		if hx, hy := x.PerUnitRentals > 0, y.PerUnitRentals > 0; hx != hy {
			if hx {
				return -1
			}
			return 1
		} else if hx {
			if c := x.PerTFLOPHour.Cmp(y.PerTFLOPHour); c != 0 {
				return c
			}
		}
		return cmpRowOrder(x.Platform, x.GPU, x.MIG, y.Platform, y.GPU, y.MIG)
	})
	return out
}

func cmpRowOrder(px, gx string, mx bool, py, gy string, my bool) int {
	if c := strings.Compare(px, py); c != 0 {
		return c
	}
	if c := strings.Compare(gx, gy); c != 0 {
		return c
	}
	switch {
	case mx == my:
		return 0
	case mx:
		return 1
	}
	return -1
}

func compareSetup(b *Book, in CompareInput, byID map[int64]*Rental, costs *spanCosts) []SetupRow {
	type acc struct {
		row   SetupRow
		times []time.Duration
		money []Decimal
	}
	accs := map[groupKey]*acc{}
	var order []groupKey
	for _, r := range b.Rentals {
		at, ok := in.FirstWorks[r.ID]
		if !ok || byID[r.ID] != r || !at.After(r.StartedAt()) {
			continue
		}
		k := groupKey{platform: r.Platform, cur: r.Currency}
		a, ok := accs[k]
		if !ok {
			a = &acc{row: SetupRow{Platform: r.Platform, Currency: r.Currency}}
			accs[k] = a
			order = append(order, k)
		}
		a.row.Rentals++
		a.times = append(a.times, at.Sub(r.StartedAt()))
		if sc, err := costs.over(r, r.StartedAt(), at); err == nil && sc.Priced() {
			a.money = append(a.money, sc.Total.Decimal())
		}
	}
	out := make([]SetupRow, 0, len(order))
	for _, k := range order {
		a := accs[k]
		row := a.row
		row.Time = cmpMedianDur(a.times)
		row.Priced, row.Money = len(a.money), cmpMedianDec(a.money)
		out = append(out, row)
	}
	slices.SortStableFunc(out, func(x, y SetupRow) int {
		if c := cmp.Compare(x.Currency, y.Currency); c != 0 {
			return c
		}
		return strings.Compare(x.Platform, y.Platform)
	})
	return out
}

func compareLabels(in CompareInput, byID map[int64]*Rental, models map[int64]rentalModel, costs *spanCosts) []LabelTable {
	type rowAcc struct {
		row   LabelRow
		names map[string]int
		times []time.Duration
		money []Decimal
	}
	type labelAcc struct {
		rows  map[groupKey]*rowAcc
		order []groupKey
	}
	labels := map[string]*labelAcc{}
	for _, run := range in.Runs {
		if run.Label == "" {
			continue
		}
		r, ok := byID[run.RentalID]
		if !ok {
			continue
		}
		m := models[r.ID]
		la, ok := labels[run.Label]
		if !ok {
			la = &labelAcc{rows: map[groupKey]*rowAcc{}}
			labels[run.Label] = la
		}
		k := groupKey{platform: r.Platform, key: m.key, mig: m.mig, cur: r.Currency}
		a, ok := la.rows[k]
		if !ok {
			a = &rowAcc{row: LabelRow{Platform: r.Platform, Key: m.key, MIG: m.mig, Currency: r.Currency}, names: map[string]int{}}
			la.rows[k] = a
			la.order = append(la.order, k)
		}
		a.names[m.display]++
		if !run.Succeeded() {
			a.row.Failed++
			continue
		}
		a.row.Runs++
		a.times = append(a.times, run.Duration())
		if sc, err := costs.over(r, run.StartedAt, run.EndedAt); err == nil && sc.Priced() {
			a.money = append(a.money, sc.Total.Decimal())
		}
	}
	out := make([]LabelTable, 0, len(labels))
	for l, la := range labels {
		lt := LabelTable{Label: l}
		for _, k := range la.order {
			a := la.rows[k]
			row := a.row
			row.GPU = cmpMostSeen(a.names)
			row.Time = cmpMedianDur(a.times)
			row.Priced, row.Money = len(a.money), cmpMedianDec(a.money)
			lt.Runs += row.Runs
			lt.Failed += row.Failed
			lt.Rows = append(lt.Rows, row)
		}
		slices.SortStableFunc(lt.Rows, func(x, y LabelRow) int {
			if c := cmp.Compare(x.Currency, y.Currency); c != 0 {
				return c
			}
			if px, py := x.Priced > 0, y.Priced > 0; px != py {
				if px {
					return -1
				}
				return 1
			} else if px {
				if c := x.Money.Cmp(y.Money); c != 0 {
					return c
				}
			}
			// Rows with no succeeded run (only failures) after those with.
			if rx, ry := x.Runs > 0, y.Runs > 0; rx != ry {
				if rx {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(x.Time, y.Time); c != 0 {
				return c
			}
			return cmpRowOrder(x.Platform, x.GPU, x.MIG, y.Platform, y.GPU, y.MIG)
		})
		out = append(out, lt)
	}
	slices.SortFunc(out, func(x, y LabelTable) int { return strings.Compare(x.Label, y.Label) })
	return out
}

// cmpHourly returns r's price per hour (all its GPUs) in force at its
// release, or at now while it runs; false if unpriced.
func cmpHourly(r *Rental, now time.Time) (*big.Rat, bool) {
	if !r.Priced {
		return nil, false
	}
	at := now
	if end, ok := r.ReleasedAt(); ok && end.Before(now) {
		at = end
	}
	p := r.rateAt(at)
	u := p.Unit.Seconds()
	if u <= 0 {
		return nil, false
	}
	h := p.Amount.Rat()
	return h.Mul(h, big.NewRat(3600, u)), true
}

// cmpRound rounds x to scale digits after the point, half away from
// zero, as a Decimal (scale ≤ MaxDecimalScale; x small enough to fit).
func cmpRound(x *big.Rat, scale int) Decimal {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	num := new(big.Int).Mul(x.Num(), p)
	q, rem := new(big.Int).QuoRem(num, x.Denom(), new(big.Int))
	rem.Abs(rem)
	if rem.Lsh(rem, 1).Cmp(x.Denom()) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return NewDecimal(q.Int64(), scale)
}

// cmpMedianDec returns the median of ds (the mean of the middle two for
// an even count, exact to one more digit); zero for none.
func cmpMedianDec(ds []Decimal) Decimal {
	if len(ds) == 0 {
		return Decimal{}
	}
	s := slices.Clone(ds)
	slices.SortFunc(s, func(a, b Decimal) int { return a.Cmp(b) })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	sum := new(big.Rat).Add(s[n/2-1].Rat(), s[n/2].Rat())
	sc := min(max(s[n/2-1].Scale(), s[n/2].Scale())+1, MaxDecimalScale)
	return cmpRound(sum.Quo(sum, big.NewRat(2, 1)), sc).norm()
}

func cmpMedianF64(fs []float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	s := slices.Clone(fs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func cmpMedianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}

// cmpMostSeen returns the name seen most often, the first in alphabetical
// order among equals.
func cmpMostSeen(names map[string]int) string {
	best, bestN := "", 0
	for n, c := range names {
		if c > bestN || c == bestN && n < best {
			best, bestN = n, c
		}
	}
	return best
}
