package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gpuledger/gpuledger/ledger"
)

// Meta returns the value stored under key and whether it exists.
func (acc *Accounts) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := acc.db.reader.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, storeError(fmt.Errorf("sqlite: read meta %s: %w", key, err))
	}
	return v, true, nil
}

// SetMeta stores value under key, replacing any earlier value. It is not
// journaled (process state, not a user's action). Errors: EINVALID for an
// empty key.
func (acc *Accounts) SetMeta(ctx context.Context, key, value string) error {
	if key == "" {
		return ledger.Errorf(ledger.EINVALID, "meta key is empty")
	}
	return acc.db.withWrite(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		if err != nil {
			return fmt.Errorf("sqlite: write meta %s: %w", key, err)
		}
		return nil
	})
}
