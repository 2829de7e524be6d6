package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// confirm has rental r's agent confirm an order of action (stop or
// release) at when, as the agent hub records it.
func confirm(t *testing.T, db *sqlite.DB, r *ledger.Rental, id, action string, when time.Time) {
	t.Helper()
	ctx := context.Background()
	o := ledger.Order{ID: id, RentalID: r.ID, UserID: r.UserID, Rental: r.Name, Action: ledger.OrderAction(action), Origin: ledger.OriginAuto,
		IssuedAt: when.Add(-time.Minute), ExpiresAt: when.Add(10 * time.Minute), Nonce: "n-" + id}
	if _, err := db.CreateOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.State, o.Outcome, o.UpdatedAt = ledger.OrderDone, "done", when
	if _, _, err := db.UpdateOrder(ctx, o, &ledger.Event{Kind: ledger.EventKind(action), At: when}); err != nil {
		t.Fatal(err)
	}
}

func TestDB_Undo_AgentConfirmed(t *testing.T) {
	ctx := context.Background()
	t.Run("NotUndoable", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		r := mustRent(t, db, 1, "box1", t0)
		confirm(t, db, r, "o1", "stop", at(time.Hour))
		unchanged(t, db, ledger.ECONFLICT, func() error { _, err := db.Undo(ctx, act(1)); return err })
		acts, err := db.Actions(ctx, 1, 10)
		if err != nil || len(acts) != 2 || acts[0].Kind != "stop" || acts[0].Undoable {
			t.Fatalf("Actions = %+v, %v; want the agent's stop, not undoable", acts, err)
		}
	})
	t.Run("SkippedForAnotherRental", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		a := mustRent(t, db, 1, "a", t0)
		mustRent(t, db, 1, "b", at(time.Minute))
		confirm(t, db, a, "o1", "release", at(time.Hour))
		got, err := db.Undo(ctx, act(1))
		if err != nil || got.Kind != "rent" || got.Name != "b" {
			t.Fatalf("Undo = %+v, %v; want the rent of b (the agent's release of a is skipped)", got, err)
		}
		rl, err := db.RentalByID(ctx, a.ID)
		if err != nil || rl.State() != ledger.Released {
			t.Fatalf("a after undo = %+v, %v; want still released", rl, err)
		}
	})
	t.Run("ErrConflict/ownChangeBeneath", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		r := mustRent(t, db, 1, "box1", t0)
		mustEvent(t, db, 1, "box1", ledger.EventStop, at(time.Hour))
		mustEvent(t, db, 1, "box1", ledger.EventResume, at(2*time.Hour))
		confirm(t, db, r, "o1", "stop", at(3*time.Hour))
		// Undoing the resume would leave two stops in a row.
		unchanged(t, db, ledger.ECONFLICT, func() error { _, err := db.Undo(ctx, act(1)); return err })
	})
	t.Run("ErrConflict/rentBeneath", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		r := mustRent(t, db, 1, "box1", t0)
		confirm(t, db, r, "o1", "release", at(time.Hour))
		// Undoing the rent would delete a rental whose release is on record.
		unchanged(t, db, ledger.ECONFLICT, func() error { _, err := db.Undo(ctx, act(1)); return err })
	})
}
