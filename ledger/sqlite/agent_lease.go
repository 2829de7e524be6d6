package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gpuledger/gpuledger/ledger"
)

// LeaseEnd returns the rental's stored lease end, ok false if none.
func (ags *Agents) LeaseEnd(ctx context.Context, rentalID int64) (ledger.LeaseEnd, bool, error) {
	l := ledger.LeaseEnd{RentalID: rentalID}
	var ends int64
	err := ags.db.reader.QueryRowContext(ctx, `SELECT ends_at, release_at_end FROM lease_ends WHERE rental_id = ?`, rentalID).
		Scan(&ends, &l.ReleaseAtEnd)
	if err == sql.ErrNoRows {
		return l, false, nil
	}
	if err != nil {
		return l, false, storeError(fmt.Errorf("sqlite: lease end: %w", err))
	}
	l.EndsAt = fromUnix(ends)
	return l, true, nil
}

// SetLeaseEnd stores the rental's lease end. Errors: ENOTFOUND.
func (ags *Agents) SetLeaseEnd(ctx context.Context, l ledger.LeaseEnd) error {
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO lease_ends (rental_id, ends_at, release_at_end) VALUES (?, ?, ?)
			ON CONFLICT (rental_id) DO UPDATE SET ends_at = excluded.ends_at, release_at_end = excluded.release_at_end`,
			l.RentalID, unix(sec(l.EndsAt)), boolInt(l.ReleaseAtEnd))
		if isConstraint(err) {
			return ledger.Errorf(ledger.ENOTFOUND, "rental %d does not exist", l.RentalID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: set lease end: %w", err)
		}
		return nil
	})
}
