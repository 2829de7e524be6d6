package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// listed returns an instance user's runpod connector listed as asked.
func listed(user int64, id string) ledger.PlatformInstance {
	return ledger.PlatformInstance{
		UserID: user, Platform: "runpod", PlatformID: id, Status: ledger.PlatformAsked,
		Name: "train", GPU: "RTX 4090", GPUCount: 2, Price: ledger.MustDecimal("0.69"), PriceOK: true,
		Currency: ledger.USD, State: "running", StateAt: t0, FirstSeen: t0, LastSeen: t0,
	}
}

// synced returns a rental to create from a listed instance.
func synced(name string, start time.Time) ledger.Rental {
	r := box(name, start)
	r.Platform, r.Currency, r.GPUCount = "runpod", ledger.USD, 2
	r.Price = ledger.Price{Amount: ledger.MustDecimal("0.69"), Unit: ledger.UnitHour}
	return r
}

func mustSync(t *testing.T, db *sqlite.DB, user int64, id, name string) (*ledger.Rental, ledger.PlatformInstance) {
	t.Helper()
	r, in, err := db.AddSyncedRental(context.Background(), act(user), listed(user, id), synced(name, t0))
	if err != nil {
		t.Fatalf("AddSyncedRental(%s): %v", id, err)
	}
	return r, in
}

func TestDB_AddSyncedRental(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		r, in := mustSync(t, db, 1, "pod-abc123", "train")
		if r.PlatformID != "pod-abc123" || in.Status != ledger.PlatformBound || in.RentalID != r.ID || in.ID == 0 {
			t.Fatalf("rental %+v, instance %+v: want bound to each other", r, in)
		}
		for name, load := range map[string]func() (*ledger.Rental, error){
			"Rental":             func() (*ledger.Rental, error) { return db.Rental(ctx, 1, "train") },
			"RentalByID":         func() (*ledger.Rental, error) { return db.RentalByID(ctx, r.ID) },
			"RentalByPlatformID": func() (*ledger.Rental, error) { return db.RentalByPlatformID(ctx, 1, "runpod", "pod-abc123") },
			"Book": func() (*ledger.Rental, error) {
				b, err := db.Book(ctx, 1)
				if err != nil {
					return nil, err
				}
				return b.Rentals[0], nil
			},
			"LiveRentals": func() (*ledger.Rental, error) {
				rs, err := db.LiveRentals(ctx)
				if err != nil {
					return nil, err
				}
				return rs[0], nil
			},
		} {
			got, err := load()
			if err != nil || got.PlatformID != "pod-abc123" {
				t.Errorf("%s: PlatformID = %q, %v; want pod-abc123", name, got.PlatformID, err)
			}
		}
		ins, err := db.PlatformInstances(ctx, 1, "runpod")
		if err != nil || len(ins) != 1 || ins[0] != in {
			t.Fatalf("PlatformInstances = %+v, %v; want [%+v]", ins, err, in)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustSync(t, db, 1, "pod-abc123", "train")
		_, _, err := db.AddSyncedRental(ctx, act(1), listed(1, "pod-abc123"), synced("train2", t0))
		wantCode(t, err, ledger.ECONFLICT)
	})
	t.Run("ErrDuplicate", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		a := keyed(1, "sync:runpod:pod-1")
		if _, _, err := db.AddSyncedRental(ctx, a, listed(1, "pod-1"), synced("a", t0)); err != nil {
			t.Fatal(err)
		}
		_, _, err := db.AddSyncedRental(ctx, a, listed(1, "pod-2"), synced("b", t0))
		wantCode(t, err, ledger.EDUPLICATE)
		if ins, _ := db.PlatformInstances(ctx, 1, "runpod"); len(ins) != 1 {
			t.Fatalf("a retried sync stored %d instances, want 1", len(ins))
		}
	})
}

func TestDB_SavePlatformInstance(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	in, err := db.SavePlatformInstance(ctx, listed(1, "pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	in.State, in.StateAt, in.LastSeen = "stopped", at(time.Hour), at(time.Hour)
	in.FirstSeen = at(time.Hour) // the first one is kept
	got, err := db.SavePlatformInstance(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != in.ID || got.State != "stopped" || !got.FirstSeen.Equal(t0) || !got.LastSeen.Equal(at(time.Hour)) {
		t.Fatalf("after update: %+v", got)
	}
}

func TestDB_CreateRental_PlatformID(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := synced("train", t0)
	r.PlatformID = "pod-9"
	got, err := db.CreateRental(ctx, act(1), r)
	if err != nil || got.PlatformID != "pod-9" {
		t.Fatalf("CreateRental = %+v, %v", got, err)
	}
}
