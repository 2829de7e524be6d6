package sqlite

import (
	"context"
	"fmt"

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
	return changeFound(ctx, db, a, kind, name, findRental, func(r *ledger.Rental) (int64, int64) { return r.ID, 0 }, change)
}

// changeVolume is changeRental for the user's volume called name
// (findVolume: the live one, or else the latest deleted one).
func changeVolume(ctx context.Context, db *DB, a ledger.Action, kind ledger.ActionKind, name string,
	change func(tx *wtx, j journal, v *ledger.Volume) (after *ledger.Volume, prev any, err error)) (*ledger.Volume, error) {
	return changeFound(ctx, db, a, kind, name, findVolume, func(v *ledger.Volume) (int64, int64) { return 0, v.ID }, change)
}

// changeFound is changeRental and changeVolume: find loads what the action
// changes, target says which rental or volume the journal row names.
func changeFound[T any](ctx context.Context, db *DB, a ledger.Action, kind ledger.ActionKind, name string,
	find func(ctx context.Context, q querier, userID int64, name string) (T, error),
	target func(T) (rentalID, volumeID int64),
	change func(tx *wtx, j journal, x T) (after T, prev any, err error)) (T, error) {
	return journaled(ctx, db, a, kind, name, func(tx *wtx, j journal) (T, error) {
		var zero T
		x, err := find(ctx, tx, j.userID, name)
		if err != nil {
			return zero, err
		}
		if err := mayChange(ctx, tx, a, recordName(x, name), recordOwner(x)); err != nil {
			return zero, err
		}
		after, prev, err := change(tx, j, x)
		if err != nil {
			return zero, err
		}
		rentalID, volumeID := target(x)
		if err := j.target(ctx, tx, rentalID, volumeID, prev); err != nil {
			return zero, err
		}
		return after, nil
	})
}

// recordOwner is the owner of a rental or volume changeFound loaded (0
// for anything else: no owner to check).
func recordOwner(x any) int64 {
	switch v := x.(type) {
	case *ledger.Rental:
		return v.Owner
	case *ledger.Volume:
		return v.Owner
	}
	return 0
}

// recordName is the name a refusal gives the record x, else name.
func recordName(x any, name string) string {
	switch v := x.(type) {
	case *ledger.Rental:
		return v.Name
	case *ledger.Volume:
		return v.Name
	}
	return name
}

// reloadVolume reads volume id back inside the transaction that changed it.
func reloadVolume(ctx context.Context, tx querier, id int64) (*ledger.Volume, error) {
	vs, err := loadVolumes(ctx, tx, `v.id = ?`, id)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// queryAll runs a read query and scans each of its rows with scan: the
// loop every list of the store shares. Its errors name what is read
// ("sqlite: open cards: ...") and pass through storeError.
func queryAll[T any](ctx context.Context, q querier, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: %s: %w", what, err))
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, storeError(fmt.Errorf("sqlite: %s: %w", what, err))
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(fmt.Errorf("sqlite: %s: %w", what, err))
	}
	return out, nil
}
