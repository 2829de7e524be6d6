package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// recordsSQL is every typed record of one user (the four ? are the user's
// ID), one row shape for all kinds. A record's reference is the ID of the
// action that recorded it: balances the platform's API gave have none and
// are left out (they are read again at the next sync, not typed).
const recordsSQL = `SELECT 'charge' AS kind, c.action_id AS ref, c.id AS id, COALESCE(c.rental_id, 0) AS rental_id,
		COALESCE(r.name, '') AS rental, c.platform AS platform, c.amount AS amount, c.currency AS currency,
		c.note AS note, 0 AS bytes, '' AS direction, c.at AS at, c.owner AS owner, c.project AS project
	FROM charges c LEFT JOIN rentals r ON r.id = c.rental_id WHERE c.user_id = ?
	UNION ALL
	SELECT 'topup', t.action_id, t.id, 0, '', t.platform, t.amount, t.currency, '', 0, '', t.at, 0, ''
	FROM topups t WHERE t.user_id = ?
	UNION ALL
	SELECT 'balance', b.action_id, b.id, 0, '', b.platform, b.amount, b.currency, '', 0, '', b.at, 0, ''
	FROM balances b WHERE b.user_id = ? AND b.action_id IS NOT NULL
	UNION ALL
	SELECT 'traffic_usage', u.action_id, u.id, u.rental_id, r.name, r.platform, '0', r.currency, '', u.bytes, u.direction, u.at, r.owner, r.project
	FROM traffic_usage u JOIN rentals r ON r.id = u.rental_id WHERE r.user_id = ?`

// recordTables maps a record kind to its table.
var recordTables = map[ledger.RecordKind]string{
	ledger.RecordCharge: "charges", ledger.RecordTopUp: "topups", ledger.RecordBalance: "balances",
	ledger.RecordTraffic: "traffic_usage",
}

// storedRecord is a record's row as the journal keeps it (actions.prev) when
// it is deleted or corrected, so that Undo puts back exactly that row.
type storedRecord struct {
	Kind     ledger.RecordKind `json:"kind"`
	ID       int64             `json:"id"`
	Ref      int64             `json:"ref"`
	UserID   int64             `json:"user_id"`
	RentalID int64             `json:"rental_id,omitempty"`
	Platform string            `json:"platform,omitempty"`
	Amount   string            `json:"amount,omitempty"`
	Currency string            `json:"currency,omitempty"`
	Note     string            `json:"note,omitempty"`
	Bytes    int64             `json:"bytes,omitempty"`
	Dir      string            `json:"direction,omitempty"`
	At       int64             `json:"at"`
	// A charge's owner and project (left out when unset, so a personal
	// ledger's journal reads as before).
	Owner   int64  `json:"owner,omitempty"`
	Project string `json:"project,omitempty"`
}

// Records returns the user's typed charges, top-ups, balance readings and
// traffic records, newest first: all of them, or those of the rental or
// platform f.Name; at most f.Limit (default 30).
func (mon *Money) Records(ctx context.Context, userID int64, f ledger.RecordFilter) ([]ledger.Record, error) {
	if f.Limit <= 0 {
		f.Limit = 30
	}
	rows, err := mon.db.reader.QueryContext(ctx, `SELECT kind, ref, id, rental_id, rental, platform, amount, currency, note, bytes, direction, at, owner, project
		FROM (`+recordsSQL+`) WHERE ? = '' OR rental = ? OR platform = ? ORDER BY at DESC, ref DESC LIMIT ?`,
		userID, userID, userID, userID, f.Name, f.Name, f.Name, f.Limit)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: records of user %d: %w", userID, err))
	}
	defer rows.Close()
	var out []ledger.Record
	for rows.Next() {
		r, _, err := scanRecord(rows, userID)
		if err != nil {
			return nil, storeError(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(fmt.Errorf("sqlite: records of user %d: %w", userID, err))
	}
	return out, nil
}

// scanRecord reads one row of recordsSQL as the record and its stored row.
func scanRecord(s scanner, userID int64) (ledger.Record, storedRecord, error) {
	var (
		r        ledger.Record
		st       storedRecord
		kind     string
		amt, cur string
		dir      string
	)
	if err := s.Scan(&kind, &r.Ref, &st.ID, &r.RentalID, &r.Rental, &r.Platform, &amt, &cur, &r.Note, &r.Bytes, &dir, &st.At,
		&r.Owner, &r.Project); err != nil {
		return r, st, fmt.Errorf("sqlite: read record: %w", err)
	}
	d, err := dec(amt, "record amount")
	if err != nil {
		return r, st, err
	}
	r.Kind, r.Amount, r.Currency, r.Dir, r.At = ledger.RecordKind(kind), d, ledger.Currency(cur), ledger.Direction(dir), fromUnix(st.At)
	st.Kind, st.Ref, st.UserID, st.RentalID, st.Platform = r.Kind, r.Ref, userID, r.RentalID, r.Platform
	st.Amount, st.Currency, st.Note, st.Bytes, st.Dir = amt, cur, r.Note, r.Bytes, dir
	if r.Kind == ledger.RecordCharge {
		st.Owner, st.Project = r.Owner, r.Project
	}
	return r, st, nil
}

// findRecord returns the user's record ref, or ENOTFOUND.
func findRecord(ctx context.Context, q querier, userID, ref int64) (ledger.Record, storedRecord, error) {
	row := q.QueryRowContext(ctx, `SELECT kind, ref, id, rental_id, rental, platform, amount, currency, note, bytes, direction, at, owner, project
		FROM (`+recordsSQL+`) WHERE ref = ?`, userID, userID, userID, userID, ref)
	r, st, err := scanRecord(row, userID)
	if errors.Is(err, sql.ErrNoRows) {
		return r, st, ledger.Errorc(ledger.ENOTFOUND, "record_not_found", ref)
	}
	return r, st, err
}

// changeRecord is the journaled deletion or correction of the user's
// record ref: the journal row comes first (a retried one is EDUPLICATE,
// not "no record") and takes its kind and the record as it was, for Undo,
// once the record is found; change then deletes or rewrites it and
// returns what the caller gets.
func changeRecord(ctx context.Context, db *DB, a ledger.Action, ref int64, kind func(ledger.RecordKind) ledger.ActionKind,
	change func(tx *wtx, j journal, r ledger.Record, st storedRecord) (ledger.Record, error)) (ledger.Record, error) {
	return journaled(ctx, db, a, kind(ledger.RecordCharge), fmt.Sprintf("#%d", ref), func(tx *wtx, j journal) (ledger.Record, error) {
		r, st, err := findRecord(ctx, tx, j.userID, ref)
		if err != nil {
			return ledger.Record{}, err
		}
		if err := mayChangeRecord(ctx, tx, a, r); err != nil {
			return ledger.Record{}, err
		}
		prev, err := json.Marshal(st)
		if err != nil {
			return ledger.Record{}, fmt.Errorf("sqlite: encode record #%d: %w", ref, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET kind = ?, rental_id = ?, prev = ? WHERE id = ?`,
			string(kind(r.Kind)), nullID(r.RentalID), string(prev), j.id); err != nil {
			return ledger.Record{}, fmt.Errorf("sqlite: journal record #%d: %w", ref, err)
		}
		return change(tx, j, r, st)
	})
}

// DeleteRecord deletes the user's record ref (a charge, top-up, typed
// balance reading or traffic record) and returns it. The journal keeps the
// row, and Undo puts it back under the same reference. Errors: ENOTFOUND
// (no such record of the user's), EDUPLICATE.
func (mon *Money) DeleteRecord(ctx context.Context, a ledger.Action, ref int64) (ledger.Record, error) {
	return changeRecord(ctx, mon.db, a, ref, ledger.RecordKind.DeleteAction, func(tx *wtx, _ journal, r ledger.Record, st storedRecord) (ledger.Record, error) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+recordTables[r.Kind]+` WHERE id = ?`, st.ID); err != nil {
			return ledger.Record{}, fmt.Errorf("sqlite: delete record #%d: %w", ref, err)
		}
		return r, nil
	})
}

// FixRecord corrects the user's record ref with f and returns it before and
// after; the journal keeps the old row for Undo. The rules are those of
// recording it: a charge is not zero and its note at most
// ledger.MaxNoteRunes; a top-up is positive; traffic is positive, in or
// out; the time is not after the action's, nor (for a rental's charge or
// traffic) before the rental started; the currency stays the record's.
// Errors: ENOTFOUND, EINVALID (those rules, or a field the record's kind
// does not have), EDUPLICATE.
func (mon *Money) FixRecord(ctx context.Context, a ledger.Action, ref int64, f ledger.RecordFix) (old, fixed ledger.Record, err error) {
	fixed, err = changeRecord(ctx, mon.db, a, ref, ledger.RecordKind.FixAction, func(tx *wtx, j journal, r ledger.Record, _ storedRecord) (ledger.Record, error) {
		n, err := applyFix(ctx, tx, j, r, f)
		if err != nil {
			return ledger.Record{}, err
		}
		if err := writeRecord(ctx, tx, n.Kind, ref, n.Amount.String(), n.Note, n.Bytes, string(n.Dir), unix(n.At)); err != nil {
			return ledger.Record{}, err
		}
		old = r
		return n, nil
	})
	if err != nil {
		return ledger.Record{}, ledger.Record{}, err
	}
	return old, fixed, nil
}

// applyFix returns r corrected by f, or EINVALID when f breaks a rule of
// recording r's kind.
func applyFix(ctx context.Context, q querier, j journal, r ledger.Record, f ledger.RecordFix) (ledger.Record, error) {
	if f.Empty() {
		return r, ledger.Errorc(ledger.EINVALID, "record_no_change", r.Ref)
	}
	traffic := r.Kind == ledger.RecordTraffic
	switch {
	case f.Note != nil && r.Kind != ledger.RecordCharge:
		return r, ledger.Errorc(ledger.EINVALID, "record_no_note", r.Ref)
	case (f.Bytes != 0 || f.Dir != "") && !traffic:
		return r, ledger.Errorc(ledger.EINVALID, "record_no_size", r.Ref)
	case (f.Amount != nil || f.Currency != "") && traffic:
		return r, ledger.Errorc(ledger.EINVALID, "record_no_amount", r.Ref)
	case f.Currency != "" && f.Currency != r.Currency:
		return r, ledger.Errorc(ledger.EINVALID, "record_currency", r.Ref, r.Currency, f.Currency)
	}
	n := r
	if f.Amount != nil {
		n.Amount = *f.Amount
	}
	if f.Note != nil {
		n.Note = *f.Note
	}
	if f.Bytes != 0 {
		n.Bytes = f.Bytes
	}
	if f.Dir != "" {
		n.Dir = f.Dir
	}
	if !f.At.IsZero() {
		n.At = sec(f.At)
	}
	switch n.Kind {
	case ledger.RecordCharge:
		if n.Amount.IsZero() {
			return r, ledger.Errorc(ledger.EINVALID, "charge_zero")
		}
		if utf8.RuneCountInString(n.Note) > ledger.MaxNoteRunes {
			return r, ledger.Errorc(ledger.EINVALID, "note_long", ledger.MaxNoteRunes)
		}
	case ledger.RecordTopUp:
		if n.Amount.Sign() <= 0 {
			return r, ledger.Errorc(ledger.EINVALID, "topup_positive", n.Amount)
		}
	case ledger.RecordTraffic:
		if n.Bytes <= 0 {
			return r, ledger.Errorc(ledger.EINVALID, "traffic_positive", n.Bytes, n.Rental)
		}
		if n.Dir != ledger.In && n.Dir != ledger.Out {
			return r, ledger.Errorc(ledger.EINVALID, "traffic_in_out", n.Dir, n.Rental)
		}
	}
	if n.At.After(j.at) {
		return r, ledger.Errorc(ledger.EINVALID, "record_future", n.At, j.at)
	}
	if n.RentalID != 0 && n.At.Before(r.At) {
		x, err := loadRental(ctx, q, n.RentalID)
		if err != nil {
			return r, err
		}
		if start := x.StartedAt(); n.At.Before(start) {
			key := "charge_before_start"
			if traffic {
				key = "traffic_before_start"
			}
			return r, ledger.Errorc(ledger.EINVALID, key, n.At, x.Name, start)
		}
	}
	return n, nil
}

// writeRecord sets the columns of record ref that its kind has.
func writeRecord(ctx context.Context, tx querier, kind ledger.RecordKind, ref int64, amount, note string, bytes int64, dir string, at int64) error {
	var err error
	switch kind {
	case ledger.RecordCharge:
		_, err = tx.ExecContext(ctx, `UPDATE charges SET amount = ?, note = ?, at = ? WHERE action_id = ?`, amount, note, at, ref)
	case ledger.RecordTopUp, ledger.RecordBalance:
		_, err = tx.ExecContext(ctx, `UPDATE `+recordTables[kind]+` SET amount = ?, at = ? WHERE action_id = ?`, amount, at, ref)
	case ledger.RecordTraffic:
		_, err = tx.ExecContext(ctx, `UPDATE traffic_usage SET bytes = ?, direction = ?, at = ? WHERE action_id = ?`, bytes, dir, at, ref)
	default:
		return fmt.Errorf("sqlite: record #%d: unknown kind %q", ref, kind)
	}
	if err != nil {
		return fmt.Errorf("sqlite: write record #%d: %w", ref, err)
	}
	return nil
}

// recordUndo reports whether an action of kind deleted (del) or corrected
// a record.
func recordUndo(kind ledger.ActionKind) (del, ok bool) {
	for _, k := range ledger.RecordKinds() {
		switch kind {
		case k.DeleteAction():
			return true, true
		case k.FixAction():
			return false, true
		}
	}
	return false, false
}

// restoreRecord undoes a deletion (del) or correction of a record: prev is
// the row the journal kept. A deleted row comes back with its own ID when
// no row took it since, and always with its reference (its action).
func restoreRecord(ctx context.Context, tx querier, del bool, prev string) error {
	var st storedRecord
	if err := json.Unmarshal([]byte(prev), &st); err != nil {
		return fmt.Errorf("sqlite: undo record: decode previous value: %w", err)
	}
	if !del {
		return writeRecord(ctx, tx, st.Kind, st.Ref, st.Amount, st.Note, st.Bytes, st.Dir, st.At)
	}
	table, ok := recordTables[st.Kind]
	if !ok {
		return fmt.Errorf("sqlite: undo record #%d: unknown kind %q", st.Ref, st.Kind)
	}
	id := sql.NullInt64{Int64: st.ID, Valid: true}
	var taken int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE id = ?`, st.ID).Scan(&taken)
	if err != nil {
		return fmt.Errorf("sqlite: undo record #%d: %w", st.Ref, err)
	}
	if taken > 0 {
		id.Valid = false
	}
	switch st.Kind {
	case ledger.RecordCharge:
		_, err = tx.ExecContext(ctx, `INSERT INTO charges (id, user_id, action_id, rental_id, platform, amount, currency, note, at, owner, project)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, st.UserID, st.Ref, nullID(st.RentalID), st.Platform, st.Amount, st.Currency, st.Note, st.At,
			st.Owner, st.Project)
	case ledger.RecordTopUp, ledger.RecordBalance:
		_, err = tx.ExecContext(ctx, `INSERT INTO `+table+` (id, user_id, action_id, platform, amount, currency, at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, id, st.UserID, st.Ref, st.Platform, st.Amount, st.Currency, st.At)
	case ledger.RecordTraffic:
		_, err = tx.ExecContext(ctx, `INSERT INTO traffic_usage (id, rental_id, action_id, at, bytes, direction)
			VALUES (?, ?, ?, ?, ?, ?)`, id, st.RentalID, st.Ref, st.At, st.Bytes, st.Dir)
	}
	if err != nil {
		return fmt.Errorf("sqlite: undo the deletion of record #%d: %w", st.Ref, err)
	}
	return nil
}
