package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.NotifyStore: cards edited in place and
// once-only notices.

const cardCols = `id, user_id, rental_id, kind, incident, message_id, text, first_at, last_at, reminders, snooze_until, kept, closed, pending`

func scanCard(s scanner) (ledger.Card, error) {
	var (
		c                    ledger.Card
		kind                 string
		first, last, snooze  sql.NullInt64
		kept, closed, pendng bool
	)
	err := s.Scan(&c.ID, &c.UserID, &c.RentalID, &kind, &c.Incident, &c.MessageID, &c.Text, &first, &last,
		&c.Reminders, &snooze, &kept, &closed, &pendng)
	if err != nil {
		return c, err
	}
	c.Kind = ledger.CardKind(kind)
	c.FirstAt, c.LastAt, c.SnoozeUntil = fromNullUnix(first), fromNullUnix(last), fromNullUnix(snooze)
	c.Kept, c.Closed, c.Pending = kept, closed, pendng
	return c, nil
}

// Card returns the latest card of the rental and kind. Errors: ENOTFOUND.
func (ns *Notices) Card(ctx context.Context, rentalID int64, kind ledger.CardKind) (ledger.Card, error) {
	c, err := scanCard(ns.db.reader.QueryRowContext(ctx, `SELECT `+cardCols+` FROM cards WHERE rental_id = ? AND kind = ?
		ORDER BY id DESC LIMIT 1`, rentalID, string(kind)))
	if err == sql.ErrNoRows {
		return c, ledger.Errorf(ledger.ENOTFOUND, "no %s card for rental %d", kind, rentalID)
	}
	if err != nil {
		return c, storeError(fmt.Errorf("sqlite: card: %w", err))
	}
	return c, nil
}

// CardByMessage returns the card shown in the user's message. Errors:
// ENOTFOUND.
func (ns *Notices) CardByMessage(ctx context.Context, userID int64, messageID int) (ledger.Card, error) {
	c, err := scanCard(ns.db.reader.QueryRowContext(ctx, `SELECT `+cardCols+` FROM cards WHERE user_id = ? AND message_id = ?
		ORDER BY id DESC LIMIT 1`, userID, messageID))
	if err == sql.ErrNoRows {
		return c, ledger.Errorc(ledger.ENOTFOUND, "card_not_yours")
	}
	if err != nil {
		return c, storeError(fmt.Errorf("sqlite: card by message: %w", err))
	}
	return c, nil
}

// SaveCard inserts a card (ID 0) or updates one, and returns it. A second
// card for the same rental, kind and incident is ECONFLICT.
func (ns *Notices) SaveCard(ctx context.Context, c ledger.Card) (ledger.Card, error) {
	c.FirstAt, c.LastAt, c.SnoozeUntil = sec(c.FirstAt), sec(c.LastAt), sec(c.SnoozeUntil)
	err := ns.db.withTx(ctx, func(tx *sql.Tx) error {
		if c.ID == 0 {
			res, err := tx.ExecContext(ctx, `INSERT INTO cards (user_id, rental_id, kind, incident, message_id, text, first_at,
				last_at, reminders, snooze_until, kept, closed, pending) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
				c.UserID, c.RentalID, string(c.Kind), c.Incident, c.MessageID, c.Text, nullUnix(c.FirstAt),
				nullUnix(c.LastAt), c.Reminders, nullUnix(c.SnoozeUntil), boolInt(c.Kept), boolInt(c.Closed), boolInt(c.Pending))
			if err != nil {
				return constraintError(err, "insert card", fmt.Sprintf("a %s card for this incident exists already", c.Kind))
			}
			c.ID, err = res.LastInsertId()
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE cards SET message_id = ?, text = ?, first_at = ?, last_at = ?, reminders = ?,
			snooze_until = ?, kept = ?, closed = ?, pending = ? WHERE id = ?`,
			c.MessageID, c.Text, nullUnix(c.FirstAt), nullUnix(c.LastAt), c.Reminders, nullUnix(c.SnoozeUntil),
			boolInt(c.Kept), boolInt(c.Closed), boolInt(c.Pending), c.ID)
		if err != nil {
			return fmt.Errorf("sqlite: update card: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ledger.Errorf(ledger.ENOTFOUND, "card %d does not exist", c.ID)
		}
		return nil
	})
	return c, err
}

// OpenCards returns the cards not closed, in id order.
func (ns *Notices) OpenCards(ctx context.Context) ([]ledger.Card, error) {
	return queryAll(ctx, ns.db.reader, "open cards", scanCard, `SELECT `+cardCols+` FROM cards WHERE closed = 0 ORDER BY id`)
}

// MarkNotice records key and reports whether it is new.
func (ns *Notices) MarkNotice(ctx context.Context, userID int64, key string, at time.Time) (bool, error) {
	var fresh bool
	err := ns.db.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO notices (key, user_id, at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
			key, userID, unix(sec(at)))
		if err != nil {
			return fmt.Errorf("sqlite: mark notice: %w", err)
		}
		n, _ := res.RowsAffected()
		fresh = n == 1
		return nil
	})
	return fresh, err
}

// UnmarkNotice forgets key.
func (ns *Notices) UnmarkNotice(ctx context.Context, key string) error {
	return ns.db.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM notices WHERE key = ?`, key); err != nil {
			return fmt.Errorf("sqlite: unmark notice: %w", err)
		}
		return nil
	})
}

// HasNotice reports whether key was recorded.
func (ns *Notices) HasNotice(ctx context.Context, key string) (bool, error) {
	var n int
	if err := ns.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM notices WHERE key = ?`, key).Scan(&n); err != nil {
		return false, storeError(fmt.Errorf("sqlite: has notice: %w", err))
	}
	return n > 0, nil
}
