package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file keeps the sync's flood cards (ledger.SyncFlood) and declines
// a flood's instances in bounded transactions (migration 018).

// declineBatch is how many instances one transaction of
// DeclinePlatformInstances writes: a few milliseconds of the writer, so
// a chat write waiting behind it is not slowed noticeably.
const declineBatch = 200

// SyncFlood returns the user's flood card of platform. Errors: EINVALID
// (a malformed platform), ENOTFOUND.
func (ps *Platforms) SyncFlood(ctx context.Context, userID int64, platform string) (ledger.SyncFlood, error) {
	if err := checkPlatform(platform); err != nil {
		return ledger.SyncFlood{}, err
	}
	f := ledger.SyncFlood{UserID: userID, Platform: platform}
	var (
		state string
		since int64
	)
	err := ps.db.reader.QueryRowContext(ctx, `SELECT state, count, logged, message_id, text, since FROM sync_floods
		WHERE user_id = ? AND platform = ?`, userID, platform).Scan(&state, &f.Count, &f.Logged, &f.MessageID, &f.Text, &since)
	if err == sql.ErrNoRows {
		return f, ledger.Errorf(ledger.ENOTFOUND, "no %s flood card", platform)
	}
	if err != nil {
		return f, storeError(fmt.Errorf("sqlite: sync flood: %w", err))
	}
	f.State, f.Since = ledger.FloodState(state), fromUnix(since)
	return f, nil
}

// SaveSyncFlood inserts or replaces the card. Errors: EINVALID,
// ENOTFOUND ("not_registered").
func (ps *Platforms) SaveSyncFlood(ctx context.Context, f ledger.SyncFlood) error {
	if err := checkPlatform(f.Platform); err != nil {
		return err
	}
	switch f.State {
	case ledger.FloodOpen, ledger.FloodLogAll, ledger.FloodIgnore:
	default:
		return ledger.Errorf(ledger.EINVALID, "bad flood state %q", f.State)
	}
	if f.Count < 0 || f.Logged < 0 || f.MessageID < 0 {
		return ledger.Errorf(ledger.EINVALID, "a flood card's counts are not negative")
	}
	return ps.db.withWrite(ctx, func(tx *wtx) error {
		if err := userExists(ctx, tx, f.UserID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sync_floods (user_id, platform, state, count, logged, message_id, text, since)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, platform) DO UPDATE SET state = excluded.state, count = excluded.count,
				logged = excluded.logged, message_id = excluded.message_id, text = excluded.text, since = excluded.since`,
			f.UserID, f.Platform, string(f.State), f.Count, f.Logged, f.MessageID, f.Text, unix(sec(f.Since)))
		if err != nil {
			return fmt.Errorf("sqlite: save sync flood: %w", err)
		}
		return nil
	})
}

// DeleteSyncFlood removes the card; none is no error.
func (ps *Platforms) DeleteSyncFlood(ctx context.Context, userID int64, platform string) error {
	return ps.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sync_floods WHERE user_id = ? AND platform = ?`, userID, platform); err != nil {
			return fmt.Errorf("sqlite: delete sync flood: %w", err)
		}
		return nil
	})
}

// DeclinePlatformInstances saves ins as declined, declineBatch rows a
// transaction; a row the store holds already is left as it is. Every
// instance is checked before anything is written. Errors: EINVALID.
func (ps *Platforms) DeclinePlatformInstances(ctx context.Context, ins []ledger.PlatformInstance) (int, error) {
	if len(ins) == 0 {
		return 0, nil
	}
	for i := range ins {
		ins[i].Status, ins[i].RentalID = ledger.PlatformDeclined, 0
		if err := checkInstance(&ins[i], 0); err != nil {
			return 0, err
		}
		if ins[i].UserID != ins[0].UserID || ins[i].Platform != ins[0].Platform {
			return 0, ledger.Errorf(ledger.EINVALID, "the instances to decline are of one user and platform")
		}
	}
	n := 0
	for start := 0; start < len(ins); start += declineBatch {
		batch := ins[start:min(start+declineBatch, len(ins))]
		k := 0
		err := ps.db.withWrite(ctx, func(tx *wtx) error {
			k = 0
			if err := userExists(ctx, tx, batch[0].UserID); err != nil {
				return err
			}
			now := ps.db.now()
			for _, in := range batch {
				fs, ls := in.FirstSeen, in.LastSeen
				if fs.IsZero() {
					fs = now
				}
				if ls.IsZero() {
					ls = now
				}
				var price sql.NullString
				if in.PriceOK {
					price = sql.NullString{String: in.Price.String(), Valid: true}
				}
				res, err := tx.ExecContext(ctx, `INSERT INTO platform_instances (user_id, platform, platform_id, status,
						name, gpu, gpu_count, price, currency, state, first_seen, last_seen)
					VALUES (?, ?, ?, 'declined', ?, ?, ?, ?, ?, '', ?, ?)
					ON CONFLICT (user_id, platform, platform_id) DO NOTHING`,
					in.UserID, in.Platform, in.PlatformID, in.Name, in.GPU, in.GPUCount, price, string(in.Currency), unix(fs), unix(ls))
				if err != nil {
					return constraintError(err, "decline platform instance", "the platform instance breaks a rule of the store")
				}
				one, _ := res.RowsAffected()
				k += int(one)
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}
