package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// genQuery reads the generation of one user's instances on one platform
// (migration 016's triggers move it).
const genQuery = `SELECT gen FROM platform_gen WHERE user_id = ? AND platform = ?`

// readGen reads the generation with q; 0 when there is no row yet.
func readGen(ctx context.Context, q querier, userID int64, platform string) (int64, error) {
	var gen int64
	err := q.QueryRowContext(ctx, genQuery, userID, platform).Scan(&gen)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: platform generation: %w", err)
	}
	return gen, nil
}

// PlatformGeneration returns the generation of the user's instances on
// platform: every insert, update or delete of one of them moves it (the
// triggers of migration 016, so a change from an /undo's trigger or from
// another process counts as well as the sync's own). 0: no row yet.
// Errors: EINVALID (a malformed platform).
func (ps *Platforms) PlatformGeneration(ctx context.Context, userID int64, platform string) (int64, error) {
	if err := checkPlatform(platform); err != nil {
		return 0, err
	}
	st, err := ps.db.readStmt(ctx, genQuery)
	if err != nil {
		return 0, storeError(fmt.Errorf("sqlite: platform generation: %w", err))
	}
	var gen int64
	switch err := st.QueryRowContext(ctx, userID, platform).Scan(&gen); err {
	case nil, sql.ErrNoRows:
		return gen, nil
	default:
		return 0, storeError(fmt.Errorf("sqlite: platform generation: %w", err))
	}
}

// PlatformInstancesGen returns PlatformInstances and the generation they
// are at, read in one snapshot. Errors: EINVALID (a malformed platform).
func (ps *Platforms) PlatformInstancesGen(ctx context.Context, userID int64, platform string) ([]ledger.PlatformInstance, int64, error) {
	if err := checkPlatform(platform); err != nil {
		return nil, 0, err
	}
	var (
		out []ledger.PlatformInstance
		gen int64
	)
	err := ps.db.withRead(ctx, func(tx *sql.Tx) error {
		var err error
		if gen, err = readGen(ctx, tx, userID, platform); err != nil {
			return err
		}
		out, err = platformInstances(ctx, tx, `user_id = ? AND platform = ?`, userID, platform)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, gen, nil
}

// FinishSyncRound ends one sync round of a connector in one transaction:
// each instance in end.Seen gets LastSeen end.SeenAt (truncated to
// seconds; never moved back; an ID the store does not hold is skipped),
// and the connector's round end is recorded as MarkSynced records it.
// One transaction per round instead of one per refreshed instance and
// one for the mark is what keeps a steady round cheap. It returns the
// generation after its writes, and current: the generation before them
// was end.Gen, so nothing but these refreshes changed the rows since the
// caller read them. Errors: EINVALID (a malformed platform), ENOTFOUND
// (no connector: the refreshes are committed all the same).
func (ps *Platforms) FinishSyncRound(ctx context.Context, end ledger.SyncRoundEnd) (int64, bool, error) {
	if err := checkPlatform(end.Platform); err != nil {
		return 0, false, err
	}
	seenUnix := unix(sec(end.SeenAt))
	var (
		found   bool
		current bool
		gen     int64
	)
	err := ps.db.withWrite(ctx, func(tx *wtx) error {
		var err error
		if gen, err = readGen(ctx, tx, end.UserID, end.Platform); err != nil {
			return err
		}
		current = gen == end.Gen
		for _, id := range end.Seen {
			if _, err := tx.ExecContext(ctx, `UPDATE platform_instances SET last_seen = ?
				WHERE user_id = ? AND platform = ? AND platform_id = ? AND last_seen < ?`,
				seenUnix, end.UserID, end.Platform, id, seenUnix); err != nil {
				return fmt.Errorf("sqlite: refresh last seen of %s instance %q: %w", end.Platform, id, err)
			}
		}
		if len(end.Seen) > 0 {
			if gen, err = readGen(ctx, tx, end.UserID, end.Platform); err != nil {
				return err
			}
		}
		found, err = markSynced(ctx, tx, whenOrNow(ps.db, end.SyncedAt), end.UserID, end.Platform, end.Err)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	if !found {
		return gen, current, noConnector(end.Platform)
	}
	return gen, current, nil
}

// markSynced records a round's end on the user's connector for platform
// and reports whether there is one.
func markSynced(ctx context.Context, tx *wtx, at time.Time, userID int64, platform, errText string) (bool, error) {
	errText = truncateUTF8(errText, maxLastError)
	t := at.Unix()
	res, err := tx.ExecContext(ctx, `UPDATE connectors SET last_sync_at = ?, last_error = ?,
			checked_at = CASE WHEN ? = '' THEN ? ELSE checked_at END
		WHERE user_id = ? AND platform = ?`, t, errText, errText, t, userID, platform)
	if err != nil {
		return false, fmt.Errorf("sqlite: mark connector %s of user %d synced: %w", platform, userID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: mark connector %s of user %d synced: %w", platform, userID, err)
	}
	return n > 0, nil
}
