package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_Undo_Stack applies one action of every kind, keeping the Book
// before each, then undoes them one by one: after each undo the Book must
// equal the one before the action it reversed.
func TestDB_Undo_Stack(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	d := ledger.MustDecimal
	steps := []struct {
		kind, name string
		do         func() error
	}{
		{"rent", "box1", func() error { _, err := db.CreateRental(ctx, act(1), box("box1", at(-10*time.Hour))); return err }},
		{"stop", "box1", func() error {
			_, err := db.AppendEvent(ctx, act(1), "box1", ledger.Event{Kind: ledger.EventStop, At: at(-9 * time.Hour)})
			return err
		}},
		{"resume", "box1", func() error {
			_, err := db.AppendEvent(ctx, act(1), "box1", ledger.Event{Kind: ledger.EventResume, At: at(-8 * time.Hour)})
			return err
		}},
		{"price", "box1", func() error {
			_, err := db.AppendEvent(ctx, act(1), "box1", ledger.Event{Kind: ledger.EventPrice, At: at(-7 * time.Hour), Price: ledger.Price{Amount: d("2.2"), Unit: ledger.UnitHour}})
			return err
		}},
		{"traffic", "box1", func() error {
			_, err := db.SetTraffic(ctx, act(1), "box1", ledger.TrafficTerms{Priced: true, PricePerGB: d("0.8")})
			return err
		}},
		{"traffic", "box1", func() error {
			_, err := db.SetTraffic(ctx, act(1), "box1", ledger.TrafficTerms{Priced: true, PricePerGB: d("0.9"), FreeGB: d("10")})
			return err
		}},
		{"traffic_usage", "box1", func() error {
			_, err := db.AddTraffic(ctx, act(1), "box1", ledger.TrafficUsage{Bytes: 3 << 30, At: at(-6 * time.Hour)})
			return err
		}},
		{"storage", "data1", func() error {
			_, err := db.CreateVolume(ctx, act(1), disk("data1", "box1", at(-6*time.Hour)))
			return err
		}},
		{"storage_resize", "data1", func() error {
			_, err := db.AppendVolumeEvent(ctx, act(1), "data1", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: at(-5 * time.Hour), SizeGB: d("300")})
			return err
		}},
		{"charge", "box1", func() error {
			_, err := db.AddCharge(ctx, act(1), "box1", ledger.Charge{Amount: d("5"), Note: "image"})
			return err
		}},
		{"topup", "autodl", func() error {
			_, err := db.AddTopUp(ctx, act(1), ledger.TopUp{Platform: "autodl", Amount: d("100"), Currency: ledger.CNY})
			return err
		}},
		{"balance", "autodl", func() error {
			_, err := db.RecordBalance(ctx, act(1), ledger.BalanceRecord{Platform: "autodl", Amount: d("80"), Currency: ledger.CNY})
			return err
		}},
		{"settings", "", func() error {
			_, err := db.UpdateUser(ctx, act(1), ledger.User{Lang: "zh", TZ: "UTC", Settings: ledger.DefaultSettings()})
			return err
		}},
		{"storage_delete", "data1", func() error {
			_, err := db.AppendVolumeEvent(ctx, act(1), "data1", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: at(-4 * time.Hour)})
			return err
		}},
		{"release", "box1", func() error {
			_, err := db.AppendEvent(ctx, act(1), "box1", ledger.Event{Kind: ledger.EventRelease, At: at(-3 * time.Hour)})
			return err
		}},
		// The names are free again: new rows with the old names.
		{"rent", "box1", func() error { _, err := db.CreateRental(ctx, act(1), box("box1", at(-2*time.Hour))); return err }},
		{"storage", "data1", func() error { _, err := db.CreateVolume(ctx, act(1), disk("data1", "", at(-2*time.Hour))); return err }},
	}
	book := func() *ledger.Book {
		t.Helper()
		b, err := db.Book(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var before []*ledger.Book
	for i, s := range steps {
		before = append(before, book())
		if err := s.do(); err != nil {
			t.Fatalf("step %d (%s): %v", i, s.kind, err)
		}
		// Another user's later actions never enter user 1's stack.
		if _, err := db.AddTopUp(ctx, act(2), ledger.TopUp{Platform: "x", Amount: d("1"), Currency: ledger.USD}); err != nil {
			t.Fatal(err)
		}
	}
	other, err := db.Book(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(steps) - 1; i >= 0; i-- {
		res, err := db.Undo(ctx, act(1))
		if err != nil {
			t.Fatalf("undo of step %d (%s): %v", i, steps[i].kind, err)
		}
		if string(res.Kind) != steps[i].kind || res.Name != steps[i].name || !res.At.Equal(t0) {
			t.Fatalf("undo of step %d = %+v, want kind %s name %s", i, res, steps[i].kind, steps[i].name)
		}
		if got := book(); !reflect.DeepEqual(got, before[i]) {
			t.Fatalf("after undoing step %d (%s) the book is\n%+v\nwant\n%+v", i, steps[i].kind, got, before[i])
		}
	}
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.Undo(ctx, act(1)); return err })
	if got, _ := db.Book(ctx, 2); !reflect.DeepEqual(got, other) {
		t.Fatalf("user 1's undo changed user 2's book")
	}
}

func TestDB_Undo(t *testing.T) {
	ctx := context.Background()
	t.Run("TwiceUndoesTheTwoMostRecent", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustRent(t, db, 1, "a", at(-time.Hour))
		mustRent(t, db, 1, "b", at(-time.Hour))
		mustEvent(t, db, 1, "a", ledger.EventStop, t0)
		for _, want := range []ledger.UndoResult{{Kind: "stop", Name: "a", At: t0}, {Kind: "rent", Name: "b", At: t0}} {
			got, err := db.Undo(ctx, act(1))
			got.RentalID = 0 // which rental is checked below
			if err != nil || got != want {
				t.Fatalf("Undo = %+v, %v; want %+v", got, err, want)
			}
		}
		rs, _ := db.RentalsByState(ctx, 1)
		if len(rs) != 1 || rs[0].Name != "a" || rs[0].State() != ledger.Running {
			t.Fatalf("after two undos: %v, want only a, running", rs)
		}
		acts, err := db.Actions(ctx, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		// undo, undo, stop, rent b, rent a; only "rent a" is still undoable.
		if len(acts) != 5 || acts[0].Kind != "undo" || acts[4].Kind != "rent" || !acts[4].Undoable || acts[2].Undoable {
			t.Fatalf("Actions = %+v", acts)
		}
	})
	t.Run("UndoneKeyStaysUsed", func(t *testing.T) {
		// A retried update must not redo an action that was applied and then undone.
		db := openDB(t)
		mustUser(t, db, 1)
		if _, err := db.CreateRental(ctx, keyed(1, "u1"), box("box1", t0)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Undo(ctx, keyed(1, "u2")); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.EDUPLICATE, func() error { _, err := db.CreateRental(ctx, keyed(1, "u1"), box("box1", t0)); return err })
		unchanged(t, db, ledger.EDUPLICATE, func() error { _, err := db.Undo(ctx, keyed(1, "u2")); return err })
	})
	t.Run("Errors", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.Undo(ctx, act(1)); return err })
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.Undo(ctx, act(2)); return err })
		unchanged(t, db, ledger.EINVALID, func() error { _, err := db.Undo(ctx, act(0)); return err })
	})
}

func TestDB_Book(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustRent(t, db, 1, "a", at(-5*time.Hour))
	mustRent(t, db, 1, "b", at(-5*time.Hour))
	mustEvent(t, db, 1, "a", ledger.EventStop, at(-4*time.Hour))
	mustEvent(t, db, 1, "b", ledger.EventRelease, at(-4*time.Hour))
	mustEvent(t, db, 1, "a", ledger.EventResume, at(-3*time.Hour))
	if _, err := db.AddTraffic(ctx, act(1), "a", ledger.TrafficUsage{Bytes: 10, At: at(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateVolume(ctx, act(1), disk("v", "a", at(-5*time.Hour))); err != nil {
		t.Fatal(err)
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b.User.ID != 1 || len(b.Rentals) != 2 || len(b.Volumes) != 1 {
		t.Fatalf("Book = %+v", b)
	}
	for _, r := range b.Rentals {
		want, err := db.Rental(ctx, 1, r.Name)
		if err != nil || !reflect.DeepEqual(r, want) {
			t.Fatalf("Book's %s =\n%+v\nRental gives\n%+v", r.Name, r, want)
		}
	}
	a := b.Rental("a")
	if a == nil || len(a.Events) != 3 || a.State() != ledger.Running || len(a.TrafficUsage) != 1 {
		t.Fatalf("a = %+v: events not attached to their rental", a)
	}
	if r := b.Rental("b"); r == nil || len(r.Events) != 2 || r.State() != ledger.Released {
		t.Fatalf("b = %+v", r)
	}
	if b.Volumes[0].RentalName != "a" || len(b.Volumes[0].Events) != 1 {
		t.Fatalf("volume = %+v", b.Volumes[0])
	}
	_, err = db.Book(ctx, 2)
	wantCode(t, err, ledger.ENOTFOUND)
}
