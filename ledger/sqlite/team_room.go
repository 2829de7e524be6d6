package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.TeamStore's rooms (the group a team's cards
// go to, followed when Telegram migrates it and forgotten when the bot is
// removed) and each person's ledger in use (/use) and default project
// (/project).

// BindRoom makes the group chatID the team's room, replacing its earlier
// room, by a.Person() (an admin). ECONFLICT "room_taken" when the chat is
// another team's room; binding the team's own room again only renews its
// title.
func (rs *Rosters) BindRoom(ctx context.Context, a ledger.Action, teamID, chatID int64, title string) (ledger.Team, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Team{}, err
	}
	if err := validTeamID(teamID); err != nil {
		return ledger.Team{}, err
	}
	if chatID >= 0 || ledger.IsTeamLedger(chatID) {
		return ledger.Team{}, ledger.Errorf(ledger.EINVALID, "chat %d is not a group", chatID)
	}
	title = boundTitle(title)
	var out ledger.Team
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := rs.teamAction(ctx, tx, a, teamID, person, title); err != nil {
			return err
		}
		if _, err := adminOf(ctx, tx, teamID, person); err != nil {
			return err
		}
		switch other, err := scanTeam(tx.QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams WHERE room = ?`, chatID)); {
		case err == sql.ErrNoRows:
		case err != nil:
			return fmt.Errorf("sqlite: team of room %d: %w", chatID, err)
		case other.ID != teamID:
			return ledger.Errorc(ledger.ECONFLICT, "room_taken", other.Name)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE teams SET room = ?, room_title = ? WHERE id = ?`, chatID, title, teamID); err != nil {
			return fmt.Errorf("sqlite: bind room %d to team %d: %w", chatID, teamID, err)
		}
		out, err = teamByID(ctx, tx, teamID)
		return err
	})
	if err != nil {
		return ledger.Team{}, err
	}
	return out, nil
}

// boundTitle keeps a group's title to 128 runes.
func boundTitle(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 128 {
		return string(r[:128])
	}
	return s
}

// UnbindRoom forgets chatID as a room and returns the team it was the
// room of (as it was) and true; false, and no error, when it was none.
func (rs *Rosters) UnbindRoom(ctx context.Context, chatID int64) (ledger.Team, bool, error) {
	var (
		out ledger.Team
		ok  bool
	)
	err := rs.db.withWrite(ctx, func(tx *wtx) error {
		ok = false
		t, err := scanTeam(tx.QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams WHERE room = ?`, chatID))
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sqlite: team of room %d: %w", chatID, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE teams SET room = NULL, room_title = '' WHERE id = ?`, t.ID); err != nil {
			return fmt.Errorf("sqlite: unbind room %d: %w", chatID, err)
		}
		out, ok = t, true
		return nil
	})
	if err != nil {
		return ledger.Team{}, false, err
	}
	return out, ok, nil
}

// MoveRoom follows a group Telegram migrated to a supergroup: the team
// whose room was oldChat has newChat as its room, and is returned with
// true. When newChat is already some team's room (a second migration
// message after the first, or a team bound to the supergroup meanwhile),
// that binding stays and oldChat's team loses its room. No error, and
// false, when oldChat is no room.
func (rs *Rosters) MoveRoom(ctx context.Context, oldChat, newChat int64) (ledger.Team, bool, error) {
	if newChat >= 0 || ledger.IsTeamLedger(newChat) {
		return ledger.Team{}, false, ledger.Errorf(ledger.EINVALID, "chat %d is not a group", newChat)
	}
	var (
		out ledger.Team
		ok  bool
	)
	err := rs.db.withWrite(ctx, func(tx *wtx) error {
		ok = false
		t, err := scanTeam(tx.QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams WHERE room = ?`, oldChat))
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sqlite: team of room %d: %w", oldChat, err)
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM teams WHERE room = ?`, newChat).Scan(&taken); err != nil {
			return fmt.Errorf("sqlite: team of room %d: %w", newChat, err)
		}
		q := `UPDATE teams SET room = ? WHERE id = ?`
		args := []any{newChat, t.ID}
		if taken > 0 {
			q, args = `UPDATE teams SET room = NULL, room_title = '' WHERE id = ?`, []any{t.ID}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("sqlite: move room %d to %d: %w", oldChat, newChat, err)
		}
		out, err = teamByID(ctx, tx, t.ID)
		ok = true
		return err
	})
	if err != nil {
		return ledger.Team{}, false, err
	}
	return out, ok, nil
}

// teamLedgerBase is ledger.TeamLedger(0): a team's ID is this minus its
// ledger's ID, in SQL.
const teamLedgerBase = -(int64(1) << 52)

// Use returns the ledger userID's commands go to: the team they chose
// with /use while they are still in it, else their own.
func (rs *Rosters) Use(ctx context.Context, userID int64) (int64, error) {
	var lid int64
	err := rs.db.reader.QueryRowContext(ctx, `SELECT u.ledger_id FROM team_use u
		JOIN team_members m ON m.team_id = ?2 - u.ledger_id AND m.user_id = u.user_id AND m.removed_at IS NULL
		WHERE u.user_id = ?1`, userID, teamLedgerBase).Scan(&lid)
	if err == sql.ErrNoRows {
		return userID, nil
	}
	if err != nil {
		return 0, storeError(fmt.Errorf("sqlite: ledger in use by %d: %w", userID, err))
	}
	return lid, nil
}

// SetUse sends userID's commands to ledgerID: their own (which forgets
// the choice) or a team's they are in (ENOTFOUND "team_not_member").
func (rs *Rosters) SetUse(ctx context.Context, userID, ledgerID int64) error {
	if userID <= 0 || ledger.IsTeamLedger(userID) {
		return ledger.Errorf(ledger.EINVALID, "%d is no person", userID)
	}
	teamID, isTeam := ledger.TeamOf(ledgerID)
	if ledgerID != userID && !isTeam {
		return ledger.Errorf(ledger.EUNAUTHORIZED, "%d cannot use ledger %d: only their own or a team's", userID, ledgerID)
	}
	return rs.db.withWrite(ctx, func(tx *wtx) error {
		if !isTeam {
			_, err := tx.ExecContext(ctx, `DELETE FROM team_use WHERE user_id = ?`, userID)
			return err
		}
		if _, err := currentMember(ctx, tx, teamID, userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO team_use (user_id, ledger_id) VALUES (?, ?)
			ON CONFLICT (user_id) DO UPDATE SET ledger_id = excluded.ledger_id`, userID, ledgerID)
		return err
	})
}

// Project returns userID's default project in ledgerID ("" for none).
func (rs *Rosters) Project(ctx context.Context, userID, ledgerID int64) (string, error) {
	var p string
	err := rs.db.reader.QueryRowContext(ctx, `SELECT project FROM team_projects WHERE user_id = ? AND ledger_id = ?`, userID, ledgerID).Scan(&p)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", storeError(fmt.Errorf("sqlite: project of %d in %d: %w", userID, ledgerID, err))
	}
	return p, nil
}

// SetProject sets userID's default project in ledgerID (their own, or a
// team's they are in: ENOTFOUND "team_not_member"); "" clears it.
// EINVALID "project_name".
func (rs *Rosters) SetProject(ctx context.Context, userID, ledgerID int64, project string) error {
	if err := ledger.ValidProject(project); err != nil {
		return err
	}
	teamID, isTeam := ledger.TeamOf(ledgerID)
	if ledgerID != userID && !isTeam {
		return ledger.Errorf(ledger.EUNAUTHORIZED, "%d cannot set a project in ledger %d: only their own or a team's", userID, ledgerID)
	}
	return rs.db.withWrite(ctx, func(tx *wtx) error {
		if isTeam {
			if _, err := currentMember(ctx, tx, teamID, userID); err != nil {
				return err
			}
		}
		if project == "" {
			_, err := tx.ExecContext(ctx, `DELETE FROM team_projects WHERE user_id = ? AND ledger_id = ?`, userID, ledgerID)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO team_projects (user_id, ledger_id, project) VALUES (?, ?, ?)
			ON CONFLICT (user_id, ledger_id) DO UPDATE SET project = excluded.project`, userID, ledgerID, project)
		return err
	})
}
