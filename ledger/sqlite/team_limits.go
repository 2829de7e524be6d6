package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.TeamStore's limits, approvals and the
// owner of a team's rental (SetOwner). The scheduler finds what is over a
// limit; the store keeps each approval once, so a restart or a second
// tick never asks the admins twice, and decides it once, so of two admins
// pressing at once one wins.

// memberDisplay names userID in team teamID's texts: "@username" as last
// seen, else "id<N>"; a member who left is still named.
func memberDisplay(ctx context.Context, q querier, teamID, userID int64) (string, error) {
	var username string
	err := q.QueryRowContext(ctx, `SELECT username FROM team_members WHERE team_id = ? AND user_id = ?`, teamID, userID).Scan(&username)
	if err != nil && err != sql.ErrNoRows {
		return "", fmt.Errorf("sqlite: name of %d in team %d: %w", userID, teamID, err)
	}
	return ledger.Member{UserID: userID, Username: username}.Name(), nil
}

// SetLimit sets, or replaces, the limit of (team, scope, subject,
// currency), by a.Person() (an admin); a limit whose bounds are all 0
// deletes it. The subject is "" for the team, a current member's user ID
// (ENOTFOUND "team_not_member") or a project's name (EINVALID
// "project_name"). EINVALID "limit_negative" for a bound below 0,
// "bad_currency" for a currency that is no ISO code.
func (rs *Rosters) SetLimit(ctx context.Context, a ledger.Action, l ledger.Limit) error {
	person, err := actor(a)
	if err != nil {
		return err
	}
	if err := validTeamID(l.TeamID); err != nil {
		return err
	}
	var memberID int64
	switch l.Scope {
	case ledger.ScopeTeam:
		if l.Subject != "" {
			return ledger.Errorf(ledger.EINVALID, "a team's limit has no subject, got %q", l.Subject)
		}
	case ledger.ScopeMember:
		if memberID, err = strconv.ParseInt(l.Subject, 10, 64); err != nil || memberID <= 0 {
			return ledger.Errorf(ledger.EINVALID, "a member's limit names the member's user ID, got %q", l.Subject)
		}
		l.Subject = strconv.FormatInt(memberID, 10)
	case ledger.ScopeProject:
		if l.Subject == "" {
			return ledger.Errorf(ledger.EINVALID, "a project's limit names the project")
		}
		if err := ledger.ValidProject(l.Subject); err != nil {
			return err
		}
	default:
		return ledger.Errorf(ledger.EINVALID, "%q is not a limit's scope: team, member or project", l.Scope)
	}
	if c, err := ledger.ParseCurrency(string(l.Currency)); err != nil || c != l.Currency {
		return ledger.Errorc(ledger.EINVALID, "bad_currency", string(l.Currency))
	}
	if l.RatePerHour.Sign() < 0 || l.GPUs < 0 || l.Month.Sign() < 0 {
		return ledger.Errorc(ledger.EINVALID, "limit_negative")
	}
	return rs.db.withWrite(ctx, func(tx *wtx) error {
		j, err := rs.teamAction(ctx, tx, a, l.TeamID, person, string(l.Scope)+":"+l.Subject)
		if err != nil {
			return err
		}
		if _, err := adminOf(ctx, tx, l.TeamID, person); err != nil {
			return err
		}
		if l.Scope == ledger.ScopeMember {
			if _, err := currentMember(ctx, tx, l.TeamID, memberID); err != nil {
				return err
			}
		}
		if l.RatePerHour.Sign() == 0 && l.GPUs == 0 && l.Month.Sign() == 0 {
			_, err := tx.ExecContext(ctx, `DELETE FROM team_limits WHERE team_id = ? AND scope = ? AND subject = ? AND currency = ?`,
				l.TeamID, string(l.Scope), l.Subject, string(l.Currency))
			if err != nil {
				return fmt.Errorf("sqlite: clear a limit of team %d: %w", l.TeamID, err)
			}
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO team_limits (team_id, scope, subject, currency, rate, gpus, month, set_by, set_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (team_id, scope, subject, currency) DO UPDATE SET rate = excluded.rate, gpus = excluded.gpus,
				month = excluded.month, set_by = excluded.set_by, set_at = excluded.set_at`,
			l.TeamID, string(l.Scope), l.Subject, string(l.Currency), l.RatePerHour.String(), l.GPUs, l.Month.String(), person, unix(j.at))
		if err != nil {
			return fmt.Errorf("sqlite: set a limit of team %d: %w", l.TeamID, err)
		}
		return nil
	})
}

// Limits returns the team's limits by scope, subject and currency.
func (rs *Rosters) Limits(ctx context.Context, teamID int64) ([]ledger.Limit, error) {
	return queryAll(ctx, rs.db.reader, "limits", func(s scanner) (ledger.Limit, error) {
		var (
			l           ledger.Limit
			scope, cur  string
			rate, month string
		)
		if err := s.Scan(&l.TeamID, &scope, &l.Subject, &cur, &rate, &l.GPUs, &month); err != nil {
			return l, err
		}
		l.Scope, l.Currency = ledger.LimitScope(scope), ledger.Currency(cur)
		var err error
		if l.RatePerHour, err = dec(rate, "team_limits.rate"); err != nil {
			return l, err
		}
		l.Month, err = dec(month, "team_limits.month")
		return l, err
	}, `SELECT team_id, scope, subject, currency, rate, gpus, month FROM team_limits
		WHERE team_id = ? ORDER BY scope, subject, currency`, teamID)
}

const approvalCols = `id, team_id, rental_id, owner, scope, subject, kind, period, currency, lim, value, state,
	created_at, decided_by, decided_at, reminded_at`

func scanApproval(s scanner) (ledger.Approval, error) {
	var (
		ap                      ledger.Approval
		scope, kind, cur, state string
		lim, value              string
		created                 int64
		decidedBy               sql.NullInt64
		decided, reminded       sql.NullInt64
	)
	if err := s.Scan(&ap.ID, &ap.TeamID, &ap.RentalID, &ap.Owner, &scope, &ap.Subject, &kind, &ap.Period, &cur, &lim, &value, &state,
		&created, &decidedBy, &decided, &reminded); err != nil {
		return ap, err
	}
	ap.Scope, ap.Kind, ap.Currency, ap.State = ledger.LimitScope(scope), ledger.LimitKind(kind), ledger.Currency(cur), ledger.ApprovalState(state)
	ap.CreatedAt, ap.DecidedBy, ap.DecidedAt, ap.RemindedAt = fromUnix(created), decidedBy.Int64, fromNullUnix(decided), fromNullUnix(reminded)
	var err error
	if ap.Limit, err = dec(lim, "team_approvals.lim"); err != nil {
		return ap, err
	}
	ap.Value, err = dec(value, "team_approvals.value")
	return ap, err
}

// approvalByID reads one approval with q. ENOTFOUND "approval_unknown".
func approvalByID(ctx context.Context, q querier, id int64) (ledger.Approval, error) {
	ap, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM team_approvals WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return ap, ledger.Errorc(ledger.ENOTFOUND, "approval_unknown")
	}
	if err != nil {
		return ap, fmt.Errorf("sqlite: approval %d: %w", id, err)
	}
	return ap, nil
}

// OpenApproval stores ap, pending, once per (rental, scope, subject,
// kind, period): created is false when one was stored already (open or
// decided), and stored is then that one, unchanged. A lapsed one is set
// back to pending with ap's owner, figures and time, its decision and
// reminder cleared and its old cards forgotten (created true): the
// system closed it because it no longer applied, so the rental being
// over that bound again is a new question for the admins, which the
// unique key would otherwise leave unasked. Period is a month
// bound's calendar month ("2026-12"), so November's approval does not
// answer for December; "" for the other bounds (EINVALID otherwise, or
// when it does not read as a month). The rental must be of the
// team's ledger (ENOTFOUND "no_rental_id" when there is no such rental).
func (rs *Rosters) OpenApproval(ctx context.Context, ap ledger.Approval) (ledger.Approval, bool, error) {
	if err := validTeamID(ap.TeamID); err != nil {
		return ledger.Approval{}, false, err
	}
	switch ap.Scope {
	case ledger.ScopeTeam, ledger.ScopeMember, ledger.ScopeProject:
	default:
		return ledger.Approval{}, false, ledger.Errorf(ledger.EINVALID, "%q is not a limit's scope", ap.Scope)
	}
	switch ap.Kind {
	case ledger.LimitRate, ledger.LimitGPUs, ledger.LimitMonth:
	default:
		return ledger.Approval{}, false, ledger.Errorf(ledger.EINVALID, "%q is not a limit's bound", ap.Kind)
	}
	if ap.Currency == "" {
		return ledger.Approval{}, false, ledger.Errorc(ledger.EINVALID, "bad_currency", "")
	}
	if err := validPeriod(ap.Kind, ap.Period); err != nil {
		return ledger.Approval{}, false, err
	}
	at := sec(ap.CreatedAt)
	if at.IsZero() {
		at = rs.db.now()
	}
	var (
		out     ledger.Approval
		created bool
	)
	err := rs.db.withWrite(ctx, func(tx *wtx) error {
		var owner int64
		var ledgerID int64
		err := tx.QueryRowContext(ctx, `SELECT user_id, owner FROM rentals WHERE id = ?`, ap.RentalID).Scan(&ledgerID, &owner)
		if err == sql.ErrNoRows {
			return ledger.Errorc(ledger.ENOTFOUND, "no_rental_id", ap.RentalID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: rental %d: %w", ap.RentalID, err)
		}
		if ledgerID != ledger.TeamLedger(ap.TeamID) {
			return ledger.Errorf(ledger.EINVALID, "rental %d is not team %d's", ap.RentalID, ap.TeamID)
		}
		if ap.Owner == 0 {
			ap.Owner = owner
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO team_approvals (team_id, rental_id, owner, scope, subject, kind, period, currency, lim, value, state, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)
			ON CONFLICT (rental_id, scope, subject, kind, period) DO UPDATE SET
				owner = excluded.owner, currency = excluded.currency, lim = excluded.lim, value = excluded.value,
				state = 'pending', created_at = excluded.created_at, decided_by = NULL, decided_at = NULL, reminded_at = NULL
			WHERE team_approvals.state = 'lapsed'`,
			ap.TeamID, ap.RentalID, ap.Owner, string(ap.Scope), ap.Subject, string(ap.Kind), ap.Period, string(ap.Currency),
			ap.Limit.String(), ap.Value.String(), unix(at))
		if err != nil {
			return fmt.Errorf("sqlite: open an approval of rental %d: %w", ap.RentalID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: open an approval of rental %d: %w", ap.RentalID, err)
		}
		created = n == 1
		if created {
			// A reopened lapsed approval's old cards were edited to say it
			// lapsed; the fresh card is the one to edit next time.
			if _, err := tx.ExecContext(ctx, `DELETE FROM team_approval_cards WHERE approval_id IN (SELECT id FROM team_approvals
				WHERE rental_id = ? AND scope = ? AND subject = ? AND kind = ? AND period = ?)`,
				ap.RentalID, string(ap.Scope), ap.Subject, string(ap.Kind), ap.Period); err != nil {
				return fmt.Errorf("sqlite: reopen an approval of rental %d: %w", ap.RentalID, err)
			}
		}
		out, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM team_approvals
			WHERE rental_id = ? AND scope = ? AND subject = ? AND kind = ? AND period = ?`,
			ap.RentalID, string(ap.Scope), ap.Subject, string(ap.Kind), ap.Period))
		if err != nil {
			return fmt.Errorf("sqlite: read back an approval of rental %d: %w", ap.RentalID, err)
		}
		return nil
	})
	if err != nil {
		return ledger.Approval{}, false, err
	}
	return out, created, nil
}

// validPeriod checks an approval's period: "" or a calendar month
// "2006-01" for a month bound ("" asks once per rental, as a caller
// that names no month always did), "" for the others.
func validPeriod(kind ledger.LimitKind, period string) error {
	if kind != ledger.LimitMonth || period == "" {
		if period != "" {
			return ledger.Errorf(ledger.EINVALID, "a %s bound's approval has no period, not %q", kind, period)
		}
		return nil
	}
	if _, err := time.Parse("2006-01", period); err != nil || len(period) != len("2006-01") {
		return ledger.Errorf(ledger.EINVALID, "a month bound's approval needs its month as 2006-01, not %q", period)
	}
	return nil
}

// Approval returns one approval. ENOTFOUND "approval_unknown".
func (rs *Rosters) Approval(ctx context.Context, id int64) (ledger.Approval, error) {
	ap, err := approvalByID(ctx, rs.db.reader, id)
	return ap, storeError(err)
}

// Approvals returns the team's approvals in state (every one for ""),
// oldest first.
func (rs *Rosters) Approvals(ctx context.Context, teamID int64, state ledger.ApprovalState) ([]ledger.Approval, error) {
	return queryAll(ctx, rs.db.reader, "approvals", scanApproval, `SELECT `+approvalCols+` FROM team_approvals
		WHERE team_id = ?1 AND (?2 = '' OR state = ?2) ORDER BY id`, teamID, string(state))
}

// DecideApproval moves approval id from pending to state (approved or
// stopped), by a.Person(), an admin of its team, in one conditional
// update: when it was decided already, by another admin a moment before
// or by the same press delivered twice, ECONFLICT "approval_decided"
// names the stored state and who decided it, and nothing changes; one the
// system closed (lapsed) is ECONFLICT "approval_lapsed".
func (rs *Rosters) DecideApproval(ctx context.Context, a ledger.Action, id int64, state ledger.ApprovalState) (ledger.Approval, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Approval{}, err
	}
	if state != ledger.ApprovalApproved && state != ledger.ApprovalStopped {
		return ledger.Approval{}, ledger.Errorf(ledger.EINVALID, "an approval is decided approved or stopped, not %q", state)
	}
	var out ledger.Approval
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		ap, err := approvalByID(ctx, tx, id)
		if err != nil {
			return err
		}
		j, err := rs.teamAction(ctx, tx, a, ap.TeamID, person, string(state))
		if err != nil {
			return err
		}
		if _, err := adminOf(ctx, tx, ap.TeamID, person); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE team_approvals SET state = ?, decided_by = ?, decided_at = ? WHERE id = ? AND state = 'pending'`,
			string(state), person, unix(j.at), id)
		if err != nil {
			return fmt.Errorf("sqlite: decide approval %d: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: decide approval %d: %w", id, err)
		} else if n != 1 {
			if ap.State == ledger.ApprovalLapsed {
				// The system closed it: nobody decided it, so no one is named.
				return ledger.Errorc(ledger.ECONFLICT, "approval_lapsed")
			}
			who, err := memberDisplay(ctx, tx, ap.TeamID, ap.DecidedBy)
			if err != nil {
				return err
			}
			return ledger.Errorc(ledger.ECONFLICT, "approval_decided", ap.State, who)
		}
		if err := j.target(ctx, tx, ap.RentalID, 0, nil); err != nil {
			return err
		}
		out, err = approvalByID(ctx, tx, id)
		return err
	})
	if err != nil {
		return ledger.Approval{}, err
	}
	return out, nil
}

// Reminded records that the one reminder of approval id went at at; a
// second call keeps the first time. ENOTFOUND "approval_unknown".
func (rs *Rosters) Reminded(ctx context.Context, id int64, at time.Time) error {
	at = sec(at)
	if at.IsZero() {
		at = rs.db.now()
	}
	return rs.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := approvalByID(ctx, tx, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE team_approvals SET reminded_at = ? WHERE id = ? AND reminded_at IS NULL`, unix(at), id)
		if err != nil {
			return fmt.Errorf("sqlite: approval %d reminded: %w", id, err)
		}
		return nil
	})
}

// SetOwner gives rental rentalID of a team's ledger to owner, a current
// member (ENOTFOUND "team_not_member"), by a.Person(): an admin, or the
// owner-to-be claiming a rental nobody owns yet ("[Mine]" on a synced
// rental's question). A member cannot take another's rental
// (EUNAUTHORIZED "team_not_yours": the second of two [Mine] presses
// meets it) nor give one away ("team_admin_only"). The live volumes
// attached to the rental move with it, in the same transaction; no other
// record does. Journaled with the rental and its previous owner.
func (rs *Rosters) SetOwner(ctx context.Context, a ledger.Action, rentalID, owner int64) (*ledger.Rental, error) {
	person, err := actor(a)
	if err != nil {
		return nil, err
	}
	var out *ledger.Rental
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		var (
			ledgerID, prev int64
			name           string
		)
		err := tx.QueryRowContext(ctx, `SELECT user_id, name, owner FROM rentals WHERE id = ?`, rentalID).Scan(&ledgerID, &name, &prev)
		if err == sql.ErrNoRows {
			return ledger.Errorc(ledger.ENOTFOUND, "no_rental_id", rentalID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: rental %d: %w", rentalID, err)
		}
		teamID, ok := ledger.TeamOf(ledgerID)
		if !ok {
			return ledger.Errorf(ledger.EINVALID, "rental %d is in a personal ledger: it has no owner to set", rentalID)
		}
		j, err := rs.teamAction(ctx, tx, a, teamID, person, name)
		if err != nil {
			return err
		}
		by, err := currentMember(ctx, tx, teamID, person)
		if err != nil {
			return err
		}
		if !by.Role.Admin() {
			switch {
			case prev != 0 && prev != person:
				who, err := memberDisplay(ctx, tx, teamID, prev)
				if err != nil {
					return err
				}
				return ledger.Errorc(ledger.EUNAUTHORIZED, "team_not_yours", name, who)
			case owner != person:
				return ledger.Errorc(ledger.EUNAUTHORIZED, "team_admin_only")
			}
		}
		if _, err := currentMember(ctx, tx, teamID, owner); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE rentals SET owner = ? WHERE id = ?`, owner, rentalID); err != nil {
			return fmt.Errorf("sqlite: owner of rental %d: %w", rentalID, err)
		}
		// The live volumes on the rental go with it (as RemoveMember hands
		// them on), so the disk of a rental is charged to whoever owns it.
		if _, err := tx.ExecContext(ctx, `UPDATE volumes SET owner = ? WHERE user_id = ? AND rental_id = ? AND deleted = 0`,
			owner, ledgerID, rentalID); err != nil {
			return fmt.Errorf("sqlite: owner of rental %d's volumes: %w", rentalID, err)
		}
		if err := j.target(ctx, tx, rentalID, 0, map[string]int64{"owner": prev}); err != nil {
			return err
		}
		out, err = loadRental(ctx, tx, rentalID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
