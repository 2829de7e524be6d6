package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// AddCharge records a one-off charge for a.UserID. When rentalName is not
// empty the charge is attached to the user's rental of that name (the
// unreleased one, or else the latest released one) and an empty Platform
// or Currency is taken from it. A zero c.At means the action's time.
// Errors: EINVALID (a zero amount, no platform or currency, a note over
// ledger.MaxNoteRunes characters), ENOTFOUND (user or rental), EDUPLICATE.
func (mon *Money) AddCharge(ctx context.Context, a ledger.Action, rentalName string, c ledger.Charge) (ledger.Charge, error) {
	if c.Amount.IsZero() {
		return ledger.Charge{}, ledger.Errorc(ledger.EINVALID, "charge_zero")
	}
	if utf8.RuneCountInString(c.Note) > ledger.MaxNoteRunes {
		return ledger.Charge{}, ledger.Errorc(ledger.EINVALID, "note_long", ledger.MaxNoteRunes)
	}
	if err := ledger.ValidProject(c.Project); err != nil {
		return ledger.Charge{}, err
	}
	name := rentalName
	if name == "" {
		name = c.Platform
	}
	return journaled(ctx, mon.db, a, ledger.ActionCharge, name, func(tx *wtx, j journal) (ledger.Charge, error) {
		c.RentalID = 0
		if rentalName != "" {
			r, err := findRental(ctx, tx, j.userID, rentalName)
			if err != nil {
				return ledger.Charge{}, err
			}
			c.RentalID = r.ID
			if c.Platform == "" {
				c.Platform = r.Platform
			}
			if c.Currency == "" {
				c.Currency = r.Currency
			}
			if c.Owner, err = attachedOwner(ctx, tx, a, r, name, c.Owner); err != nil {
				return ledger.Charge{}, err
			}
			if c.Project == "" {
				c.Project = r.Project
			}
		} else {
			var err error
			if c.Owner, err = newOwner(ctx, tx, a, name, c.Owner); err != nil {
				return ledger.Charge{}, err
			}
		}
		if c.Platform == "" {
			return ledger.Charge{}, ledger.Errorc(ledger.EINVALID, "charge_target")
		}
		if c.Currency == "" {
			return ledger.Charge{}, ledger.Errorc(ledger.EINVALID, "charge_currency")
		}
		c.UserID, c.Ref = j.userID, j.id
		c.At = orActionTime(c.At, j)
		res, err := tx.ExecContext(ctx, `INSERT INTO charges (user_id, action_id, rental_id, platform, amount, currency, note, at, owner, project)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.UserID, j.id, nullID(c.RentalID), c.Platform, c.Amount.String(), string(c.Currency), c.Note, unix(c.At), c.Owner, c.Project)
		if err != nil {
			return ledger.Charge{}, fmt.Errorf("sqlite: record charge: %w", err)
		}
		if c.ID, err = res.LastInsertId(); err != nil {
			return ledger.Charge{}, fmt.Errorf("sqlite: record charge: %w", err)
		}
		return c, j.target(ctx, tx, c.RentalID, 0, nil)
	})
}

func orActionTime(t time.Time, j journal) time.Time {
	if t.IsZero() {
		return j.at
	}
	return sec(t)
}

// platformAmount is the shape shared by top-ups and balance records.
type platformAmount struct {
	table    string
	kind     ledger.ActionKind
	platform string
	amount   ledger.Decimal
	currency ledger.Currency
	at       time.Time
}

func (mon *Money) addPlatformAmount(ctx context.Context, a ledger.Action, p *platformAmount) (id, userID, ref int64, err error) {
	if p.platform == "" {
		return 0, 0, 0, ledger.Errorc(ledger.EINVALID, "no_platform_given", p.kind)
	}
	if p.currency == "" {
		return 0, 0, 0, ledger.Errorc(ledger.EINVALID, "no_currency_given", p.kind)
	}
	id, err = journaled(ctx, mon.db, a, p.kind, p.platform, func(tx *wtx, j journal) (int64, error) {
		if _, err := teamActor(ctx, tx, a); err != nil {
			return 0, err
		}
		userID, ref = j.userID, j.id
		p.at = orActionTime(p.at, j)
		res, err := tx.ExecContext(ctx, `INSERT INTO `+p.table+` (user_id, action_id, platform, amount, currency, at)
			VALUES (?, ?, ?, ?, ?, ?)`, j.userID, j.id, p.platform, p.amount.String(), string(p.currency), unix(p.at))
		if err != nil {
			return 0, fmt.Errorf("sqlite: record %s: %w", p.kind, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return 0, fmt.Errorf("sqlite: record %s: %w", p.kind, err)
		}
		return id, nil
	})
	return id, userID, ref, err
}

// AddTopUp records money added to a platform balance. A zero t.At means
// the action's time. Errors: EINVALID (an amount that is not positive, no
// platform or currency), ENOTFOUND (user), EDUPLICATE.
func (mon *Money) AddTopUp(ctx context.Context, a ledger.Action, t ledger.TopUp) (ledger.TopUp, error) {
	if t.Amount.Sign() <= 0 {
		return ledger.TopUp{}, ledger.Errorc(ledger.EINVALID, "topup_positive", t.Amount)
	}
	p := platformAmount{table: "topups", kind: ledger.ActionTopUp, platform: t.Platform, amount: t.Amount, currency: t.Currency, at: t.At}
	id, userID, ref, err := mon.addPlatformAmount(ctx, a, &p)
	if err != nil {
		return ledger.TopUp{}, err
	}
	t.ID, t.UserID, t.At, t.Ref = id, userID, p.at, ref
	return t, nil
}

// RecordBalance records the balance a platform shows (it may be negative:
// some platforms let a balance run below zero). A zero b.At means the
// action's time. Errors: EINVALID (no platform or currency), ENOTFOUND
// (user), EDUPLICATE.
func (mon *Money) RecordBalance(ctx context.Context, a ledger.Action, b ledger.BalanceRecord) (ledger.BalanceRecord, error) {
	p := platformAmount{table: "balances", kind: ledger.ActionBalance, platform: b.Platform, amount: b.Amount, currency: b.Currency, at: b.At}
	id, userID, ref, err := mon.addPlatformAmount(ctx, a, &p)
	if err != nil {
		return ledger.BalanceRecord{}, err
	}
	b.ID, b.UserID, b.At, b.Ref = id, userID, p.at, ref
	return b, nil
}

// loadAmounts reads one user's top-ups or balance records in time order;
// ref is the action that recorded one (0 for none); api is true for a
// balance the platform's API gave (balances.source).
func loadAmounts(ctx context.Context, q querier, table string, userID int64, add func(id, ref int64, platform string, amount ledger.Decimal, currency ledger.Currency, at time.Time, api bool)) error {
	api := `0`
	if table == "balances" {
		api = `source = 'api'`
	}
	rows, err := q.QueryContext(ctx, `SELECT id, COALESCE(action_id, 0), platform, amount, currency, at, `+api+` FROM `+table+` WHERE user_id = ? ORDER BY at, id`, userID)
	if err != nil {
		return fmt.Errorf("sqlite: load %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, ref, at             int64
			platform, amt, currency string
			fromAPI                 bool
		)
		if err := rows.Scan(&id, &ref, &platform, &amt, &currency, &at, &fromAPI); err != nil {
			return fmt.Errorf("sqlite: load %s: %w", table, err)
		}
		d, err := dec(amt, table+".amount")
		if err != nil {
			return err
		}
		add(id, ref, platform, d, ledger.Currency(currency), fromUnix(at), fromAPI)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: load %s: %w", table, err)
	}
	return nil
}

func loadCharges(ctx context.Context, q querier, userID int64) ([]ledger.Charge, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, action_id, rental_id, platform, amount, currency, note, at, owner, project FROM charges
		WHERE user_id = ? ORDER BY at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load charges: %w", err)
	}
	defer rows.Close()
	var out []ledger.Charge
	for rows.Next() {
		var (
			c             ledger.Charge
			rentalID      sql.NullInt64
			amt, currency string
			at            int64
		)
		if err := rows.Scan(&c.ID, &c.Ref, &rentalID, &c.Platform, &amt, &currency, &c.Note, &at, &c.Owner, &c.Project); err != nil {
			return nil, fmt.Errorf("sqlite: load charges: %w", err)
		}
		if c.Amount, err = dec(amt, "charges.amount"); err != nil {
			return nil, err
		}
		c.UserID = userID
		c.RentalID = rentalID.Int64
		c.Currency = ledger.Currency(currency)
		c.At = fromUnix(at)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load charges: %w", err)
	}
	return out, nil
}
