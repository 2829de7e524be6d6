package ledger

import (
	"math/big"
	"time"
)

// SpanCost is what a span of one rental's life cost: the share of the
// rental's bill that falls in [From, To). Money is in the rental's
// currency, each part rounded once to its minor unit (half away from
// zero), Total the sum of the priced parts. A part whose Priced flag is
// false has no price and its Money is zero and meaningless.
type SpanCost struct {
	Rental *Rental
	// From and To are the span clipped to the rental's life (its start to
	// its release); From == To when nothing of the span lies inside it.
	From, To time.Time

	// BilledSeconds are the span's seconds the rental's compute is billed
	// for by the second: its running time, or for always-on its whole
	// life, stopped or not.
	BilledSeconds  int64
	RunningSeconds int64

	ComputePriced bool
	Compute       Money
	StoragePriced bool  // false if a volume attached to the rental is unpriced
	Storage       Money // the rental's volumes of its currency
	TrafficPriced bool  // false if traffic was used but has no price
	Traffic       Money
	// TrafficProRata is true when no usage record of the rental falls in
	// the span, so Traffic is the rental's traffic charge shared out by
	// time over its life (an hourly or hand-made record says nothing of
	// the minutes between records).
	TrafficProRata bool
	Total          Money
}

// Priced reports whether every part of the span's cost has a price.
func (s SpanCost) Priced() bool { return s.ComputePriced && s.StoragePriced && s.TrafficPriced }

// Duration is the length of the clipped span.
func (s SpanCost) Duration() time.Duration { return s.To.Sub(s.From) }

// CostOver returns what the span [from, to) of rental r, one of b's
// rentals, cost: the price of a job run on it (the user's own benchmark)
// or of its setup (start to first work).
//
// Compute is the per-second share of the rental's bill: each second of
// the span the rental was billed for, at the rate in force that second
// (price ÷ the unit's seconds; a package's price shared out over its
// period). A job inside a started hour of a per-hour rental costs its
// share of that hour, not the whole hour: steps, minimums and floors are
// the rental's, paid whatever ran on it, not the job's, so they are left
// out and a span's costs never add up to more than its seconds at the
// rate. Storage is what the volumes attached to r accrued in the span (a
// volume in another currency is left out, never converted). Traffic is
// what the usage records inside the span charged, or, when none falls
// inside it, the rental's whole traffic charge pro rata by time over its
// life (start to release, or to the span's end or its last record while
// it runs).
//
// The span is clipped to the rental's life; one wholly before its start
// or after its release costs nothing. to before from is EINVALID, as is a
// rental without a start. Instants are whole seconds, as in the engine.
func CostOver(b *Book, r *Rental, from, to time.Time) (SpanCost, error) {
	sm, err := newSpanMeter(b, r)
	if err != nil {
		return SpanCost{}, err
	}
	return sm.cost(from, to)
}

// spanMeter prices spans of one rental: its meter and those of its
// attached volumes, built once for many spans (Compare prices every run
// of a rental with one).
type spanMeter struct {
	r     *Rental
	m     *rentalMeter
	spans []span         // m.billedSpans()
	vols  []*volumeMeter // the attached volumes of r's currency
}

func newSpanMeter(b *Book, r *Rental) (*spanMeter, error) {
	if r == nil || len(r.Events) == 0 || r.Events[0].Kind != EventStart {
		name := ""
		if r != nil {
			name = r.Name
		}
		return nil, Errorc(EINVALID, "not_started", name)
	}
	loc := time.UTC
	if b != nil {
		loc = b.User.Location()
	}
	sm := &spanMeter{r: r, m: newRentalMeter(r, loc)}
	sm.spans = sm.m.billedSpans()
	if b != nil {
		for _, v := range b.Volumes {
			if !attachedTo(v, r) || v.Currency != r.Currency || len(v.Events) == 0 {
				continue
			}
			sm.vols = append(sm.vols, newVolumeMeter(v, r))
		}
	}
	return sm, nil
}

func (sm *spanMeter) cost(from, to time.Time) (SpanCost, error) {
	r, m := sm.r, sm.m
	if to.Before(from) {
		return SpanCost{}, Errorc(EINVALID, "span_backwards", from, to)
	}
	z := Money{Currency: r.Currency}
	sc := SpanCost{Rental: r, ComputePriced: r.Priced, StoragePriced: true, TrafficPriced: true,
		Compute: z, Storage: z, Traffic: z, Total: z}
	start := r.StartedAt()
	end, released := r.ReleasedAt()
	a, e := unix(from), unix(to)
	if s := unix(start); a < s {
		a, from = s, start
	}
	if released && e > unix(end) {
		e, to = unix(end), end
	}
	if e <= a {
		sc.From, sc.To = from, from
		return sc, nil
	}
	sc.From, sc.To = from, to
	sc.RunningSeconds = m.runningAt(e) - m.runningAt(a)

	secs := make([]int64, m.k()) // billed seconds at each rate
	for _, s := range sm.spans {
		lo, hi := max(s.from, a), min(s.to, e)
		if hi <= lo {
			continue
		}
		sc.BilledSeconds += hi - lo
		secs[s.rate] += hi - lo
	}
	if r.Priced {
		sc.Compute = rateMoney(m.rates, secs, Decimal{}, false, r.Currency)
	}

	storage := new(big.Rat)
	for _, vm := range sm.vols {
		if !volumeActive(vm.v, a, e) {
			continue
		}
		if !vm.v.Priced {
			sc.StoragePriced = false
			continue
		}
		storage.Add(storage, new(big.Rat).Sub(vm.chargeAt(e), vm.chargeAt(a)))
	}
	sc.Storage = Round(storage, r.Currency)

	if m.traffic != nil {
		sc.TrafficProRata = !m.traffic.usedIn(a, e)
		switch {
		case !r.Traffic.Priced:
			sc.TrafficPriced = false
		case !sc.TrafficProRata:
			sc.Traffic = Round(new(big.Rat).Sub(m.traffic.chargeAt(e), m.traffic.chargeAt(a)), r.Currency)
		default:
			s := unix(start)
			life := max(e, m.traffic.all[len(m.traffic.all)-1]+1)
			if released {
				life = unix(end)
			}
			all := m.traffic.chargeAt(forever)
			share := new(big.Rat).Mul(all, big.NewRat(e-a, max(life-s, 1)))
			sc.Traffic = Round(share, r.Currency)
		}
	}

	sc.Total = sc.Storage
	if sc.ComputePriced {
		sc.Total = sc.Total.Add(sc.Compute)
	}
	if sc.TrafficPriced {
		sc.Total = sc.Total.Add(sc.Traffic)
	}
	return sc, nil
}

// attachedTo reports whether v is attached to r, as a statement attaches
// it: by the rental's ID, or by name for a rental not yet stored.
func attachedTo(v *Volume, r *Rental) bool {
	if r.ID != 0 {
		return v.RentalID == r.ID
	}
	return v.RentalID == 0 && v.RentalName != "" && v.RentalName == r.Name
}
