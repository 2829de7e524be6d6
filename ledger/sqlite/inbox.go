package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// InboxAdd stores the entries not stored yet and sets meta offsetKey to
// offset in the same transaction (see ledger.InboxStore).
func (ib *Inbox) InboxAdd(ctx context.Context, entries []ledger.InboxEntry, offsetKey, offset string) error {
	if offsetKey == "" {
		return ledger.Errorf(ledger.EINVALID, "inbox: the offset key is empty")
	}
	return ib.db.withWrite(ctx, func(tx *wtx) error {
		for _, e := range entries {
			if e.UserID == 0 {
				return ledger.Errorf(ledger.EINVALID, "inbox: update %d has no user", e.ID)
			}
			sent := int64(0)
			if !e.SentAt.IsZero() {
				sent = e.SentAt.Unix()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO inbox (update_id, user_id, chat_id, sent_at, payload) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (update_id) DO NOTHING`, e.ID, e.UserID, e.ChatID, sent, e.Payload); err != nil {
				return fmt.Errorf("sqlite: store update %d: %w", e.ID, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, offsetKey, offset); err != nil {
			return fmt.Errorf("sqlite: write meta %s: %w", offsetKey, err)
		}
		return nil
	})
}

// InboxUsers returns the users with entries not handled yet.
func (ib *Inbox) InboxUsers(ctx context.Context) ([]int64, error) {
	rows, err := ib.db.reader.QueryContext(ctx, `SELECT DISTINCT user_id FROM inbox WHERE handled = 0 ORDER BY user_id`)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: inbox users: %w", err))
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, storeError(fmt.Errorf("sqlite: inbox users: %w", err))
		}
		out = append(out, id)
	}
	return out, storeError(rows.Err())
}

// InboxNext returns up to limit of the user's unhandled entries after the
// ID after, in ID order.
func (ib *Inbox) InboxNext(ctx context.Context, userID, after int64, limit int) ([]ledger.InboxEntry, error) {
	return ib.inboxQuery(ctx, `WHERE handled = 0 AND user_id = ? AND update_id > ? ORDER BY update_id LIMIT ?`, userID, after, max(limit, 1))
}

// InboxUnsent returns the handled entries whose reply is still to send.
func (ib *Inbox) InboxUnsent(ctx context.Context) ([]ledger.InboxEntry, error) {
	return ib.inboxQuery(ctx, `WHERE handled = 1 ORDER BY update_id`)
}

func (ib *Inbox) inboxQuery(ctx context.Context, where string, args ...any) ([]ledger.InboxEntry, error) {
	rows, err := ib.db.reader.QueryContext(ctx, `SELECT update_id, user_id, chat_id, sent_at, payload, handled, reply FROM inbox `+where, args...)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: read inbox: %w", err))
	}
	defer rows.Close()
	var out []ledger.InboxEntry
	for rows.Next() {
		var e ledger.InboxEntry
		var sent int64
		var handled int
		if err := rows.Scan(&e.ID, &e.UserID, &e.ChatID, &sent, &e.Payload, &handled, &e.Reply); err != nil {
			return nil, storeError(fmt.Errorf("sqlite: read inbox: %w", err))
		}
		if sent != 0 {
			e.SentAt = time.Unix(sent, 0).UTC()
		}
		e.Handled = handled == 1
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(fmt.Errorf("sqlite: read inbox: %w", err))
	}
	return out, nil
}

// InboxHandled marks the entry handled with its reply, or deletes it when
// reply is empty.
func (ib *Inbox) InboxHandled(ctx context.Context, id int64, reply string) error {
	return ib.db.withWrite(ctx, func(tx *wtx) error {
		var err error
		if reply == "" {
			_, err = tx.ExecContext(ctx, `DELETE FROM inbox WHERE update_id = ?`, id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE inbox SET handled = 1, reply = ?, payload = '' WHERE update_id = ?`, reply, id)
		}
		if err != nil {
			return fmt.Errorf("sqlite: mark update %d handled: %w", id, err)
		}
		return nil
	})
}

// InboxDelete deletes the entries with the given IDs.
func (ib *Inbox) InboxDelete(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return ib.db.withTx(ctx, func(tx *sql.Tx) error {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		q := `DELETE FROM inbox WHERE update_id IN (?` + strings.Repeat(",?", len(ids)-1) + `)`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("sqlite: delete answered updates: %w", err)
		}
		return nil
	})
}

// ScrubDeleted wipes from the database's files what was deleted or
// overwritten: the pages (zeroed by secure_delete, set on every
// connection) are checkpointed from the write-ahead log into the database
// file, and the log is truncated to zero bytes, since an old frame of the
// log still holds a row's earlier content until it is overwritten. The
// Telegram transport calls it after dropping the stored text of an update
// that held a secret. It waits for readers (busy_timeout) and returns
// EUNAVAILABLE if the log could not be emptied.
func (db *DB) ScrubDeleted(ctx context.Context) error {
	var busy, logFrames, done int
	if err := db.writer.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return storeError(fmt.Errorf("sqlite: checkpoint the log: %w", err))
	}
	if busy != 0 {
		return ledger.Errorf(ledger.EUNAVAILABLE, "sqlite: the log could not be emptied: a reader held it (%d of %d frames checkpointed)", done, logFrames)
	}
	return nil
}
