package sqlite

import (
	"context"

	"github.com/gpuledger/gpuledger/ledger"
)

// journaled is the one skeleton of an undoable write: in one write
// transaction it journals the action (beginAction: the journal row comes
// first, so a retried action is EDUPLICATE before anything else is looked
// at), runs write with the journal row, and commits; any error rolls all
// of it back and reaches the caller unchanged, with a zero result.
//
// write may run twice (a write that failed on a full disk is retried, see
// withTx): it must set its result afresh and keep no other effect between
// runs.
func journaled[T any](ctx context.Context, db *DB, a ledger.Action, kind ledger.ActionKind, name string, write func(tx *wtx, j journal) (T, error)) (T, error) {
	var out T
	err := db.withWrite(ctx, func(tx *wtx) error {
		j, err := db.beginAction(ctx, tx, a, kind, name, true, true)
		if err != nil {
			return err
		}
		out, err = write(tx, j)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// changeRental is the journaled change of the user's rental called name
// (findRental: the unreleased one, or else the latest released one).
// change checks and writes, and returns the rental as it is after the
// change and what the journal keeps for Undo to restore (nil: nothing, the
// rows the action added are what Undo removes); the journal row then
// names the rental.
func changeRental(ctx context.Context, db *DB, a ledger.Action, kind ledger.ActionKind, name string,
	change func(tx *wtx, j journal, r *ledger.Rental) (after *ledger.Rental, prev any, err error)) (*ledger.Rental, error) {
	return journaled(ctx, db, a, kind, name, func(tx *wtx, j journal) (*ledger.Rental, error) {
		r, err := findRental(ctx, tx, j.userID, name)
		if err != nil {
			return nil, err
		}
		after, prev, err := change(tx, j, r)
		if err != nil {
			return nil, err
		}
		if err := j.target(ctx, tx, r.ID, 0, prev); err != nil {
			return nil, err
		}
		return after, nil
	})
}

// changeVolume is changeRental for the user's volume called name
// (findVolume: the live one, or else the latest deleted one).
func changeVolume(ctx context.Context, db *DB, a ledger.Action, kind ledger.ActionKind, name string,
	change func(tx *wtx, j journal, v *ledger.Volume) (after *ledger.Volume, prev any, err error)) (*ledger.Volume, error) {
	return journaled(ctx, db, a, kind, name, func(tx *wtx, j journal) (*ledger.Volume, error) {
		v, err := findVolume(ctx, tx, j.userID, name)
		if err != nil {
			return nil, err
		}
		after, prev, err := change(tx, j, v)
		if err != nil {
			return nil, err
		}
		if err := j.target(ctx, tx, 0, v.ID, prev); err != nil {
			return nil, err
		}
		return after, nil
	})
}

// reloadVolume reads volume id back inside the transaction that changed it.
func reloadVolume(ctx context.Context, tx querier, id int64) (*ledger.Volume, error) {
	vs, err := loadVolumes(ctx, tx, `v.id = ?`, id)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}
