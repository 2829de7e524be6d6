package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_RentalRef: a reused name leaves the older rental reachable by its
// address, NAME@DATE in the user's zone (Asia/Shanghai here), and only
// that rental changes.
func TestDB_RentalRef(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	// 2026-10-29 17:00Z is Oct 30 01:00 in Shanghai: the address's day is the user's.
	old := mustRent(t, db, 1, "yolo", at(-57*time.Hour))
	mustEvent(t, db, 1, "yolo", ledger.EventRelease, at(-40*time.Hour))
	newer := mustRent(t, db, 1, "yolo", at(-20*time.Hour))
	other := mustRent(t, db, 2, "yolo", at(-57*time.Hour))

	t.Run("Find", func(t *testing.T) {
		for ref, want := range map[string]int64{"yolo": newer.ID, "yolo@2026-10-30": old.ID, "yolo@2026-10-30#1": old.ID, "yolo@2026-10-31": newer.ID} {
			got, err := db.Rental(ctx, 1, ref)
			if err != nil || got.ID != want {
				t.Errorf("Rental(%s) = %v, %v; want rental %d", ref, got, err, want)
			}
		}
		rs, err := db.RentalsNamed(ctx, 1, "yolo")
		if err != nil || len(rs) != 2 || rs[0].ID != old.ID || rs[1].ID != newer.ID {
			t.Fatalf("RentalsNamed = %v, %v", rs, err)
		}
	})
	t.Run("PriceOfTheOlder", func(t *testing.T) {
		ev := ledger.Event{Kind: ledger.EventPrice, At: old.StartedAt(), Price: ledger.Price{Amount: ledger.MustDecimal("2.50"), Unit: ledger.UnitHour}}
		got, err := db.SetPriceAt(ctx, act(1), "yolo@2026-10-30", ev)
		if err != nil {
			t.Fatalf("SetPriceAt(yolo@2026-10-30): %v", err)
		}
		if got.ID != old.ID {
			t.Fatalf("SetPriceAt changed rental %d, want the older %d", got.ID, old.ID)
		}
		n, _ := db.Rental(ctx, 1, "yolo")
		if len(n.Events) != len(newer.Events) {
			t.Fatalf("the newer yolo changed too: %+v", n.Events)
		}
		o, _ := db.Rental(ctx, 1, "yolo@2026-10-30")
		if len(o.Events) != 3 || o.Events[1].Kind != ledger.EventPrice {
			t.Fatalf("the older yolo's events = %+v, want its price change", o.Events)
		}
		if _, err := db.Undo(ctx, act(1)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Bad", func(t *testing.T) {
		before, _ := db.Book(ctx, 1)
		cases := map[string]string{
			"yolo@2026-13-45": ledger.EINVALID, "yolo@": ledger.EINVALID, "yolo@2026-10-30#0": ledger.EINVALID,
			"yolo@2026-10-30#x": ledger.EINVALID, "@2026-10-30": ledger.EINVALID, "yolo@2026-10-29": ledger.ENOTFOUND,
			"yolo@2026-10-30#2": ledger.ENOTFOUND, "nope@2026-10-30": ledger.ENOTFOUND,
		}
		for ref, code := range cases {
			if _, err := db.AppendEvent(ctx, act(1), ref, ledger.Event{Kind: ledger.EventStop, At: t0}); ledger.ErrorCode(err) != code {
				t.Errorf("AppendEvent(%s) = %v, want %s", ref, err, code)
			}
			if _, err := db.Rental(ctx, 1, ref); ledger.ErrorCode(err) != code {
				t.Errorf("Rental(%s) = %v, want %s", ref, err, code)
			}
		}
		// The older one is released: an address does not revive it.
		if _, err := db.AppendEvent(ctx, act(1), "yolo@2026-10-30", ledger.Event{Kind: ledger.EventResume, At: t0}); err == nil {
			t.Error("resumed a released rental by its address")
		}
		after, _ := db.Book(ctx, 1)
		if len(after.Rentals) != len(before.Rentals) || len(after.Rentals[1].Events) != len(before.Rentals[1].Events) ||
			len(after.Rentals[0].Events) != len(before.Rentals[0].Events) {
			t.Fatal("a refused address changed the ledger")
		}
	})
	t.Run("NeverAnotherUsers", func(t *testing.T) {
		// User 2's yolo started the same instant; user 1's address finds user 1's.
		got, err := db.Rental(ctx, 1, "yolo@2026-10-30")
		if err != nil || got.ID == other.ID {
			t.Fatalf("Rental = %v, %v", got, err)
		}
		mustUser(t, db, 3)
		if _, err := db.Rental(ctx, 3, "yolo@2026-10-30"); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("user 3 reached someone's yolo: %v", err)
		}
		if _, err := db.SetPriceAt(ctx, act(3), "yolo@2026-10-30", ledger.Event{Kind: ledger.EventPrice, At: other.StartedAt(), Price: ledger.Price{Amount: ledger.MustDecimal("9"), Unit: ledger.UnitHour}}); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("user 3 priced someone's yolo: %v", err)
		}
	})
	t.Run("SameDay", func(t *testing.T) {
		mustEvent(t, db, 1, "yolo", ledger.EventRelease, at(-19*time.Hour))
		third := mustRent(t, db, 1, "yolo", at(-18*time.Hour))
		got, err := db.Rental(ctx, 1, "yolo@2026-10-31#2")
		if err != nil || got.ID != third.ID {
			t.Fatalf("Rental(yolo@2026-10-31#2) = %v, %v; want %d", got, err, third.ID)
		}
		if got, _ := db.Rental(ctx, 1, "yolo@2026-10-31"); got.ID != newer.ID {
			t.Fatalf("Rental(yolo@2026-10-31) = %d, want the first of the day %d", got.ID, newer.ID)
		}
	})
}
