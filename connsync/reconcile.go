package connsync

import (
	"context"
	"errors"
	"math/big"
	"sort"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
)

// Reconciliation tolerances. A line is "within rounding" when its drift
// is at most tolMinor minor units (RunPod bills to the cent per record,
// and a month of per-record rounding on an hourly bill drifts a few
// cents) or tolPermille per mille of the larger side, whichever is
// larger. Billed time counts as different from the ledger's running time
// beyond tolTime or 2% of it (a stop the ledger places a minute off is
// rounding, an hour is a missing stop).
const (
	tolMinor    = 5
	tolPermille = 10
	tolTime     = 5 * time.Minute
)

// Reconcile compares the user's ledger against each connected platform
// over [from, to), one Reconciliation per connector, by platform name.
//
// Where the platform reports billing (RunPod's /billing/pods), each
// billed instance is set against the ledger's cost of its bound rental
// over the period (the cost engine's ledger.Spend, as /spend and the
// export compute a period: the rental's compute and storage lines): a
// billed instance with no rental is CauseNotInLedger, a rental the
// platform did not bill CauseNotBilled, and a drift beyond rounding is
// put down to the price (the platform lists another price than the
// ledger's rate), the time (the platform billed another running time),
// or storage (it billed more than the ledger's compute), in that order.
//
// Elsewhere (Vast.ai, AutoDL) the platform's side is the fall of the
// balance its API gave over the period (its first and last API-given
// records inside [from, to)) plus the top-ups recorded in it, against the
// ledger's total for the platform: one total, no lines. Lambda reports
// neither: its Err says so. A platform call failing fills that
// platform's Err only. Err is in the user's language.
func (s *Syncer) Reconcile(ctx context.Context, userID int64, from, to time.Time) ([]ledger.Reconciliation, error) {
	if !to.After(from) {
		return nil, ledger.Errorc(ledger.EINVALID, "period_empty", from, to)
	}
	if now := s.now(); to.After(now) {
		to = now // the month so far: the engine would count the future as running
		if !to.After(from) {
			return nil, ledger.Errorc(ledger.EINVALID, "period_future", from)
		}
	}
	cs, err := s.store.Connectors(ctx, userID)
	if err != nil {
		return nil, err
	}
	b, err := s.store.Book(ctx, userID)
	if err != nil {
		return nil, err
	}
	lg := chat.NormLang(b.User.Lang)
	st := ledger.Spend(b, from, to)
	out := make([]ledger.Reconciliation, 0, len(cs))
	for _, c := range cs {
		rec := ledger.Reconciliation{Platform: c.Platform, From: from, To: to}
		ins, err := s.store.PlatformInstances(ctx, userID, c.Platform)
		if err != nil {
			return nil, err
		}
		switch {
		case c.Rejected():
			rec.Err = actMessages.Text(lg, "rec_rejected")
		default:
			s.reconcileOne(ctx, c, b, st, ins, lg, &rec)
		}
		out = append(out, rec)
	}
	return out, nil
}

// reconcileOne fills rec for one connector.
func (s *Syncer) reconcileOne(ctx context.Context, c ledger.Connector, b *ledger.Book, st *ledger.Statement, ins []ledger.PlatformInstance, lg string, rec *ledger.Reconciliation) {
	cl, err := s.client(c)
	if err != nil {
		s.log.Error("connsync: reconcile", "platform", c.Platform, "user", c.UserID, "err", err)
		rec.Err = actMessages.Text(lg, "rec_no_client")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	items, err := cl.Billed(cctx, rec.From, rec.To)
	cancel()
	switch {
	case err == nil:
		rec.Source = "billing"
		billingLines(st, ins, items, c.Platform, rec)
	case errors.Is(err, connector.ErrNotSupported):
		// No billing endpoint: the balance the API reported stands in.
		rec.Source = "balance"
		bctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
		_, berr := cl.Balance(bctx)
		cancel()
		if errors.Is(berr, connector.ErrNotSupported) {
			rec.Source = ""
			rec.Err = actMessages.Text(lg, "rec_no_api")
			return
		}
		// Any other answer is fine: the balances the sync recorded are read.
		balanceTotals(b, c.Platform, lg, rec)
	default:
		rec.Source = "billing"
		rec.Err = actMessages.Text(lg, "rec_failed", err.Error())
	}
}

// rentalPart is a rental's compute and storage over the period.
func rentalPart(rc ledger.RentalCost) ledger.Money {
	return rc.Compute.Add(rc.Storage)
}

// billingLines sets each billed instance against its rental.
func billingLines(st *ledger.Statement, ins []ledger.PlatformInstance, items []connector.BilledItem, platform string, rec *ledger.Reconciliation) {
	type billed struct {
		amount ledger.Money
		dur    time.Duration
	}
	byID := map[string]*billed{}
	var order []string
	for _, it := range items {
		if it.InstanceID == "" {
			continue
		}
		b := byID[it.InstanceID]
		if b == nil {
			b = &billed{amount: ledger.Money{Currency: it.Currency}}
			byID[it.InstanceID] = b
			order = append(order, it.InstanceID)
		}
		m := ledger.MoneyFromDecimal(it.Amount, it.Currency)
		if b.amount.Currency != m.Currency {
			continue // one instance billed in two currencies: not ours to add
		}
		b.amount = b.amount.Add(m)
		b.dur += it.BilledFor
	}
	listed := map[string]ledger.PlatformInstance{}
	for _, in := range ins {
		listed[in.PlatformID] = in
	}
	// The rentals of the platform the statement counts, by platform ID
	// (a rental logged by hand and never bound has none).
	used := map[string]bool{}
	var lines []ledger.ReconcileLine
	for _, rc := range st.Rentals {
		r := rc.Rental
		if r.Platform != platform {
			continue
		}
		l := ledger.ReconcileLine{RentalID: r.ID, Name: r.Name, PlatformID: r.PlatformID, Ledger: rentalPart(rc)}
		bi := byID[r.PlatformID]
		if r.PlatformID == "" || bi == nil || used[r.PlatformID] {
			if l.Ledger.Minor == 0 {
				continue
			}
			l.Platform = ledger.Money{Currency: l.Ledger.Currency}
			l.PlatformOK = true
			l.Drift = l.Platform.Add(neg(l.Ledger))
			l.Cause = ledger.CauseNotBilled
			lines = append(lines, l)
			continue
		}
		used[r.PlatformID] = true
		l.Platform, l.PlatformOK = bi.amount, true
		if bi.amount.Currency != l.Ledger.Currency {
			l.Cause = ledger.CauseUnknown
			lines = append(lines, l)
			continue
		}
		l.Drift = l.Platform.Add(neg(l.Ledger))
		l.Cause = lineCause(rc, listed[r.PlatformID], bi.amount, bi.dur, l.Drift)
		lines = append(lines, l)
	}
	for _, id := range order {
		if used[id] {
			continue
		}
		bi := byID[id]
		if bi.amount.Minor == 0 {
			continue
		}
		l := ledger.ReconcileLine{PlatformID: id, Name: listed[id].Name, Platform: bi.amount, PlatformOK: true,
			Ledger: ledger.Money{Currency: bi.amount.Currency}, Drift: bi.amount, Cause: ledger.CauseNotInLedger}
		lines = append(lines, l)
	}
	rec.Lines = lines
	totals(rec)
}

// totals sums the lines of the main currency (the first line's) into
// rec's totals and picks the main cause: that of the largest drift
// beyond rounding.
func totals(rec *ledger.Reconciliation) {
	if len(rec.Lines) == 0 {
		return
	}
	cur := rec.Lines[0].Ledger.Currency
	if cur == "" {
		cur = rec.Lines[0].Platform.Currency
	}
	rec.LedgerTotal, rec.PlatformTotal = ledger.Money{Currency: cur}, ledger.Money{Currency: cur}
	var worst int64
	for _, l := range rec.Lines {
		if l.Ledger.Currency != cur || l.Platform.Currency != cur {
			continue
		}
		rec.LedgerTotal = rec.LedgerTotal.Add(l.Ledger)
		rec.PlatformTotal = rec.PlatformTotal.Add(l.Platform)
		if d := abs(l.Drift.Minor); l.Cause != ledger.CauseNone && d > worst {
			worst, rec.Cause = d, l.Cause
		}
	}
	rec.DriftTotal = rec.PlatformTotal.Add(neg(rec.LedgerTotal))
	if rounding(rec.DriftTotal, rec.LedgerTotal, rec.PlatformTotal) && worst == 0 {
		rec.Cause = ledger.CauseNone
	}
}

// lineCause guesses why a billed instance's amount differs from its
// rental's.
func lineCause(rc ledger.RentalCost, in ledger.PlatformInstance, billed ledger.Money, billedFor time.Duration, drift ledger.Money) ledger.ReconcileCause {
	if rounding(drift, rentalPart(rc), billed) {
		return ledger.CauseNone
	}
	if in.PriceOK && in.Currency == rc.Rental.Currency && rc.ComputePriced {
		if hourly, ok := hourlyRate(rc.Rate); ok && in.Price.Rat().Cmp(hourly) != 0 {
			return ledger.CausePrice
		}
	}
	if billedFor > 0 {
		ran := time.Duration(rc.RunningSeconds) * time.Second
		d := billedFor - ran
		if d < 0 {
			d = -d
		}
		if d > tolTime && d*50 > ran {
			return ledger.CauseTime
		}
	}
	if billed.Minor > rc.Compute.Minor {
		return ledger.CauseStorage
	}
	return ledger.CauseUnknown
}

// hourlyRate is p per hour, for a rate by the second, minute or hour (a
// package price has no hourly equivalent to compare).
func hourlyRate(p ledger.Price) (*big.Rat, bool) {
	sec := p.Unit.Seconds()
	if sec == 0 || p.Unit.IsPackage() {
		return nil, false
	}
	return new(big.Rat).Mul(p.Amount.Rat(), big.NewRat(3600, sec)), true
}

// rounding reports whether drift is within the tolerance for amounts a
// and b.
func rounding(drift, a, b ledger.Money) bool {
	d := abs(drift.Minor)
	if d <= tolMinor {
		return true
	}
	return d*1000 <= tolPermille*max(abs(a.Minor), abs(b.Minor))
}

// balanceTotals fills rec from the API-given balances: the fall of the
// balance over the period plus the top-ups in it, against the ledger's
// total for the platform in the balance's currency.
func balanceTotals(b *ledger.Book, platform, lg string, rec *ledger.Reconciliation) {
	var api []ledger.BalanceRecord
	for _, br := range b.Balances {
		if br.API && br.Platform == platform && !br.At.Before(rec.From) && br.At.Before(rec.To) {
			api = append(api, br)
		}
	}
	sort.SliceStable(api, func(i, j int) bool { return api[i].At.Before(api[j].At) })
	if len(api) < 2 {
		rec.Err = actMessages.Text(lg, "rec_few_balances")
		return
	}
	first, last := api[0], api[len(api)-1]
	for _, br := range api[1:] {
		if br.Currency != first.Currency {
			rec.Err = actMessages.Text(lg, "rec_currencies")
			return
		}
	}
	cur := first.Currency
	fall := ledger.MoneyFromDecimal(first.Amount, cur).Add(neg(ledger.MoneyFromDecimal(last.Amount, cur)))
	for _, t := range b.TopUps {
		// Top-ups between the two readings are what the balance rose by.
		if t.Platform == platform && t.Currency == cur && t.At.After(first.At) && !t.At.After(last.At) {
			fall = fall.Add(ledger.MoneyFromDecimal(t.Amount, cur))
		}
	}
	// The ledger's side over the same span as the readings.
	led := ledger.Money{Currency: cur}
	if byCur, ok := ledger.Spend(b, first.At, last.At).ByPlatform[platform]; ok {
		if t, ok := byCur[cur]; ok {
			led = t.Total
		}
	}
	rec.LedgerTotal, rec.PlatformTotal = led, fall
	rec.DriftTotal = fall.Add(neg(led))
	switch {
	case rounding(rec.DriftTotal, led, fall):
		rec.Cause = ledger.CauseNone
	case fall.Minor > led.Minor:
		rec.Cause = ledger.CauseStorage
	default:
		rec.Cause = ledger.CauseUnknown
	}
}

func neg(m ledger.Money) ledger.Money { return ledger.Money{Currency: m.Currency, Minor: -m.Minor} }

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
