package sqlite_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// seedRecords gives user one record of each kind on rental box1, started at
// t0-10h, and returns them as Records lists them (newest first).
func seedRecords(t *testing.T, db *sqlite.DB, user int64) []ledger.Record {
	t.Helper()
	ctx := context.Background()
	d := ledger.MustDecimal
	mustRent(t, db, user, "box1", at(-10*time.Hour))
	if _, err := db.AddCharge(ctx, act(user), "box1", ledger.Charge{Amount: d("5"), Note: "image", At: at(-4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddTopUp(ctx, act(user), ledger.TopUp{Platform: "autodl", Amount: d("100"), Currency: ledger.CNY, At: at(-3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordBalance(ctx, act(user), ledger.BalanceRecord{Platform: "autodl", Amount: d("80"), Currency: ledger.CNY, At: at(-2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddTraffic(ctx, act(user), "box1", ledger.TrafficUsage{Bytes: 12 << 30, Direction: ledger.Out, At: at(-1 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Records(ctx, user, ledger.RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("Records = %+v, want 4", recs)
	}
	return recs
}

func mustBook(t *testing.T, db *sqlite.DB, user int64) *ledger.Book {
	t.Helper()
	b, err := db.Book(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDB_Records(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	recs := seedRecords(t, db, 1)
	want := []ledger.RecordKind{ledger.RecordTraffic, ledger.RecordBalance, ledger.RecordTopUp, ledger.RecordCharge}
	for i, r := range recs {
		if r.Kind != want[i] || r.Ref == 0 || r.Platform != "autodl" {
			t.Errorf("record %d = %+v, want kind %s", i, r, want[i])
		}
	}
	if c := recs[3]; c.Rental != "box1" || c.Note != "image" || c.Amount.String() != "5" || c.Currency != ledger.CNY || !c.At.Equal(at(-4*time.Hour)) {
		t.Errorf("charge = %+v", c)
	}
	if u := recs[0]; u.Rental != "box1" || u.Bytes != 12<<30 || u.Dir != ledger.Out {
		t.Errorf("traffic = %+v", u)
	}
	// A balance the platform's API gave is not a typed record.
	if _, err := db.RecordPlatformBalance(ctx, ledger.BalanceRecord{UserID: 1, Platform: "autodl", Amount: ledger.MustDecimal("70"), Currency: ledger.CNY, At: at(-30 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		n    int
	}{{"", 4}, {"box1", 2}, {"autodl", 4}, {"nosuch", 0}} {
		got, err := db.Records(ctx, 1, ledger.RecordFilter{Name: tc.name})
		if err != nil || len(got) != tc.n {
			t.Errorf("Records(%q) = %d records (%v), want %d", tc.name, len(got), err, tc.n)
		}
	}
	if got, _ := db.Records(ctx, 1, ledger.RecordFilter{Limit: 1}); len(got) != 1 || got[0].Kind != ledger.RecordTraffic {
		t.Errorf("Records(limit 1) = %+v", got)
	}
	if got, err := db.Records(ctx, 2, ledger.RecordFilter{}); err != nil || len(got) != 0 {
		t.Errorf("user 2 sees %+v (%v)", got, err)
	}
}

func TestDB_DeleteRecord(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	recs := seedRecords(t, db, 1)
	for _, r := range recs {
		before := mustBook(t, db, 1)
		got, err := db.DeleteRecord(ctx, act(1), r.Ref)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("DeleteRecord(#%d) = %+v, %v; want %+v", r.Ref, got, err, r)
		}
		if reflect.DeepEqual(mustBook(t, db, 1), before) {
			t.Fatalf("DeleteRecord(#%d) left the book as it was", r.Ref)
		}
		left, _ := db.Records(ctx, 1, ledger.RecordFilter{})
		if len(left) != 3 {
			t.Fatalf("after deleting #%d: %+v", r.Ref, left)
		}
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != r.Kind.DeleteAction() || res.Name != "#"+itoa(r.Ref) {
			t.Fatalf("Undo = %+v, %v; want the deletion of #%d", res, err, r.Ref)
		}
		if after := mustBook(t, db, 1); !reflect.DeepEqual(after, before) {
			t.Fatalf("Undo of the deletion of #%d:\n%+v\nwant\n%+v", r.Ref, after, before)
		}
	}
	if got, _ := db.Records(ctx, 1, ledger.RecordFilter{}); !reflect.DeepEqual(got, recs) {
		t.Fatalf("after deletions undone: %+v, want %+v", got, recs)
	}

	t.Run("ErrNotFound", func(t *testing.T) {
		for _, tc := range []struct {
			user, ref int64
		}{{2, recs[0].Ref}, {2, recs[3].Ref}, {1, 999999}, {1, 1}} {
			unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.DeleteRecord(ctx, act(tc.user), tc.ref); return err })
		}
	})
	t.Run("Duplicate", func(t *testing.T) {
		if _, err := db.DeleteRecord(ctx, keyed(1, "del:1"), recs[0].Ref); err != nil {
			t.Fatal(err)
		}
		_, err := db.DeleteRecord(ctx, keyed(1, "del:1"), recs[0].Ref)
		wantCode(t, err, ledger.EDUPLICATE)
		if _, err := db.Undo(ctx, act(1)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("UndoneRecordIsGone", func(t *testing.T) {
		// Undo the records' own entries, newest first: each is then gone.
		for _, r := range recs {
			if _, err := db.Undo(ctx, act(1)); err != nil {
				t.Fatal(err)
			}
			unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.DeleteRecord(ctx, act(1), r.Ref); return err })
		}
	})
}

// A deleted record comes back under its reference even when its row's ID
// was taken since by a row that is not on the undo stack.
func TestDB_DeleteRecord_IDTaken(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	b, err := db.RecordBalance(ctx, act(1), ledger.BalanceRecord{Platform: "autodl", Amount: ledger.MustDecimal("80"), Currency: ledger.CNY, At: at(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := db.Records(ctx, 1, ledger.RecordFilter{})
	if _, err := db.DeleteRecord(ctx, act(1), recs[0].Ref); err != nil {
		t.Fatal(err)
	}
	api, err := db.RecordPlatformBalance(ctx, ledger.BalanceRecord{UserID: 1, Platform: "autodl", Amount: ledger.MustDecimal("70"), Currency: ledger.CNY, At: at(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if api.ID != b.ID {
		t.Logf("the API's balance took ID %d, not the deleted %d", api.ID, b.ID)
	}
	if _, err := db.Undo(ctx, act(1)); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Records(ctx, 1, ledger.RecordFilter{})
	if len(got) != 1 || !reflect.DeepEqual(got[0], recs[0]) {
		t.Fatalf("after undo: %+v, want %+v", got, recs[0])
	}
	if n := len(mustBook(t, db, 1).Balances); n != 2 {
		t.Fatalf("balances = %d, want the typed one and the API's", n)
	}
}

func TestDB_FixRecord(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	recs := seedRecords(t, db, 1)
	traffic, balance, topup, charge := recs[0], recs[1], recs[2], recs[3]
	d := func(s string) *ledger.Decimal { x := ledger.MustDecimal(s); return &x }
	note := func(s string) *string { return &s }

	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			r     ledger.Record
			fix   ledger.RecordFix
			check func(ledger.Record) bool
		}{
			{charge, ledger.RecordFix{Amount: d("6.5"), Note: note("image v2"), At: at(-5 * time.Hour)}, func(n ledger.Record) bool {
				return n.Amount.String() == "6.5" && n.Note == "image v2" && n.At.Equal(at(-5*time.Hour))
			}},
			{charge, ledger.RecordFix{Amount: d("-2"), Currency: ledger.CNY}, func(n ledger.Record) bool { return n.Amount.String() == "-2" }}, // a refund
			{topup, ledger.RecordFix{Amount: d("120")}, func(n ledger.Record) bool { return n.Amount.String() == "120" }},
			{balance, ledger.RecordFix{Amount: d("-3")}, func(n ledger.Record) bool { return n.Amount.String() == "-3" }}, // as /balance takes it
			{traffic, ledger.RecordFix{Bytes: 20 << 30, Dir: ledger.In}, func(n ledger.Record) bool { return n.Bytes == 20<<30 && n.Dir == ledger.In }},
		} {
			before := mustBook(t, db, 1)
			old, fixed, err := db.FixRecord(ctx, act(1), tc.r.Ref, tc.fix)
			if err != nil || !reflect.DeepEqual(old, tc.r) || !tc.check(fixed) || fixed.Ref != tc.r.Ref {
				t.Fatalf("FixRecord(#%d, %+v) = %+v, %+v, %v", tc.r.Ref, tc.fix, old, fixed, err)
			}
			got, _ := db.Records(ctx, 1, ledger.RecordFilter{})
			found := false
			for _, g := range got {
				if g.Ref == tc.r.Ref {
					found = reflect.DeepEqual(g, fixed)
				}
			}
			if !found {
				t.Fatalf("Records after the fix of #%d: %+v, want %+v", tc.r.Ref, got, fixed)
			}
			res, err := db.Undo(ctx, act(1))
			if err != nil || res.Kind != tc.r.Kind.FixAction() {
				t.Fatalf("Undo = %+v, %v", res, err)
			}
			if after := mustBook(t, db, 1); !reflect.DeepEqual(after, before) {
				t.Fatalf("Undo of the fix of #%d:\n%+v\nwant\n%+v", tc.r.Ref, after, before)
			}
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct {
			r   ledger.Record
			fix ledger.RecordFix
		}{
			{charge, ledger.RecordFix{}},
			{charge, ledger.RecordFix{Amount: d("0")}},
			{charge, ledger.RecordFix{Amount: d("5"), Currency: ledger.USD}},
			{charge, ledger.RecordFix{Bytes: 1 << 30}},
			{charge, ledger.RecordFix{At: at(-11 * time.Hour)}}, // before box1 started
			{charge, ledger.RecordFix{At: at(time.Minute)}},     // in the future
			{charge, ledger.RecordFix{Note: note(string(make([]rune, ledger.MaxNoteRunes+1)))}},
			{topup, ledger.RecordFix{Amount: d("-5")}},
			{topup, ledger.RecordFix{Amount: d("0")}},
			{topup, ledger.RecordFix{Note: note("x")}},
			{balance, ledger.RecordFix{Dir: ledger.In}},
			{traffic, ledger.RecordFix{Amount: d("3")}},
			{traffic, ledger.RecordFix{Dir: ledger.Both}},
			{traffic, ledger.RecordFix{Bytes: -1}},
			{traffic, ledger.RecordFix{At: at(-11 * time.Hour)}},
		} {
			unchanged(t, db, ledger.EINVALID, func() error { _, _, err := db.FixRecord(ctx, act(1), tc.r.Ref, tc.fix); return err })
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		unchanged(t, db, ledger.ENOTFOUND, func() error {
			_, _, err := db.FixRecord(ctx, act(2), charge.Ref, ledger.RecordFix{Amount: d("1")})
			return err
		})
		unchanged(t, db, ledger.ENOTFOUND, func() error {
			_, _, err := db.FixRecord(ctx, act(1), 999999, ledger.RecordFix{Amount: d("1")})
			return err
		})
	})
	t.Run("FixThenDeleteThenUndoBoth", func(t *testing.T) {
		before := mustBook(t, db, 1)
		if _, _, err := db.FixRecord(ctx, act(1), charge.Ref, ledger.RecordFix{Amount: d("9")}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteRecord(ctx, act(1), charge.Ref); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := db.Undo(ctx, act(1)); err != nil {
				t.Fatal(err)
			}
		}
		if after := mustBook(t, db, 1); !reflect.DeepEqual(after, before) {
			t.Fatalf("after undoing a fix and a deletion:\n%+v\nwant\n%+v", after, before)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
