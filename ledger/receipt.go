package ledger

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// The receipt: what a rental delivered for what it costs, from its first
// bench. The chat's card, /receipt and the dashboard's rental page show
// the same Receipt, so the sums are made once, here; each edge words them
// in its own language. Everything a bench says is the agent's claim
// (BenchRecord): a receipt shows it, and nothing reads it to move money
// or to take an automatic action.

// Receipt is one rental's receipt as of a moment.
type Receipt struct {
	Rental *Rental
	// GPU and GPUCount are the headline: the model the bench measured
	// (the rental's own when the bench measured no GPU) and how many.
	GPU      string
	GPUCount int

	// Bench is the rental's first bench; nil when it has none (the rest
	// below the money then stays zero).
	Bench *BenchRecord
	// Assessment is perf.Assess of the bench: each GPU's figures with
	// their references and ratios, and the warnings in perf's order.
	Assessment perf.Assessment
	// Warnings are Assessment's warnings, most costly first, with the
	// money at stake; a warning that is another's likely cause on the
	// same GPU is folded into it (ReceiptWarning.Because).
	Warnings []ReceiptWarning
	// TensorTFLOPS is perf.TensorTFLOPS of the bench: the throughput the
	// price is divided by (every GPU's).
	TensorTFLOPS float64

	// Priced is false for a rental without a compute price: no hourly
	// price, no price per unit, and money so far is UNPRICED.
	Priced bool
	// Hourly is what the compute price in force now accrues in an hour,
	// exact (a per-day package's day over 24 hours).
	Hourly *big.Rat
	// PerTFLOPHour is Hourly ÷ TensorTFLOPS, exact: the price of a
	// tensor-TFLOP-hour (PerTFLOPHour, per GPU where the bench measured
	// other GPUs than were paid for). nil when unpriced or no tensor
	// figure was measured (nothing to divide by: never a guess).
	PerTFLOPHour *big.Rat
	// SoFar is what the rental has cost up to now (compute, storage,
	// traffic and charges that have a price: /status's total).
	SoFar Money

	// SetupTax is what the rental cost from its start to its first
	// sustained GPU work; nil when no work was seen yet.
	SetupTax *SetupTax
	// Jobs are the rental's runs of the user's own work, oldest first,
	// each with its cost over its span.
	Jobs []ReceiptJob
}

// ReceiptWarning is one warning of a receipt with what it costs.
type ReceiptWarning struct {
	perf.Warning
	// Model is the warned GPU's model ("" for the host), for "of a
	// healthy RTX 4090".
	Model string
	// Because is the warning that is this one's likely cause (its Cause)
	// on the same GPU, with its own evidence (a power limit of 300 W of
	// 450); nil when perf named no cause or did not warn of it.
	Because *perf.Warning
	// Share is the GPU's share of the hourly price (the price split
	// evenly over the bench's GPUs), and Waste the part of it that buys
	// nothing: Share times the part of a healthy card's figure the GPU
	// lacks. Both have a zero Currency when not known (a fact without a
	// ratio, or an unpriced rental).
	Share, Waste Money
}

// HasWaste reports whether w's money at stake is known.
func (w ReceiptWarning) HasWaste() bool { return w.Waste.Currency != "" }

// SetupTax is the time and money from a rental's start to its first
// sustained work.
type SetupTax struct {
	From, To time.Time
	Money    Money
	Priced   bool // the compute has a price: Money is a figure
	// Partial: storage or traffic in the span has no price, so Money is
	// the part that has one (said with it, as /job says it).
	Partial bool
}

// Duration is the setup tax's length.
func (s SetupTax) Duration() time.Duration { return s.To.Sub(s.From) }

// ReceiptJob is one job run with its cost.
type ReceiptJob struct {
	Run     JobRun
	Cost    Money
	Priced  bool // as SetupTax's
	Partial bool
}

// ReceiptInput is what BuildReceipt reads: the user's book (for the
// engine), the rental, its benches (the first is the receipt's), its
// first work (zero: none yet), its job runs and the moment.
type ReceiptInput struct {
	Book      *Book
	Rental    *Rental
	Benches   []BenchRecord
	FirstWork time.Time
	Jobs      []JobRun
	Now       time.Time
}

// wasteCodes are the warnings of a figure below its band whose shortfall
// is money lost: the throughput a rental is paid for. A slow copy or a
// slow disk costs time too, but how much of the bill depends on the work.
var wasteCodes = []perf.WarnCode{perf.WarnSlowTensor, perf.WarnSlowFP32, perf.WarnSlowMemory}

// BuildReceipt assembles in's rental's receipt. It is pure: the engine's
// figures as of in.Now, the bench as stored. Runs of other rentals in
// in.Jobs are ignored.
func BuildReceipt(in ReceiptInput) Receipt {
	r := in.Rental
	rc := Receipt{Rental: r, GPU: r.GPU, GPUCount: r.GPUCount, Priced: r.Priced}
	cost := rentalCostAsOf(in.Book, r, in.Now)
	if cost != nil {
		rc.SoFar = cost.Total
		if r.Priced {
			rc.Hourly = hourlyRat(cost.Rate)
		}
	} else {
		rc.SoFar = Money{Currency: r.Currency}
		if r.Priced {
			rc.Hourly = hourlyRat(r.rateAt(in.Now))
		}
	}
	if len(in.Benches) > 0 {
		first := in.Benches[0]
		for _, b := range in.Benches[1:] {
			if b.At.Before(first.At) || b.At.Equal(first.At) && b.ID < first.ID {
				first = b
			}
		}
		rc.Bench = &first
		rc.Assessment = perf.Assess(first.Bench)
		rc.TensorTFLOPS = perf.TensorTFLOPS(first.Bench)
		if n := len(first.Bench.GPUs); n > 0 {
			rc.GPUCount = n
			if m := first.Bench.GPUs[0].Model; m != "" {
				rc.GPU = m
			}
		}
		if rc.Hourly != nil {
			rc.PerTFLOPHour = PerTFLOPHour(rc.Hourly, r.GPUCount, first.Bench)
		}
		// A slow GPU's share of the price is one paid GPU's: the bench may
		// list other tenants' cards, or measure only some of the rental's.
		rc.Warnings = receiptWarnings(rc.Assessment, rc.Hourly, r.Currency, max(r.GPUCount, 1))
	}
	if !in.FirstWork.IsZero() {
		from := r.StartedAt()
		if in.FirstWork.After(from) {
			m, ok, partial := spanCost(in.Book, r, from, in.FirstWork)
			rc.SetupTax = &SetupTax{From: from, To: in.FirstWork, Money: m, Priced: ok, Partial: partial}
		}
	}
	for _, j := range in.Jobs {
		if j.RentalID != r.ID {
			continue
		}
		m, ok, partial := spanCost(in.Book, r, j.StartedAt, j.EndedAt)
		rc.Jobs = append(rc.Jobs, ReceiptJob{Run: j, Cost: m, Priced: ok, Partial: partial})
	}
	slices.SortStableFunc(rc.Jobs, func(a, b ReceiptJob) int { return a.Run.StartedAt.Compare(b.Run.StartedAt) })
	return rc
}

// receiptWarnings orders a's warnings most costly first and prices those
// whose shortfall is money lost: hourly split evenly over the bench's
// gpus, times 1 − Value/Expected. A warning that is another's Cause on the
// same GPU is folded into that one.
func receiptWarnings(a perf.Assessment, hourly *big.Rat, cur Currency, gpus int) []ReceiptWarning {
	models := map[int]string{}
	for _, g := range a.GPUs {
		models[g.Index] = g.Model
	}
	type key struct {
		code perf.WarnCode
		gpu  int
	}
	byKey := map[key]int{}
	for i, w := range a.Warnings {
		if _, ok := byKey[key{w.Code, w.GPU}]; !ok {
			byKey[key{w.Code, w.GPU}] = i
		}
	}
	folded := map[int]bool{}
	var out []ReceiptWarning
	for _, w := range a.Warnings {
		rw := ReceiptWarning{Warning: w, Model: models[w.GPU]}
		if w.Cause != "" && w.Cause != w.Code {
			if i, ok := byKey[key{w.Cause, w.GPU}]; ok {
				c := a.Warnings[i]
				rw.Because = &c
				folded[i] = true
			}
		}
		if hourly != nil && slices.Contains(wasteCodes, w.Code) && validFigure(w.Value) && validFigure(w.Expected) &&
			w.Expected > 0 && w.Value >= 0 && w.Value < w.Expected {
			n := big.NewRat(int64(max(gpus, 1)), 1)
			rw.Share = Round(new(big.Rat).Quo(hourly, n), cur)
			rw.Waste = Round(wasteRat(hourly, w.Value, w.Expected, max(gpus, 1)), cur)
		}
		out = append(out, rw)
	}
	// Drop the folded causes, keeping perf's order among the rest.
	// They are shown with the warning they explain, not again alone.
	var kept []ReceiptWarning
	for i, rw := range out {
		if !folded[i] {
			kept = append(kept, rw)
		}
	}
	slices.SortStableFunc(kept, func(x, y ReceiptWarning) int { return cmp.Compare(y.Waste.Minor, x.Waste.Minor) })
	return kept
}

// wasteRat is hourly ÷ gpus × (expected − value) ÷ expected, exact.
func wasteRat(hourly *big.Rat, value, expected float64, gpus int) *big.Rat {
	e := new(big.Rat).SetFloat64(expected)
	short := new(big.Rat).Sub(e, new(big.Rat).SetFloat64(value))
	q := new(big.Rat).Mul(hourly, short)
	return q.Quo(q, e.Mul(e, big.NewRat(int64(gpus), 1)))
}

// HourlyMoney is Hourly rounded to the currency's minor unit, and false
// when the rental has no hourly price.
func (rc Receipt) HourlyMoney() (Money, bool) {
	if rc.Hourly == nil {
		return Money{}, false
	}
	return Round(rc.Hourly, rc.Rental.Currency), true
}

// validFigure reports whether f is a number a sum can use.
func validFigure(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// hourlyRat is what price p accrues in an hour, exact; nil for a price
// without a unit of time.
func hourlyRat(p Price) *big.Rat {
	secs := p.Unit.Seconds()
	if secs <= 0 {
		return nil
	}
	q := p.Amount.Rat()
	return q.Mul(q, big.NewRat(3600, secs))
}

// rentalCostAsOf is r's line of the book's statement as of t, or nil when
// the book does not hold r.
func rentalCostAsOf(b *Book, r *Rental, t time.Time) *RentalCost {
	if b == nil {
		return nil
	}
	st := StatementAsOf(b, t)
	for i := range st.Rentals {
		if st.Rentals[i].Rental.ID == r.ID {
			return &st.Rentals[i]
		}
	}
	return nil
}

// spanCost is what r cost over [from, to) (CostOver: the per-second
// share of its compute, storage and traffic), and whether its compute is
// priced. A span the engine cannot price (a rental without a start)
// costs nothing.
func spanCost(b *Book, r *Rental, from, to time.Time) (m Money, priced, partial bool) {
	sc, err := CostOver(b, r, from, to)
	if err != nil {
		return Money{Currency: r.Currency}, false, false
	}
	return sc.Total, sc.ComputePriced, sc.ComputePriced && !sc.Priced()
}

// PerTFLOPHour is the price of a tensor-TFLOP-hour: the hourly price of
// the paidGPUs GPUs rented ÷ the tensor throughput the bench measured
// (perf.TensorTFLOPS), exact. Where the bench's GPUs with a tensor
// figure are not the GPUs paid for (a bench that measured 4 of 8, a
// host that shows its other tenants' cards) it divides per GPU: one
// paid GPU's price ÷ the mean throughput of the GPUs measured, so a
// partial bench neither doubles nor halves the price. nil when no
// tensor figure was measured.
func PerTFLOPHour(hourly *big.Rat, paidGPUs int, b perf.Bench) *big.Rat {
	total, measured := perf.TensorTFLOPS(b), tensorMeasured(b)
	if hourly == nil || !validFigure(total) || total <= 0 {
		return nil
	}
	per := new(big.Rat).Quo(hourly, new(big.Rat).SetFloat64(total))
	if paidGPUs <= 0 || measured == paidGPUs {
		return per
	}
	// (hourly / paid) / (total / measured) = per × measured / paid
	return per.Mul(per, big.NewRat(int64(measured), int64(paidGPUs)))
}

// tensorMeasured counts the GPUs of b with a tensor figure.
func tensorMeasured(b perf.Bench) int {
	n := 0
	for _, g := range b.GPUs {
		if perf.TensorTFLOPS(perf.Bench{GPUs: []perf.GPU{g}}) > 0 {
			n++
		}
	}
	return n
}

// tensorPerGPU is the mean tensor TFLOPS of the GPUs of b that have a
// tensor figure (0 when none has): a bench that measured 4 of 8 GPUs
// says what one GPU delivers, not half of it.
func tensorPerGPU(b perf.Bench) float64 {
	n := tensorMeasured(b)
	if n == 0 {
		return 0
	}
	return perf.TensorTFLOPS(b) / float64(n)
}
