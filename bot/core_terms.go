package bot

// What a change of terms does to the other terms, said in its reply.

import (
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// packageEnded is the note for a price change at `at` on an always-on
// rental billed in prepaid periods (a per-day, per-week or per-month
// price): the change ends the period in progress, which stays billed in
// full, and starts a new one at the new price (docs/design.md §4), so the
// user pays for two periods where they may have expected the new price
// from the next one. "" when the change ends no period part-way. x is
// the rental before the change.
func (r rentals) packageEnded(x *ledger.Rental, at time.Time) string {
	if !x.Priced || x.Mode != ledger.AlwaysOn || len(x.Events) == 0 {
		return ""
	}
	rate, base := x.Price, x.StartedAt()
	for _, e := range x.Events {
		if !e.At.Before(at) {
			break
		}
		if e.Kind == ledger.EventPrice {
			rate, base = e.Price, e.At
		}
	}
	period := rate.Unit.Seconds()
	if !rate.Unit.IsPackage() || period == 0 || !at.After(base) {
		return ""
	}
	n := int64(at.Sub(base)/time.Second) / period
	begun := base.Add(time.Duration(n*period) * time.Second)
	if !at.After(begun) {
		return "" // at a period's end: nothing is billed twice
	}
	return r.t("price_package_ends", x.Name, view.FormatPrice(rate, x.Currency, r.lang), r.when(begun), r.when(at))
}
