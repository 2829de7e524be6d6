package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_NextUndo: NextUndo names what Undo would reverse, with how it
// came (Via), whether anything but questions, refusals, undone changes
// and undos came after it (Last), and whether the user's latest entry is
// a refusal (AfterRefusal); it changes nothing.
func TestDB_NextUndo(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	if _, err := db.NextUndo(ctx, 1); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("NextUndo of an empty journal: %v, want ENOTFOUND", err)
	}
	typed := ledger.Action{UserID: 1, At: t0, Via: ledger.ViaCommand}
	r := ledger.Rental{Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}}
	created, err := db.CreateRental(ctx, typed, r)
	if err != nil {
		t.Fatal(err)
	}
	stop := typed
	stop.At = at(2 * time.Minute)
	if _, err := db.AppendEvent(ctx, stop, "t1", ledger.Event{Kind: ledger.EventStop, At: stop.At}); err != nil {
		t.Fatal(err)
	}
	next := func(want ledger.UndoNext) ledger.UndoNext {
		t.Helper()
		got, err := db.NextUndo(ctx, 1)
		want.ID, want.RentalID = got.ID, created.ID // the rental it changed
		if err != nil || got != want {
			t.Fatalf("NextUndo = %+v, %v; want %+v", got, err, want)
		}
		return got
	}
	n := next(ledger.UndoNext{Kind: ledger.ActionStop, Name: "t1", At: stop.At, Via: ledger.ViaCommand, Last: true})

	// A question and another user's change are not after it.
	if err := db.MarkHandled(ctx, ledger.Action{UserID: 1, At: t0, Key: "q1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Note(ctx, ledger.Action{UserID: 2, At: t0}, ledger.ActionNoUndo); err != nil {
		t.Fatal(err)
	}
	next(ledger.UndoNext{Kind: ledger.ActionStop, Name: "t1", At: stop.At, Via: ledger.ViaCommand, Last: true})
	// A refusal is the latest entry, without a key too.
	if err := db.Note(ctx, ledger.Action{UserID: 1, At: t0}, ledger.ActionRefused); err != nil {
		t.Fatal(err)
	}
	next(ledger.UndoNext{Kind: ledger.ActionStop, Name: "t1", At: stop.At, Via: ledger.ViaCommand, Last: true, AfterRefusal: true})
	// A change Undo cannot reverse comes after it.
	if err := db.Note(ctx, ledger.Action{UserID: 1, At: t0}, ledger.ActionNoUndo); err != nil {
		t.Fatal(err)
	}
	next(ledger.UndoNext{Kind: ledger.ActionStop, Name: "t1", At: stop.At, Via: ledger.ViaCommand})
	if got, _ := db.NextUndo(ctx, 1); got.ID != n.ID {
		t.Fatalf("NextUndo moved: %d, want %d", got.ID, n.ID)
	}
	// Note refuses other kinds, a repeated key, and an unknown way.
	if err := db.Note(ctx, ledger.Action{UserID: 1, At: t0}, ledger.ActionStop); ledger.ErrorCode(err) != ledger.EINVALID {
		t.Fatalf("Note(stop) = %v, want EINVALID", err)
	}
	if err := db.Note(ctx, ledger.Action{UserID: 1, At: t0, Key: "q1"}, ledger.ActionRefused); ledger.ErrorCode(err) != ledger.EDUPLICATE {
		t.Fatalf("Note with a recorded key = %v, want EDUPLICATE", err)
	}
	if err := db.Note(ctx, ledger.Action{UserID: 1, At: t0, Via: "robot"}, ledger.ActionRefused); ledger.ErrorCode(err) != ledger.EINVALID {
		t.Fatalf("Note via robot = %v, want EINVALID", err)
	}
}

// TestDB_UndoAction: UndoAction reverses the entry it names only while
// Undo would reverse it: a second call (a second press of one button) and
// a call after another change came on top undo nothing.
func TestDB_UndoAction(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	mustRent(t, db, 1, "a", at(-time.Hour))
	mustEvent(t, db, 1, "a", ledger.EventStop, t0)
	n, err := db.NextUndo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Another user cannot name it.
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.UndoAction(ctx, act(2), n.ID); return err })
	// Another change on top: stale.
	mustRent(t, db, 1, "b", t0)
	unchanged(t, db, ledger.ECONFLICT, func() error { _, err := db.UndoAction(ctx, act(1), n.ID); return err })
	if _, err := db.UndoAction(ctx, act(1), n.ID); errorKey(err) != "undo_stale" {
		t.Fatalf("UndoAction beneath a later change: %v, want undo_stale", err)
	}
	if _, err := db.Undo(ctx, act(1)); err != nil { // b goes
		t.Fatal(err)
	}
	res, err := db.UndoAction(ctx, act(1), n.ID)
	if err != nil || res.Kind != ledger.ActionStop || res.Name != "a" || res.RentalID == 0 {
		t.Fatalf("UndoAction = %+v, %v", res, err)
	}
	if x, err := db.Rental(ctx, 1, "a"); err != nil || x.State() != ledger.Running {
		t.Fatalf("a after its stop was undone: %v, %v", x, err)
	}
	// Again: undone already, and the rent of a beneath it stays.
	unchanged(t, db, ledger.ECONFLICT, func() error { _, err := db.UndoAction(ctx, act(1), n.ID); return err })
	if _, err := db.UndoAction(ctx, act(1), n.ID); errorKey(err) != "undo_done" {
		t.Fatalf("a second UndoAction: %v, want undo_done", err)
	}
}

func errorKey(err error) string {
	if e, ok := err.(*ledger.Error); ok {
		return e.Key
	}
	return ""
}
