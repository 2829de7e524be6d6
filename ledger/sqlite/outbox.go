package sqlite

import (
	"context"
	"fmt"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.OutboxStore: the notices written in the
// transaction of the change they report, sent after it commits and
// deleted once sent, so a crash between the commit and the send loses
// nothing (migration 018).

// checkNotice validates n and renders it for the rental r (nil: none).
func checkNotice(n *ledger.Notice, r *ledger.Rental) (string, error) {
	if n.Topic == "" || len(n.Topic) > 64 {
		return "", ledger.Errorf(ledger.EINVALID, "a notice needs a topic of 1 to 64 bytes")
	}
	if n.Text == nil {
		return "", ledger.Errorf(ledger.EINVALID, "a notice needs a text")
	}
	text := n.Text(r)
	if text == "" || len(text) > ledger.MaxOutboxText {
		return "", ledger.Errorf(ledger.EINVALID, "a notice's text must be 1 to %d bytes, not %d", ledger.MaxOutboxText, len(text))
	}
	return text, nil
}

// writeOutbox writes n for userID in tx, rendered for r, and returns the
// item as stored.
func (ns *Notices) writeOutbox(ctx context.Context, tx querier, userID int64, n *ledger.Notice, r *ledger.Rental) (ledger.OutboxItem, error) {
	text, err := checkNotice(n, r)
	if err != nil {
		return ledger.OutboxItem{}, err
	}
	it := ledger.OutboxItem{UserID: userID, Topic: n.Topic, Text: text, Silent: n.Silent, At: ns.db.now()}
	res, err := tx.ExecContext(ctx, `INSERT INTO outbox (user_id, topic, text, silent, created_at) VALUES (?, ?, ?, ?, ?)`,
		userID, it.Topic, it.Text, boolInt(it.Silent), unix(it.At))
	if err != nil {
		return it, fmt.Errorf("sqlite: write outbox: %w", err)
	}
	it.ID, err = res.LastInsertId()
	return it, err
}

// Outbox returns the user's pending items of topic, oldest first, at
// most limit (1..1000; others are 100).
func (ns *Notices) Outbox(ctx context.Context, userID int64, topic string, limit int) ([]ledger.OutboxItem, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	return queryAll(ctx, ns.db.reader, "outbox", func(rows scanner) (ledger.OutboxItem, error) {
		var (
			it     ledger.OutboxItem
			silent bool
			at     int64
		)
		if err := rows.Scan(&it.ID, &it.UserID, &it.Topic, &it.Text, &silent, &at); err != nil {
			return it, err
		}
		it.Silent, it.At = silent, fromUnix(at)
		return it, nil
	}, `SELECT id, user_id, topic, text, silent, created_at FROM outbox
		WHERE user_id = ? AND topic = ? ORDER BY id LIMIT ?`, userID, topic, limit)
}

// SentOutbox deletes item id; one already gone is no error.
func (ns *Notices) SentOutbox(ctx context.Context, id int64) error {
	return ns.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE id = ?`, id); err != nil {
			return fmt.Errorf("sqlite: sent outbox %d: %w", id, err)
		}
		return nil
	})
}

// Tell writes n for userID alone (its Text is called with a nil
// rental). Errors: EINVALID (checkNotice), ENOTFOUND ("not_registered").
func (ns *Notices) Tell(ctx context.Context, userID int64, n ledger.Notice) (ledger.OutboxItem, error) {
	var it ledger.OutboxItem
	err := ns.db.withWrite(ctx, func(tx *wtx) error {
		if err := userExists(ctx, tx, userID); err != nil {
			return err
		}
		var err error
		it, err = ns.writeOutbox(ctx, tx, userID, &n, nil)
		return err
	})
	return it, err
}

// noTell refuses a notice on an action whose method does not write one.
func noTell(a ledger.Action) error {
	if a.Tell != nil {
		return ledger.Errorf(ledger.EINVALID, "this change does not take a notice")
	}
	return nil
}
