package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_AddCharge(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", at(-time.Hour))

	c, err := db.AddCharge(ctx, act(1), "box1", ledger.Charge{Amount: ledger.MustDecimal("5.5"), Note: "image fee"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == 0 || c.UserID != 1 || c.RentalID != r.ID || c.Platform != "autodl" || c.Currency != ledger.CNY || !c.At.Equal(t0) {
		t.Fatalf("charge on a rental = %+v: want rental, platform and currency from box1, time of the action", c)
	}
	c2, err := db.AddCharge(ctx, act(1), "", ledger.Charge{Platform: "runpod", Amount: ledger.MustDecimal("-2"), Currency: ledger.USD, Note: "refund", At: at(-time.Minute)})
	if err != nil || c2.RentalID != 0 || c2.Platform != "runpod" {
		t.Fatalf("platform charge = %+v, %v", c2, err)
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Charges) != 2 || b.Charges[0] != c2 || b.Charges[1] != c {
		t.Fatalf("Book charges = %+v, want %+v then %+v (time order)", b.Charges, c2, c)
	}

	if _, err := db.AddCharge(ctx, keyed(1, "k1"), "box1", ledger.Charge{Amount: ledger.MustDecimal("1")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a    ledger.Action
		rent string
		c    ledger.Charge
		code string
	}{
		{"zero", act(1), "box1", ledger.Charge{}, ledger.EINVALID},
		{"no platform", act(1), "", ledger.Charge{Amount: ledger.MustDecimal("1"), Currency: ledger.CNY}, ledger.EINVALID},
		{"no currency", act(1), "", ledger.Charge{Amount: ledger.MustDecimal("1"), Platform: "vast"}, ledger.EINVALID},
		{"long note", act(1), "box1", ledger.Charge{Amount: ledger.MustDecimal("1"), Note: strings.Repeat("x", 201)}, ledger.EINVALID},
		{"unknown rental", act(1), "nope", ledger.Charge{Amount: ledger.MustDecimal("1")}, ledger.ENOTFOUND},
		{"unknown user", act(7), "", ledger.Charge{Amount: ledger.MustDecimal("1"), Platform: "vast", Currency: ledger.USD}, ledger.ENOTFOUND},
		{"duplicate key", keyed(1, "k1"), "box1", ledger.Charge{Amount: ledger.MustDecimal("1")}, ledger.EDUPLICATE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unchanged(t, db, tc.code, func() error { _, err := db.AddCharge(ctx, tc.a, tc.rent, tc.c); return err })
		})
	}
}

func TestDB_AddTopUp(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	tu, err := db.AddTopUp(ctx, act(1), ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("100"), Currency: ledger.CNY})
	if err != nil || tu.ID == 0 || tu.UserID != 1 || !tu.At.Equal(t0) {
		t.Fatalf("AddTopUp = %+v, %v", tu, err)
	}
	b, _ := db.Book(ctx, 1)
	if len(b.TopUps) != 1 || b.TopUps[0] != tu {
		t.Fatalf("Book top-ups = %+v, want %+v", b.TopUps, tu)
	}
	for _, tc := range []struct {
		name string
		tu   ledger.TopUp
	}{
		{"zero", ledger.TopUp{Platform: "autodl", Currency: ledger.CNY}},
		{"negative", ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("-1"), Currency: ledger.CNY}},
		{"no platform", ledger.TopUp{Amount: ledger.MustDecimal("1"), Currency: ledger.CNY}},
		{"no currency", ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unchanged(t, db, ledger.EINVALID, func() error { _, err := db.AddTopUp(ctx, act(1), tc.tu); return err })
		})
	}
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.AddTopUp(ctx, act(2), ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("1"), Currency: ledger.CNY})
		return err
	})
}

func TestDB_RecordBalance(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	// A negative balance is what some platforms show: it is recorded.
	br, err := db.RecordBalance(ctx, act(1), ledger.BalanceRecord{Platform: "vast", Amount: ledger.MustDecimal("-0.37"), Currency: ledger.USD, At: at(-time.Hour)})
	if err != nil || br.ID == 0 || !br.At.Equal(at(-time.Hour)) {
		t.Fatalf("RecordBalance = %+v, %v", br, err)
	}
	b, _ := db.Book(ctx, 1)
	if len(b.Balances) != 1 || b.Balances[0] != br {
		t.Fatalf("Book balances = %+v, want %+v", b.Balances, br)
	}
	unchanged(t, db, ledger.EINVALID, func() error {
		_, err := db.RecordBalance(ctx, act(1), ledger.BalanceRecord{Amount: ledger.MustDecimal("1"), Currency: ledger.USD})
		return err
	})
	unchanged(t, db, ledger.EINVALID, func() error {
		_, err := db.RecordBalance(ctx, act(1), ledger.BalanceRecord{Platform: "vast", Amount: ledger.MustDecimal("1")})
		return err
	})
}
