package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestServer_MonthRefs: two rentals of one name in a month each carry
// their address, so the page tells them apart; a name used once has none.
func TestServer_MonthRefs(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	ctx := context.Background()
	a := ledger.Action{UserID: 1, At: box.StartedAt()}
	if _, err := e.db.AppendEvent(ctx, a, "box", ledger.Event{Kind: ledger.EventRelease, At: box.StartedAt().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	again := ledger.Rental{Name: "box", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("2"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: box.StartedAt().Add(20 * time.Hour)}}}
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: box.StartedAt().Add(20 * time.Hour)}, again); err != nil {
		t.Fatal(err)
	}
	var page dashboard.MonthPage
	if rec := e.get(e.signIn(1), dashboard.PathMonth+"?month=2026-11", &page); rec.Code != 200 {
		t.Fatalf("month: %d %s", rec.Code, rec.Body)
	}
	refs := map[string]bool{}
	for _, r := range page.Rentals {
		if r.Name == "box" {
			refs[r.Ref] = true
		} else if r.Ref != "" {
			t.Errorf("%s has ref %q though its name is its own", r.Name, r.Ref)
		}
	}
	if !refs["box@2026-11-19"] || !refs["box@2026-11-20"] {
		t.Fatalf("refs of the two box rentals = %v, want box@2026-11-19 and box@2026-11-20", refs)
	}
}
