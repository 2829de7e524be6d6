package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

const userCols = `id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at, bench_off`

type scanner interface{ Scan(dest ...any) error }

func scanUser(s scanner) (ledger.User, error) {
	var (
		u                                 ledger.User
		idleWarn, silent, longRun, create int64
	)
	err := s.Scan(&u.ID, &u.Lang, &u.TZ, &u.Settings.SummaryAt, &idleWarn, &silent,
		&u.Settings.QuietFrom, &u.Settings.QuietTo, &longRun, &create, &u.Settings.BenchOff)
	if err != nil {
		return u, err
	}
	u.Settings.IdleWarn = time.Duration(idleWarn)
	u.Settings.Silent = time.Duration(silent)
	u.Settings.LongRun = time.Duration(longRun)
	u.CreatedAt = fromUnix(create)
	return u, nil
}

// readBudgets fills u.Budgets from the budgets table, sorted by currency.
func readBudgets(ctx context.Context, q querier, u *ledger.User) error {
	rows, err := q.QueryContext(ctx, `SELECT currency, amount FROM budgets WHERE user_id = ? ORDER BY currency`, u.ID)
	if err != nil {
		return fmt.Errorf("sqlite: read user %d's budgets: %w", u.ID, err)
	}
	defer rows.Close()
	u.Budgets = nil
	for rows.Next() {
		var c, amount string
		if err := rows.Scan(&c, &amount); err != nil {
			return fmt.Errorf("sqlite: read user %d's budgets: %w", u.ID, err)
		}
		d, err := dec(amount, "budgets.amount")
		if err != nil {
			return err
		}
		u.Budgets = append(u.Budgets, ledger.MonthlyBudget{Currency: ledger.Currency(c), Amount: d})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: read user %d's budgets: %w", u.ID, err)
	}
	return nil
}

// writeBudgets replaces user id's budgets with bs.
func writeBudgets(ctx context.Context, tx querier, id int64, bs []ledger.MonthlyBudget) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM budgets WHERE user_id = ?`, id); err != nil {
		return fmt.Errorf("sqlite: update user %d's budgets: %w", id, err)
	}
	for _, b := range bs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO budgets (user_id, currency, amount) VALUES (?, ?, ?)`,
			id, string(b.Currency), b.Amount.String()); err != nil {
			return fmt.Errorf("sqlite: update user %d's budgets: %w", id, err)
		}
	}
	return nil
}

// validateUser checks what a user may set: the language, the zone, the
// settings (by ledger.Settings.ValidateStored) and the budgets.
func validateUser(u ledger.User) error {
	if u.Lang != "en" && u.Lang != "zh" {
		return ledger.Errorc(ledger.EINVALID, "bad_lang", u.Lang)
	}
	if u.TZ != "" {
		if _, err := time.LoadLocation(u.TZ); err != nil {
			return ledger.Errorc(ledger.EINVALID, "bad_tz", u.TZ)
		}
	}
	if err := u.Settings.ValidateStored(); err != nil {
		return err
	}
	seen := map[ledger.Currency]bool{}
	for _, b := range u.Budgets {
		if b.Amount.Sign() <= 0 {
			return ledger.Errorc(ledger.EINVALID, "budget_not_positive", b.Amount)
		}
		if b.Currency == "" {
			return ledger.Errorc(ledger.EINVALID, "budget_no_currency", b.Amount)
		}
		if seen[b.Currency] {
			return ledger.Errorc(ledger.EINVALID, "budget_twice", b.Currency)
		}
		seen[b.Currency] = true
	}
	return nil
}

// EnsureUser returns the user with u.ID, creating it from u when it does
// not exist: an empty Lang becomes "en" and zero Settings become
// ledger.DefaultSettings(). An existing user is returned unchanged. It is
// not journaled. Errors: EINVALID for a zero ID or bad fields.
func (acc *Accounts) EnsureUser(ctx context.Context, u ledger.User) (ledger.User, error) {
	if u.ID == 0 {
		return ledger.User{}, ledger.Errorf(ledger.EINVALID, "user ID 0 is not valid")
	}
	if u.Lang == "" {
		u.Lang = "en"
	}
	if u.Settings == (ledger.Settings{}) {
		u.Settings = ledger.DefaultSettings()
	}
	if err := validateUser(u); err != nil {
		return ledger.User{}, err
	}
	var out ledger.User
	err := acc.db.withWrite(ctx, func(tx *wtx) error {
		s := u.Settings
		res, err := tx.ExecContext(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`,
			u.ID, u.Lang, u.TZ, s.SummaryAt, int64(s.IdleWarn), int64(s.Silent), s.QuietFrom, s.QuietTo,
			int64(s.LongRun), unix(acc.db.now()), boolInt(s.BenchOff))
		if err != nil {
			return fmt.Errorf("sqlite: create user %d: %w", u.ID, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			if err := writeBudgets(ctx, tx, u.ID, u.Budgets); err != nil {
				return err
			}
		}
		out, err = userByID(ctx, tx, u.ID)
		return err
	})
	return out, err
}

// User returns one user. Errors: ENOTFOUND.
func (acc *Accounts) User(ctx context.Context, id int64) (ledger.User, error) {
	return userByID(ctx, acc.db.reader, id)
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func userByID(ctx context.Context, q querier, id int64) (ledger.User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return ledger.User{}, ledger.Errorc(ledger.ENOTFOUND, "not_registered", id)
	}
	if err != nil {
		return ledger.User{}, fmt.Errorf("sqlite: read user %d: %w", id, err)
	}
	if err := readBudgets(ctx, q, &u); err != nil {
		return ledger.User{}, err
	}
	return u, nil
}

// Users returns all users in ID order.
func (acc *Accounts) Users(ctx context.Context) ([]ledger.User, error) {
	// queryAll closes its rows before the budgets' queries, which may
	// need the same connection.
	out, err := queryAll(ctx, acc.db.reader, "list users", scanUser, `SELECT `+userCols+` FROM users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := readBudgets(ctx, acc.db.reader, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// userPrev is what UpdateUser replaced, kept in the journal for Undo.
type userPrev struct {
	Lang     string
	TZ       string
	Settings ledger.Settings
	Budgets  []ledger.MonthlyBudget
}

// UpdateUser replaces the user's Lang, TZ, Settings and Budgets (undoable; the
// previous values are journaled). u.ID may be 0 (meaning a.UserID) but no
// other user's. Errors: EINVALID, ENOTFOUND, EUNAUTHORIZED, EDUPLICATE.
func (acc *Accounts) UpdateUser(ctx context.Context, a ledger.Action, u ledger.User) (ledger.User, error) {
	if u.ID != 0 && u.ID != a.UserID {
		return ledger.User{}, ledger.Errorf(ledger.EUNAUTHORIZED, "user %d cannot change user %d's settings", a.UserID, u.ID)
	}
	if err := validateUser(u); err != nil {
		return ledger.User{}, err
	}
	return journaled(ctx, acc.db, a, ledger.ActionSettings, "", func(tx *wtx, j journal) (ledger.User, error) {
		old, err := userByID(ctx, tx, j.userID)
		if err != nil {
			return ledger.User{}, err
		}
		if err := writeUser(ctx, tx, j.userID, u.Lang, u.TZ, u.Settings, u.Budgets); err != nil {
			return ledger.User{}, err
		}
		if err := j.target(ctx, tx, 0, 0, userPrev{Lang: old.Lang, TZ: old.TZ, Settings: old.Settings, Budgets: old.Budgets}); err != nil {
			return ledger.User{}, err
		}
		return userByID(ctx, tx, j.userID)
	})
}

func writeUser(ctx context.Context, tx querier, id int64, lang, tz string, s ledger.Settings, bs []ledger.MonthlyBudget) error {
	_, err := tx.ExecContext(ctx, `UPDATE users SET lang = ?, tz = ?, summary_at = ?, idle_warn_ns = ?, silent_ns = ?,
		quiet_from = ?, quiet_to = ?, long_run_ns = ?, bench_off = ? WHERE id = ?`,
		lang, tz, s.SummaryAt, int64(s.IdleWarn), int64(s.Silent), s.QuietFrom, s.QuietTo, int64(s.LongRun),
		boolInt(s.BenchOff), id)
	if err != nil {
		return fmt.Errorf("sqlite: update user %d: %w", id, err)
	}
	return writeBudgets(ctx, tx, id, bs)
}

func restoreUser(ctx context.Context, tx querier, id int64, prev string) error {
	var p userPrev
	if err := json.Unmarshal([]byte(prev), &p); err != nil {
		return fmt.Errorf("sqlite: undo settings: decode previous value: %w", err)
	}
	return writeUser(ctx, tx, id, p.Lang, p.TZ, p.Settings, p.Budgets)
}
