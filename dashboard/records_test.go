package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestServer_FollowsRecordCorrections: the month page reads the records
// as they are, so a deleted charge and a corrected balance reading show at
// once, and an undo brings them back.
func TestServer_FollowsRecordCorrections(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	ctx := context.Background()
	a := ledger.Action{UserID: 1, At: e.now}
	if _, err := e.db.AddCharge(ctx, a, "box", ledger.Charge{Amount: ledger.MustDecimal("30"), Note: "image", At: e.now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	recs, err := e.db.Records(ctx, 1, ledger.RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var charge, balance ledger.Record
	for _, r := range recs {
		switch r.Kind {
		case ledger.RecordCharge:
			charge = r
		case ledger.RecordBalance:
			balance = r
		}
	}
	tok := e.signIn(1)
	page := func() (other, reading string) {
		t.Helper()
		var p dashboard.MonthPage
		if rec := e.get(tok, dashboard.PathMonth+"?month=2026-11", &p); rec.Code != 200 {
			t.Fatalf("month: %d %s", rec.Code, rec.Body)
		}
		if len(p.Currencies) != 1 || p.Currencies[0].Totals.Other == nil || len(p.Balances) != 1 || p.Balances[0].Reading == nil {
			t.Fatalf("month page: %+v", p)
		}
		return *p.Currencies[0].Totals.Other, *p.Balances[0].Reading
	}
	if other, reading := page(); other != "30.00" || reading != "500.00" {
		t.Fatalf("before: other %s, reading %s", other, reading)
	}
	if _, err := e.db.DeleteRecord(ctx, a, charge.Ref); err != nil {
		t.Fatal(err)
	}
	fixed := ledger.MustDecimal("450")
	if _, _, err := e.db.FixRecord(ctx, a, balance.Ref, ledger.RecordFix{Amount: &fixed}); err != nil {
		t.Fatal(err)
	}
	if other, reading := page(); other != "0.00" || reading != "450.00" {
		t.Fatalf("after the deletion and the fix: other %s, reading %s", other, reading)
	}
	for range 2 {
		if _, err := e.db.Undo(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if other, reading := page(); other != "30.00" || reading != "500.00" {
		t.Fatalf("after /undo twice: other %s, reading %s", other, reading)
	}
}
