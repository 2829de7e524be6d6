package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// journal is the action row of the transaction in progress.
type journal struct {
	id     int64
	userID int64
	at     time.Time
}

// beginAction checks the action and inserts its journal row, first thing
// in the transaction, so that a duplicate key is reported as EDUPLICATE
// before anything else is looked at (a retried action must not fail with
// "already stopped"). needUser requires the user to exist.
func (jr *Journal) beginAction(ctx context.Context, tx querier, a ledger.Action, kind ledger.ActionKind, name string, undoable, needUser bool) (journal, error) {
	if a.UserID == 0 {
		return journal{}, ledger.Errorf(ledger.EINVALID, "the action has no user")
	}
	// The methods that write a notice take it off the action first.
	if err := noTell(a); err != nil {
		return journal{}, err
	}
	at := sec(a.At)
	if at.IsZero() {
		at = jr.db.now()
	}
	if needUser {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = ?`, a.UserID).Scan(&one)
		if err == sql.ErrNoRows {
			return journal{}, ledger.Errorc(ledger.ENOTFOUND, "not_registered", a.UserID)
		}
		if err != nil {
			return journal{}, fmt.Errorf("sqlite: look up user %d: %w", a.UserID, err)
		}
	}
	var key sql.NullString
	if a.Key != "" {
		key = sql.NullString{String: a.Key, Valid: true}
	}
	switch a.Via {
	case ledger.ViaOther, ledger.ViaCommand, ledger.ViaButton:
	default:
		return journal{}, ledger.Errorf(ledger.EINVALID, "the action came via %q, not a typed command or a button", a.Via)
	}
	// by_id keeps who acted on a team's ledger, so an admin's change to a
	// member's record says who made it and /undo reverses only the
	// person's own entries.
	res, err := tx.ExecContext(ctx, `INSERT INTO actions (user_id, kind, name, at, key, undoable, via, by_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.UserID, string(kind), name, unix(at), key, boolInt(undoable), string(a.Via), a.By)
	if isUnique(err) {
		return journal{}, ledger.Errorf(ledger.EDUPLICATE, "this action (%s) was already applied", a.Key)
	}
	if err != nil {
		return journal{}, fmt.Errorf("sqlite: record action: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return journal{}, fmt.Errorf("sqlite: record action: %w", err)
	}
	return journal{id: id, userID: a.UserID, at: at}, nil
}

// target records what the action changed: the rental or volume (for Undo
// to recompute its released or deleted flag) and the previous values of
// an update, as JSON.
func (j journal) target(ctx context.Context, tx querier, rentalID, volumeID int64, prev any) error {
	var p sql.NullString
	if prev != nil {
		b, err := json.Marshal(prev)
		if err != nil {
			return fmt.Errorf("sqlite: encode previous value: %w", err)
		}
		p = sql.NullString{String: string(b), Valid: true}
	}
	_, err := tx.ExecContext(ctx, `UPDATE actions SET rental_id = ?, volume_id = ?, prev = ? WHERE id = ?`,
		nullID(rentalID), nullID(volumeID), p, j.id)
	if err != nil {
		return fmt.Errorf("sqlite: record action target: %w", err)
	}
	return nil
}

// nullID stores 0 as NULL.
func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// MarkHandled records a.Key for an action that changed nothing, such as a
// question or a message from a user who is not registered (so the user
// need not exist). EDUPLICATE if the key was already recorded; EINVALID if
// a has no key or no user.
func (jr *Journal) MarkHandled(ctx context.Context, a ledger.Action) error {
	if a.Key == "" {
		return ledger.Errorf(ledger.EINVALID, "MarkHandled needs an action key, e.g. tg:42:update:1001")
	}
	return jr.db.withWrite(ctx, func(tx *wtx) error {
		_, err := jr.db.beginAction(ctx, tx, a, ledger.ActionHandled, "", false, false)
		return err
	})
}

// Note journals a message that changed nothing Undo can reverse: kind
// ActionRefused for a refused one, ActionNoUndo for an accepted command
// whose change Undo cannot reverse. Unlike MarkHandled it needs no key
// (the terminal's messages have none); with one, it records the key
// (EDUPLICATE if recorded already). The user must exist.
func (jr *Journal) Note(ctx context.Context, a ledger.Action, kind ledger.ActionKind) error {
	if kind != ledger.ActionRefused && kind != ledger.ActionNoUndo {
		return ledger.Errorf(ledger.EINVALID, "Note records a refused message or a change that cannot be undone, not %q", kind)
	}
	return jr.db.withWrite(ctx, func(tx *wtx) error {
		_, err := jr.db.beginAction(ctx, tx, a, kind, "", false, true)
		return err
	})
}

// NextUndo says what Undo would reverse now, and how it stands among the
// user's journal: whether anything but questions, undone changes and
// their undos was journaled after it (Last), and whether the user's
// latest entry is a refused message (AfterRefusal). ENOTFOUND if there is
// nothing to undo.
func (jr *Journal) NextUndo(ctx context.Context, userID int64) (ledger.UndoNext, error) {
	return jr.NextUndoBy(ctx, userID, 0)
}

// NextUndoBy is NextUndo of the person by on the team's ledger userID:
// only the entries by journaled count (a person undoes their own
// changes, never a teammate's). by 0 is NextUndo.
func (jr *Journal) NextUndoBy(ctx context.Context, userID, by int64) (ledger.UndoNext, error) {
	var (
		n        ledger.UndoNext
		kind     string
		via      string
		at       int64
		later    int
		refusedK sql.NullString
		rental   sql.NullInt64
	)
	err := jr.db.reader.QueryRowContext(ctx, `SELECT id, kind, name, at, via, rental_id FROM actions
		WHERE user_id = ?1 AND undoable = 1 AND undone_by IS NULL AND (?2 = 0 OR by_id = ?2) ORDER BY id DESC LIMIT 1`, userID, by).
		Scan(&n.ID, &kind, &n.Name, &at, &via, &rental)
	if err == sql.ErrNoRows {
		return n, ledger.Errorc(ledger.ENOTFOUND, "nothing_to_undo")
	}
	if err != nil {
		return n, storeError(fmt.Errorf("sqlite: what to undo for user %d: %w", userID, err))
	}
	err = jr.db.reader.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM actions WHERE user_id = ?1 AND id > ?2 AND undone_by IS NULL AND kind NOT IN (?3, ?4, ?5)
			AND (?6 = 0 OR by_id = ?6)),
		(SELECT kind FROM actions WHERE user_id = ?1 AND (?6 = 0 OR by_id = ?6) ORDER BY id DESC LIMIT 1)`,
		userID, n.ID, string(ledger.ActionHandled), string(ledger.ActionUndo), string(ledger.ActionRefused), by).Scan(&later, &refusedK)
	if err != nil {
		return n, storeError(fmt.Errorf("sqlite: what came after action %d of user %d: %w", n.ID, userID, err))
	}
	n.Kind, n.Via, n.At, n.RentalID = ledger.ActionKind(kind), ledger.Via(via), fromUnix(at), rental.Int64
	n.Last = later == 0
	n.AfterRefusal = refusedK.String == string(ledger.ActionRefused)
	return n, nil
}

// undoTables lists the tables whose rows carry the action that inserted
// them, children before parents, so deleting in this order never breaks a
// foreign key.
var undoTables = []string{
	"volume_events", "volume_prices", "volumes", "charges", "traffic_usage", "traffic_prices", "rental_events",
	"topups", "balances", "rentals",
}

// Undo reverses the user's most recent action that is not undone yet: it
// deletes the rows that action inserted, restores the values it replaced
// and recomputes the released/deleted flag of the rental or volume it
// touched (so undoing a release makes the rental live again). Undo is a
// stack: calling it twice reverses the two most recent actions. The undo
// is journaled (with a.Key) but cannot itself be undone.
//
// Undoing an answer to an announced instance puts the instance back as
// it was: an adopt (ActionAdopt) deletes the rental it created, with its
// agent token, and the instance is pending (or ignored) again with its
// card; an ignore (ActionIgnore) makes it pending again.
//
// A stop or release that an agent confirmed (UpdateOrder) is not on the
// stack: the host really stopped or went away. Undo reverses only the
// user's own changes, and refuses one that such a confirmation followed
// on the same rental.
//
// Errors: ENOTFOUND if there is nothing to undo or the user does not
// exist; ECONFLICT if undoing a release would give two live rentals the
// same name, or if the rental was stopped or released by its agent after
// the change; EDUPLICATE for a repeated key.
func (jr *Journal) Undo(ctx context.Context, a ledger.Action) (ledger.UndoResult, error) {
	return jr.undo(ctx, a, 0)
}

// UndoAction is Undo of the journal entry id alone: it reverses id only
// while id is what Undo would reverse. ECONFLICT "undo_done" when id was
// undone already (a second press of the same button), "undo_stale" when
// another change came on top of it since the user was asked; ENOTFOUND
// when the user has no such entry. Each changes nothing.
func (jr *Journal) UndoAction(ctx context.Context, a ledger.Action, id int64) (ledger.UndoResult, error) {
	if id <= 0 {
		return ledger.UndoResult{}, ledger.Errorf(ledger.EINVALID, "the action to undo has no ID")
	}
	return jr.undo(ctx, a, id)
}

// undo is Undo, of the entry want only when want is not 0.
func (jr *Journal) undo(ctx context.Context, a ledger.Action, want int64) (ledger.UndoResult, error) {
	var out ledger.UndoResult
	err := jr.db.withWrite(ctx, func(tx *wtx) error {
		j, err := jr.db.beginAction(ctx, tx, a, ledger.ActionUndo, "", false, true)
		if err != nil {
			return err
		}
		// On a team's ledger a person undoes their own entries only.
		if _, err := teamActor(ctx, tx, a); err != nil {
			return err
		}
		by := undoBy(a)
		var (
			id                 int64
			kindText, name     string
			at                 int64
			rentalID, volumeID sql.NullInt64
			prev               sql.NullString
			instance           int64
		)
		err = tx.QueryRowContext(ctx, `SELECT id, kind, name, at, rental_id, volume_id, prev FROM actions
			WHERE user_id = ?1 AND undoable = 1 AND undone_by IS NULL AND (?2 = 0 OR by_id = ?2) ORDER BY id DESC LIMIT 1`, j.userID, by).
			Scan(&id, &kindText, &name, &at, &rentalID, &volumeID, &prev)
		if want != 0 && (err == sql.ErrNoRows || err == nil && id != want) {
			return wantedUndo(ctx, tx, j.userID, by, want)
		}
		if err == sql.ErrNoRows {
			return ledger.Errorc(ledger.ENOTFOUND, "nothing_to_undo")
		}
		if err != nil {
			return fmt.Errorf("sqlite: find the action to undo: %w", err)
		}
		kind := ledger.ActionKind(kindText)
		if err := laterByOthers(ctx, tx, j.userID, by, id, rentalID.Int64, volumeID.Int64, kind, name); err != nil {
			return err
		}
		switch kind {
		case ledger.ActionRent, ledger.ActionAdopt, ledger.ActionStop, ledger.ActionResume, ledger.ActionRelease:
			if err := laterAgentAction(ctx, tx, id, rentalID.Int64, kind, name); err != nil {
				return err
			}
		}
		for _, t := range undoTables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE action_id = ?`, id); err != nil {
				return fmt.Errorf("sqlite: undo %s: delete from %s: %w", kind, t, err)
			}
		}
		switch kind {
		case ledger.ActionAdopt, ledger.ActionIgnore:
			// The rental an adopt created is gone with its rows (its agent
			// token with it); the instance waits for an answer again.
			if !prev.Valid {
				break
			}
			if instance, err = undoInstance(ctx, tx, kind, prev.String); err != nil {
				return err
			}
		case ledger.ActionSettings:
			if err := restoreUser(ctx, tx, j.userID, prev.String); err != nil {
				return err
			}
		case ledger.ActionTraffic:
			// A change from a time on (SetTrafficPriceAt) is only its row,
			// deleted above; SetTraffic kept the old terms.
			if !prev.Valid {
				break
			}
			if err := restoreTraffic(ctx, tx, rentalID.Int64, prev.String); err != nil {
				return err
			}
		case ledger.ActionStoragePrice:
			// A change from a time on (SetVolumePriceAt) is only its row,
			// deleted above; a correction of the first price kept the old one.
			if !prev.Valid {
				break
			}
			if err := restoreVolumePrice(ctx, tx, volumeID.Int64, prev.String); err != nil {
				return err
			}
		default:
			// A record's deletion or correction (DeleteRecord, FixRecord)
			// kept the row it replaced.
			if del, ok := recordUndo(kind); ok && prev.Valid {
				if err := restoreRecord(ctx, tx, del, prev.String); err != nil {
					return err
				}
			}
		}
		if rentalID.Valid {
			_, err := tx.ExecContext(ctx, `UPDATE rentals SET released =
				EXISTS (SELECT 1 FROM rental_events e WHERE e.rental_id = rentals.id AND e.kind = 'release')
				WHERE id = ?`, rentalID.Int64)
			if err != nil {
				return constraintError(err, "undo "+string(kind),
					fmt.Sprintf("cannot undo the release of %s: another unreleased rental is named %s (release it first)", name, name))
			}
		}
		if volumeID.Valid {
			_, err := tx.ExecContext(ctx, `UPDATE volumes SET deleted =
				EXISTS (SELECT 1 FROM volume_events e WHERE e.volume_id = volumes.id AND e.kind = 'delete')
				WHERE id = ?`, volumeID.Int64)
			if err != nil {
				return constraintError(err, "undo "+string(kind),
					fmt.Sprintf("cannot undo the deletion of volume %s: another volume is named %s (delete it first)", name, name))
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET undone_by = ? WHERE id = ?`, j.id, id); err != nil {
			return fmt.Errorf("sqlite: mark action undone: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ? WHERE id = ?`, name, j.id); err != nil {
			return fmt.Errorf("sqlite: record undo: %w", err)
		}
		out = ledger.UndoResult{Kind: kind, Name: name, At: fromUnix(at), Instance: instance, RentalID: rentalID.Int64, VolumeID: volumeID.Int64}
		return nil
	})
	return out, err
}

// undoBy is the person whose entries Undo reverses: a.By on a team's
// ledger, 0 (every entry of the ledger) on a personal one.
func undoBy(a ledger.Action) int64 {
	if ledger.IsTeamLedger(a.UserID) {
		return a.By
	}
	return 0
}

// laterByOthers refuses, on a team's ledger (by ≠ 0), to undo a
// person's entry id when someone else changed the same rental or volume
// after it (a stop, a charge on it, the sync): a person's stack is only
// their own entries, and undoing a rent under a teammate's stop would
// take the teammate's change with it. ECONFLICT "undo_stale", changing
// nothing.
func laterByOthers(ctx context.Context, tx querier, ledgerID, by, id, rentalID, volumeID int64, kind ledger.ActionKind, name string) error {
	if by == 0 || rentalID == 0 && volumeID == 0 {
		return nil
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM actions
		WHERE user_id = ?1 AND id > ?2 AND by_id <> ?3 AND undone_by IS NULL AND kind NOT IN (?6, ?7, ?8, ?9)
			AND ((?4 <> 0 AND rental_id = ?4) OR (?5 <> 0 AND volume_id = ?5))`,
		ledgerID, id, by, rentalID, volumeID, string(ledger.ActionHandled), string(ledger.ActionRefused),
		string(ledger.ActionUndo), string(ledger.ActionNoUndo)).Scan(&n)
	if err != nil {
		return fmt.Errorf("sqlite: changes by others after action %d: %w", id, err)
	}
	if n > 0 {
		return ledger.Errorc(ledger.ECONFLICT, "undo_stale", kind, name)
	}
	return nil
}

// wantedUndo is the error of an UndoAction of want when want is not what
// Undo would reverse: undone already, or beneath a later change.
func wantedUndo(ctx context.Context, tx querier, userID, by, want int64) error {
	var kind, name string
	var undone bool
	err := tx.QueryRowContext(ctx, `SELECT kind, name, undone_by IS NOT NULL FROM actions
		WHERE id = ?1 AND user_id = ?2 AND undoable = 1 AND (?3 = 0 OR by_id = ?3)`, want, userID, by).
		Scan(&kind, &name, &undone)
	if err == sql.ErrNoRows {
		return ledger.Errorf(ledger.ENOTFOUND, "there is no change %d to undo", want)
	}
	if err != nil {
		return fmt.Errorf("sqlite: look up action %d to undo: %w", want, err)
	}
	if undone {
		return ledger.Errorc(ledger.ECONFLICT, "undo_done", ledger.ActionKind(kind), name)
	}
	return ledger.Errorc(ledger.ECONFLICT, "undo_stale", ledger.ActionKind(kind), name)
}

// laterAgentAction refuses to undo action id (a rent, stop, resume or
// release of rental rentalID called name) when the rental was stopped or released by its
// agent after it. Those confirmations are not undoable (the host really
// stopped or went away), and reversing an earlier change beneath one would
// leave the rental's events out of order (two stops in a row) or delete a
// rental whose release is on record.
func laterAgentAction(ctx context.Context, tx querier, id, rentalID int64, kind ledger.ActionKind, name string) error {
	var later string
	err := tx.QueryRowContext(ctx, `SELECT kind FROM actions WHERE rental_id = ? AND id > ? AND undoable = 0
		AND undone_by IS NULL AND kind IN (?, ?) ORDER BY id DESC LIMIT 1`, rentalID, id, string(ledger.ActionStop), string(ledger.ActionRelease)).Scan(&later)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: undo %s: look for later agent actions: %w", kind, err)
	}
	// The change undone is named by the event it recorded, which the
	// edges render in the user's language.
	what := map[ledger.ActionKind]ledger.EventKind{ledger.ActionRent: ledger.EventStart, ledger.ActionAdopt: ledger.EventStart, ledger.ActionStop: ledger.EventStop,
		ledger.ActionResume: ledger.EventResume, ledger.ActionRelease: ledger.EventRelease}[kind]
	if what == "" {
		what = ledger.EventKind(kind)
	}
	key := "undo_after_agent_stop"
	if ledger.ActionKind(later) == ledger.ActionRelease {
		key = "undo_after_agent_release"
	}
	return ledger.Errorc(ledger.ECONFLICT, key, what, name)
}

// ActionRecord is one row of a user's journal, for display.
type ActionRecord struct {
	ID       int64
	Kind     string
	Name     string
	At       time.Time
	Undoable bool // true while it can still be undone
}

// Actions returns the user's most recent journal entries, newest first, at
// most limit of them (the undo stack's top is the first Undoable one).
func (jr *Journal) Actions(ctx context.Context, userID int64, limit int) ([]ActionRecord, error) {
	if limit <= 0 {
		return nil, ledger.Errorf(ledger.EINVALID, "limit must be positive, e.g. 10")
	}
	rows, err := jr.db.reader.QueryContext(ctx, `SELECT id, kind, name, at, undoable = 1 AND undone_by IS NULL
		FROM actions WHERE user_id = ? AND kind <> ? ORDER BY id DESC LIMIT ?`, userID, string(ledger.ActionHandled), limit)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: actions of user %d: %w", userID, err))
	}
	defer rows.Close()
	var out []ActionRecord
	for rows.Next() {
		var r ActionRecord
		var at int64
		if err := rows.Scan(&r.ID, &r.Kind, &r.Name, &at, &r.Undoable); err != nil {
			return nil, storeError(fmt.Errorf("sqlite: actions of user %d: %w", userID, err))
		}
		r.At = fromUnix(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(fmt.Errorf("sqlite: actions of user %d: %w", userID, err))
	}
	return out, nil
}
