package view

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestRenderStatus_StartedThisSecond covers a rental confirmed from a
// proposal and listed within the same second: the store keeps whole
// seconds, the clock does not, and the rental must still be listed.
func TestRenderStatus_StartedThisSecond(t *testing.T) {
	start := time.Date(2026, 11, 29, 16, 12, 24, 0, time.UTC)
	for _, frac := range []time.Duration{0, 700 * time.Millisecond, 999 * time.Millisecond} {
		b := &ledger.Book{User: ledger.User{ID: 1, Lang: "en", TZ: "UTC"}}
		b.Rentals = []*ledger.Rental{{
			ID: 1, UserID: 1, Name: "box1", Platform: "vast", GPU: "RTX 4090", GPUCount: 2,
			Mode: ledger.PerSecond, Priced: true, Currency: ledger.USD,
			Price:  ledger.Price{Amount: ledger.MustDecimal("0.7"), Unit: ledger.UnitHour},
			Events: []ledger.Event{{ID: 1, Kind: ledger.EventStart, At: start}},
		}}
		got := RenderStatus(b, start.Add(frac), "en")
		if !strings.Contains(got, "box1") {
			t.Errorf("now = start+%s: status does not list box1:\n%s", frac, got)
		}
	}
}
