package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.OrderStore and the decision log: the
// orders signed for agents and what the automatic policy decided.

const orderCols = `id, rental_id, user_id, rental, action, origin, issued_at, expires_at, nonce, state, outcome, message, updated_at, boot_id, wait_for, idle_people_s`

func scanOrder(s scanner) (ledger.Order, error) {
	var (
		o                          ledger.Order
		origin, state, waitFor     string
		issued, expires, updatedAt int64
		idlePeople                 int64
	)
	err := s.Scan(&o.ID, &o.RentalID, &o.UserID, &o.Rental, &o.Action, &origin, &issued, &expires, &o.Nonce, &state,
		&o.Outcome, &o.Message, &updatedAt, &o.BootID, &waitFor, &idlePeople)
	if err != nil {
		return o, err
	}
	if waitFor != "" {
		o.WaitFor = strings.Split(waitFor, ",")
	}
	o.IdlePeople = time.Duration(idlePeople) * time.Second
	o.Origin, o.State = ledger.OrderOrigin(origin), ledger.OrderState(state)
	o.IssuedAt, o.ExpiresAt, o.UpdatedAt = fromUnix(issued), fromUnix(expires), fromUnix(updatedAt)
	return o, nil
}

// CreateOrder stores a new pending order. Times are truncated to seconds
// (the signature is made over the stored times). Errors: ECONFLICT when
// the rental already has an order in flight, ENOTFOUND for an unknown
// rental.
func (ords *Orders) CreateOrder(ctx context.Context, o ledger.Order) (ledger.Order, error) {
	o.IssuedAt, o.ExpiresAt, o.UpdatedAt = sec(o.IssuedAt), sec(o.ExpiresAt), sec(o.IssuedAt)
	o.State = ledger.OrderPending
	err := ords.db.withTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM rentals WHERE id = ? AND released = 0`, o.RentalID).Scan(&one)
		if err == sql.ErrNoRows {
			return ledger.Errorc(ledger.ENOTFOUND, "not_live", o.Rental)
		}
		if err != nil {
			return fmt.Errorf("sqlite: create order: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO agent_orders (`+orderCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			o.ID, o.RentalID, o.UserID, o.Rental, o.Action, string(o.Origin), unix(o.IssuedAt), unix(o.ExpiresAt),
			o.Nonce, string(o.State), o.Outcome, o.Message, unix(o.UpdatedAt), o.BootID, strings.Join(o.WaitFor, ","), int64(o.IdlePeople/time.Second))
		if isConstraint(err) {
			return ledger.Errorc(ledger.ECONFLICT, "release_in_progress", o.Rental)
		}
		if err != nil {
			return fmt.Errorf("sqlite: create order: %w", err)
		}
		return nil
	})
	return o, err
}

// Order returns one order. Errors: ENOTFOUND.
func (ords *Orders) Order(ctx context.Context, id string) (ledger.Order, error) {
	o, err := scanOrder(ords.db.reader.QueryRowContext(ctx, `SELECT `+orderCols+` FROM agent_orders WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return o, ledger.Errorf(ledger.ENOTFOUND, "no order %q", id)
	}
	if err != nil {
		return o, storeError(fmt.Errorf("sqlite: order: %w", err))
	}
	return o, nil
}

// OpenOrders returns the orders in flight of one rental, or of all when
// rentalID is 0, oldest first.
func (ords *Orders) OpenOrders(ctx context.Context, rentalID int64) ([]ledger.Order, error) {
	q := `SELECT ` + orderCols + ` FROM agent_orders WHERE state IN ('pending', 'started')`
	var args []any
	if rentalID != 0 {
		q += ` AND rental_id = ?`
		args = append(args, rentalID)
	}
	return queryAll(ctx, ords.db.reader, "open orders", scanOrder, q+` ORDER BY issued_at, id`, args...)
}

// UpdateOrder stores o's state, outcome, message, boot id and update time.
// A finished order is never reopened: an update to an order that is no
// longer open returns it unchanged with ECONFLICT. When ev is set (the
// stop or release the agent confirmed), it is appended to the rental in
// the same transaction, journaled as an action of the order's user with
// the key "order:ID" that Undo does not reverse, unless the rental is already stopped or released
// (the user recorded it by hand); the rental is returned.
func (ords *Orders) UpdateOrder(ctx context.Context, o ledger.Order, ev *ledger.Event) (ledger.Order, *ledger.Rental, error) {
	o.UpdatedAt = sec(o.UpdatedAt)
	if o.UpdatedAt.IsZero() {
		o.UpdatedAt = ords.db.now()
	}
	var (
		out ledger.Order
		rl  *ledger.Rental
	)
	err := ords.db.withTx(ctx, func(tx *sql.Tx) error {
		cur, err := scanOrder(tx.QueryRowContext(ctx, `SELECT `+orderCols+` FROM agent_orders WHERE id = ?`, o.ID))
		if err == sql.ErrNoRows {
			return ledger.Errorf(ledger.ENOTFOUND, "no order %q", o.ID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: update order: %w", err)
		}
		if !cur.State.Open() {
			out = cur
			return ledger.Errorf(ledger.ECONFLICT, "order %s is already %s", o.ID, cur.State)
		}
		cur.State, cur.Outcome, cur.Message, cur.UpdatedAt = o.State, o.Outcome, o.Message, o.UpdatedAt
		if o.BootID != "" {
			cur.BootID = o.BootID
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agent_orders SET state = ?, outcome = ?, message = ?, updated_at = ?, boot_id = ? WHERE id = ?`,
			string(cur.State), cur.Outcome, cur.Message, unix(cur.UpdatedAt), cur.BootID, cur.ID); err != nil {
			return fmt.Errorf("sqlite: update order: %w", err)
		}
		out = cur
		rs, err := loadRentals(ctx, tx, `r.id = ?`, cur.RentalID)
		if err != nil {
			return err
		}
		if len(rs) != 1 {
			return ledger.Errorf(ledger.ENOTFOUND, "rental of order %s is gone", o.ID)
		}
		rl = rs[0]
		if ev == nil {
			return nil
		}
		e := *ev
		e.At = sec(e.At)
		if st := rl.State(); st == ledger.Released || (e.Kind == ledger.EventStop && st == ledger.Stopped) {
			return nil
		}
		if last := rl.LastEventAt(); e.At.Before(last) {
			e.At = last // a clock that jumped back must not break the ledger's order
		}
		if err := rl.CheckEvent(e); err != nil {
			return err
		}
		// Not undoable: the agent really stopped or released the host, and
		// /undo cannot bring it back (a stopped rental is started again
		// with /resume). Undo skips it, and refuses to reverse an earlier
		// change of the same rental beneath it.
		j, err := ords.db.beginAction(ctx, tx, ledger.Action{UserID: cur.UserID, At: e.At, Key: "order:" + cur.ID}, ledger.ActionKind(e.Kind), rl.Name, false, true)
		if err != nil {
			return err
		}
		if _, err := addEvent(ctx, tx, rl.ID, j.id, e); err != nil {
			return err
		}
		if e.Kind == ledger.EventRelease {
			if _, err := tx.ExecContext(ctx, `UPDATE rentals SET released = 1 WHERE id = ?`, rl.ID); err != nil {
				return fmt.Errorf("sqlite: release %s: %w", rl.Name, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE agent_tokens SET revoked_at = ? WHERE rental_id = ? AND revoked_at IS NULL`,
				unix(e.At), rl.ID); err != nil {
				return fmt.Errorf("sqlite: revoke tokens: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE idle_intervals SET to_at = max(from_at, ?) WHERE rental_id = ? AND to_at IS NULL`,
			unix(e.At), rl.ID); err != nil {
			return fmt.Errorf("sqlite: close idle: %w", err)
		}
		if err := j.target(ctx, tx, rl.ID, 0, nil); err != nil {
			return err
		}
		rl, err = loadRental(ctx, tx, rl.ID)
		return err
	})
	if err != nil {
		return out, rl, err
	}
	return out, rl, nil
}

// AddDecision records an automatic decision: its English Summary and
// Evidence, and their messages by key with typed arguments. EINVALID if a
// message holds an argument of a type it cannot keep.
func (ords *Orders) AddDecision(ctx context.Context, d ledger.Decision) (ledger.Decision, error) {
	d.At = sec(d.At)
	if d.At.IsZero() {
		d.At = ords.db.now()
	}
	sArgs, err := msgJSON(d.SummaryMsg)
	if err != nil {
		return d, err
	}
	eArgs, err := msgJSON(d.EvidenceMsg)
	if err != nil {
		return d, err
	}
	err = ords.db.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO decisions (user_id, rental_id, at, kind, summary, evidence,
			summary_key, summary_args, evidence_key, evidence_args) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.UserID, d.RentalID, unix(d.At), string(d.Kind), d.Summary, d.Evidence,
			d.SummaryMsg.Key, sArgs, d.EvidenceMsg.Key, eArgs)
		if err != nil {
			return constraintError(err, "add decision", fmt.Sprintf("rental %d does not exist", d.RentalID))
		}
		d.ID, err = res.LastInsertId()
		return err
	})
	return d, err
}

// msgJSON is m as stored: "" for no message, else its JSON.
func msgJSON(m ledger.Message) (string, error) {
	if m.IsZero() {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", ledger.Errorf(ledger.EINVALID, "decision message %s cannot be stored: %v", m.Key, err)
	}
	return string(b), nil
}

// msgOf reads a stored message back; a row without a key (written before
// keys were kept) has none.
func msgOf(key, args string) (ledger.Message, error) {
	if key == "" || args == "" {
		return ledger.Message{}, nil
	}
	var m ledger.Message
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return ledger.Message{}, fmt.Errorf("sqlite: decision message %s: %w", key, err)
	}
	return m, nil
}

// Decisions returns the rental's latest decisions, newest first.
func (ords *Orders) Decisions(ctx context.Context, rentalID int64, limit int) ([]ledger.Decision, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := ords.db.reader.QueryContext(ctx, `SELECT id, user_id, rental_id, at, kind, summary, evidence,
		summary_key, summary_args, evidence_key, evidence_args FROM decisions
		WHERE rental_id = ? ORDER BY id DESC LIMIT ?`, rentalID, limit)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: decisions: %w", err))
	}
	defer rows.Close()
	var out []ledger.Decision
	for rows.Next() {
		var (
			d           ledger.Decision
			at          int64
			kind        string
			sKey, sArgs string
			eKey, eArgs string
		)
		if err := rows.Scan(&d.ID, &d.UserID, &d.RentalID, &at, &kind, &d.Summary, &d.Evidence, &sKey, &sArgs, &eKey, &eArgs); err != nil {
			return nil, storeError(fmt.Errorf("sqlite: decisions: %w", err))
		}
		d.At, d.Kind = fromUnix(at), ledger.DecisionKind(kind)
		// A message that cannot be read back is left out: the English
		// text is shown instead, and nothing is lost.
		if d.SummaryMsg, err = msgOf(sKey, sArgs); err != nil {
			ords.db.log.Error("sqlite: decisions", "id", d.ID, "err", err)
		}
		if d.EvidenceMsg, err = msgOf(eKey, eArgs); err != nil {
			ords.db.log.Error("sqlite: decisions", "id", d.ID, "err", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(fmt.Errorf("sqlite: decisions: %w", err))
	}
	return out, nil
}

// SetAutoPolicy replaces the policy of the user's unreleased rental called
// name. Errors: EINVALID, ENOTFOUND, ECONFLICT (released).
func (ords *Orders) SetAutoPolicy(ctx context.Context, userID int64, name string, p ledger.AutoPolicy) (ledger.AutoPolicy, error) {
	if err := p.ValidateStored(); err != nil {
		return p, err
	}
	p.SetAt = sec(p.SetAt)
	if p.SetAt.IsZero() {
		p.SetAt = ords.db.now()
	}
	err := ords.db.withTx(ctx, func(tx *sql.Tx) error {
		r, err := liveRental(ctx, tx, userID, name, "was_released")
		if err != nil {
			return err
		}
		p.RentalID = r.ID
		_, err = tx.ExecContext(ctx, `INSERT INTO auto_policies (rental_id, action, after_ns, set_at, wait_for, idle_people_ns) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (rental_id) DO UPDATE SET action = excluded.action, after_ns = excluded.after_ns, set_at = excluded.set_at,
			wait_for = excluded.wait_for, idle_people_ns = excluded.idle_people_ns`,
			r.ID, string(p.Action), int64(p.After), unix(p.SetAt), string(p.WaitFor), int64(p.IdlePeople))
		if err != nil {
			return fmt.Errorf("sqlite: set policy: %w", err)
		}
		return nil
	})
	return p, err
}

// AutoPolicy returns the rental's policy; a rental without one gets
// Action notify.
func (ords *Orders) AutoPolicy(ctx context.Context, rentalID int64) (ledger.AutoPolicy, error) {
	p := ledger.AutoPolicy{RentalID: rentalID, Action: ledger.AutoNotify}
	var (
		action  string
		after   int64
		setAt   int64
		waitFor string
		idle    int64
	)
	err := ords.db.reader.QueryRowContext(ctx, `SELECT action, after_ns, set_at, wait_for, idle_people_ns FROM auto_policies WHERE rental_id = ?`, rentalID).
		Scan(&action, &after, &setAt, &waitFor, &idle)
	if err == sql.ErrNoRows {
		return p, nil
	}
	if err != nil {
		return p, storeError(fmt.Errorf("sqlite: policy: %w", err))
	}
	p.Action, p.After, p.SetAt = ledger.AutoAction(action), time.Duration(after), fromUnix(setAt)
	p.WaitFor, p.IdlePeople = ledger.WaitFor(waitFor), time.Duration(idle)
	return p, nil
}
