package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

const (
	maxKeyEnc    = 4096 // a sealed API key is well under 200 bytes
	maxHint      = 4    // characters of the key shown back
	maxLastError = 1000 // bytes of a sync error kept
	maxPlatform  = 32
	// maxOutageKind bounds an outage's kind ("unavailable", "rate"),
	// as the column's CHECK does.
	maxOutageKind = 32
)

const connectorCols = `user_id, platform, key_enc, key_hint, added_at, checked_at, rejected_at, rejected_said, last_sync_at, last_error, outage_kind, outage_since`

// SaveConnector stores c, replacing the user's connector for its platform
// and clearing the replaced key's rejection, last sync, last error and
// outage (see ledger.ConnectorStore).
func (cs *Connections) SaveConnector(ctx context.Context, c ledger.Connector) error {
	if c.UserID == 0 {
		return ledger.Errorf(ledger.EINVALID, "connector: no user")
	}
	if err := checkPlatform(c.Platform); err != nil {
		return err
	}
	if len(c.KeyEnc) == 0 || len(c.KeyEnc) > maxKeyEnc {
		return ledger.Errorf(ledger.EINVALID, "connector %s: the sealed key is %d bytes (1..%d)", c.Platform, len(c.KeyEnc), maxKeyEnc)
	}
	if !utf8.ValidString(c.Hint) || utf8.RuneCountInString(c.Hint) > maxHint {
		// The hint's text is not echoed: it might be the whole key.
		return ledger.Errorf(ledger.EINVALID, "connector %s: the key hint is over %d characters", c.Platform, maxHint)
	}
	return cs.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := userByID(ctx, tx, c.UserID); err != nil {
			return err
		}
		added := c.AddedAt
		if added.IsZero() {
			added = cs.db.Now()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO connectors (user_id, platform, key_enc, key_hint, added_at, checked_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, platform) DO UPDATE SET
				key_enc = excluded.key_enc, key_hint = excluded.key_hint,
				added_at = excluded.added_at, checked_at = excluded.checked_at,
				rejected_at = NULL, rejected_said = 0, last_sync_at = NULL, last_error = '',
				outage_kind = '', outage_since = NULL`,
			c.UserID, c.Platform, c.KeyEnc, c.Hint, added.Unix(), nullUnix(c.CheckedAt)); err != nil {
			return fmt.Errorf("sqlite: save connector %s of user %d: %w", c.Platform, c.UserID, err)
		}
		return nil
	})
}

// Connectors returns the user's connectors by platform.
func (cs *Connections) Connectors(ctx context.Context, userID int64) ([]ledger.Connector, error) {
	return cs.connectors(ctx, `WHERE user_id = ? ORDER BY platform`, userID)
}

// AllConnectors returns every connector, by user then platform.
func (cs *Connections) AllConnectors(ctx context.Context) ([]ledger.Connector, error) {
	return cs.connectors(ctx, `ORDER BY user_id, platform`)
}

func (cs *Connections) connectors(ctx context.Context, where string, args ...any) ([]ledger.Connector, error) {
	return queryAll(ctx, cs.db.reader, "read connectors", scanConnector, `SELECT `+connectorCols+` FROM connectors `+where, args...)
}

func scanConnector(s scanner) (ledger.Connector, error) {
	var c ledger.Connector
	var added int64
	var checked, rejected, synced, outage sql.NullInt64
	var said int
	if err := s.Scan(&c.UserID, &c.Platform, &c.KeyEnc, &c.Hint, &added, &checked, &rejected, &said, &synced, &c.LastError, &c.Outage, &outage); err != nil {
		return c, err
	}
	c.AddedAt = time.Unix(added, 0).UTC()
	c.CheckedAt = fromNullUnix(checked)
	c.RejectedAt = fromNullUnix(rejected)
	c.RejectedSaid = said == 1
	c.LastSyncAt = fromNullUnix(synced)
	c.OutageSince = fromNullUnix(outage)
	return c, nil
}

// DeleteConnector removes the user's connector for platform. Errors:
// ENOTFOUND.
func (cs *Connections) DeleteConnector(ctx context.Context, userID int64, platform string) error {
	return cs.db.withWrite(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM connectors WHERE user_id = ? AND platform = ?`, userID, platform)
		if err != nil {
			return fmt.Errorf("sqlite: delete connector %s of user %d: %w", platform, userID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: delete connector %s of user %d: %w", platform, userID, err)
		} else if n == 0 {
			return noConnector(platform)
		}
		return nil
	})
}

// MarkRejected records the rejection of keyEnc and reports whether the
// user was told already (see ledger.ConnectorStore). Errors: ENOTFOUND,
// ECONFLICT (the key was replaced since the caller read it).
func (cs *Connections) MarkRejected(ctx context.Context, userID int64, platform string, keyEnc []byte, at time.Time) (bool, error) {
	var said bool
	err := cs.db.withWrite(ctx, func(tx *wtx) error {
		var stored []byte
		var s int
		err := tx.QueryRowContext(ctx, `SELECT key_enc, rejected_said FROM connectors WHERE user_id = ? AND platform = ?`, userID, platform).Scan(&stored, &s)
		if err == sql.ErrNoRows {
			return noConnector(platform)
		}
		if err != nil {
			return fmt.Errorf("sqlite: read connector %s of user %d: %w", platform, userID, err)
		}
		if !bytes.Equal(stored, keyEnc) {
			return ledger.Errorf(ledger.ECONFLICT, "the %s key was replaced since it was rejected", platform)
		}
		said = s == 1
		if _, err := tx.ExecContext(ctx, `UPDATE connectors SET rejected_at = COALESCE(rejected_at, ?), rejected_said = 1
			WHERE user_id = ? AND platform = ?`, whenOrNow(cs.db, at).Unix(), userID, platform); err != nil {
			return fmt.Errorf("sqlite: mark connector %s of user %d rejected: %w", platform, userID, err)
		}
		return nil
	})
	return said, err
}

// MarkSynced records the end of a sync round (see ledger.ConnectorStore).
// Errors: ENOTFOUND.
func (cs *Connections) MarkSynced(ctx context.Context, userID int64, platform string, at time.Time, errText string) error {
	return cs.db.withWrite(ctx, func(tx *wtx) error {
		found, err := markSynced(ctx, tx, whenOrNow(cs.db, at), userID, platform, errText)
		if err == nil && !found {
			err = noConnector(platform)
		}
		return err
	})
}

// MarkOutage records the outage the user was told of, or with kind ""
// that it was told over (see ledger.ConnectorStore). Errors: EINVALID,
// ENOTFOUND.
func (cs *Connections) MarkOutage(ctx context.Context, userID int64, platform, kind string, since time.Time) error {
	if len(kind) > maxOutageKind {
		return ledger.Errorf(ledger.EINVALID, "connector %s: the outage kind is over %d bytes", platform, maxOutageKind)
	}
	if kind == "" {
		since = time.Time{}
	} else {
		since = whenOrNow(cs.db, since)
	}
	return cs.db.withWrite(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE connectors SET outage_kind = ?, outage_since = ? WHERE user_id = ? AND platform = ?`,
			kind, nullUnix(since), userID, platform)
		if err != nil {
			return fmt.Errorf("sqlite: mark connector %s of user %d outage: %w", platform, userID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: mark connector %s of user %d outage: %w", platform, userID, err)
		} else if n == 0 {
			return noConnector(platform)
		}
		return nil
	})
}

// checkPlatform accepts a profile-key-like name: lowercase letters,
// digits, '-' and '_', 1 to 32 of them. The store does not list the
// platforms that have connectors: that is the wiring's business.
func checkPlatform(p string) error {
	if p == "" || len(p) > maxPlatform {
		return ledger.Errorf(ledger.EINVALID, "connector: the platform name must be 1 to %d characters", maxPlatform)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return ledger.Errorf(ledger.EINVALID, "connector: platform %q may use only lowercase letters, digits, '-' and '_'", p)
		}
	}
	return nil
}

func noConnector(platform string) error {
	return ledger.Errorf(ledger.ENOTFOUND, "%s is not connected: /connect lists your connections", platform)
}

func whenOrNow(db *DB, at time.Time) time.Time {
	if at.IsZero() {
		return db.Now()
	}
	return at
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
