package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.TeamStore's invites: one-time join codes,
// kept as their SHA-256 only, and Join, which uses one up in the
// transaction that admits the person.

// inviteAlphabet has no 0/o or 1/l/i, so a code copied by hand is right.
const inviteAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// inviteLen is a code's length: 31^10, about 2^49 codes, against at most
// MaxOpenInvites live ones per team for a day.
const inviteLen = 10

// newInviteCode draws a code from crypto/rand, each letter uniform over
// inviteAlphabet (bytes past the last whole multiple of its length are
// drawn again).
func newInviteCode() (string, error) {
	const limit = 256 - 256%len(inviteAlphabet)
	out := make([]byte, 0, inviteLen)
	var buf [2 * inviteLen]byte
	for len(out) < inviteLen {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("sqlite: invite code: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < inviteLen {
				out = append(out, inviteAlphabet[int(b)%len(inviteAlphabet)])
			}
		}
	}
	return string(out), nil
}

// inviteHash is what is kept of a code: SHA-256 of it trimmed and in
// lower case, so a code typed in capitals still works.
func inviteHash(code string) [32]byte {
	return sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(code))))
}

const inviteCols = `id, team_id, created_by, expires_at, for_user, for_username, used_by, used_at`

func scanInvite(s scanner) (ledger.Invite, error) {
	var (
		inv          ledger.Invite
		expires      int64
		usedBy, used sql.NullInt64
	)
	if err := s.Scan(&inv.ID, &inv.TeamID, &inv.CreatedBy, &expires, &inv.ForUser, &inv.ForUsername, &usedBy, &used); err != nil {
		return inv, err
	}
	inv.Expires, inv.UsedBy, inv.UsedAt = fromUnix(expires), usedBy.Int64, fromNullUnix(used)
	return inv, nil
}

// CreateInvite makes a one-time code for teamID, made by a.Person() (an
// admin), valid until a.At+InviteTTL and addressed to forUser or
// forUsername when given. The code is returned once; only its hash is
// kept. Errors: ENOTFOUND "team_unknown", "team_not_member";
// EUNAUTHORIZED "team_admin_only"; ECONFLICT "team_invites".
func (rs *Rosters) CreateInvite(ctx context.Context, a ledger.Action, teamID, forUser int64, forUsername string) (string, ledger.Invite, error) {
	person, err := actor(a)
	if err != nil {
		return "", ledger.Invite{}, err
	}
	if err := validTeamID(teamID); err != nil {
		return "", ledger.Invite{}, err
	}
	if forUser < 0 || ledger.IsTeamLedger(forUser) {
		return "", ledger.Invite{}, ledger.Errorf(ledger.EINVALID, "an invite is addressed to a person, not to chat %d", forUser)
	}
	forName := normUsername(forUsername)
	if forUsername != "" && forName == "" {
		return "", ledger.Invite{}, ledger.Errorf(ledger.EINVALID, "%q is not a Telegram username", forUsername)
	}
	var (
		code string
		inv  ledger.Invite
	)
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		j, err := rs.teamAction(ctx, tx, a, teamID, person, "")
		if err != nil {
			return err
		}
		if _, err := adminOf(ctx, tx, teamID, person); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM team_invites WHERE team_id = ? AND used_by IS NULL AND expires_at > ?`,
			teamID, unix(j.at)).Scan(&open); err != nil {
			return fmt.Errorf("sqlite: open invites of team %d: %w", teamID, err)
		}
		if open >= ledger.MaxOpenInvites {
			return ledger.Errorc(ledger.ECONFLICT, "team_invites", ledger.MaxOpenInvites)
		}
		expires := j.at.Add(ledger.InviteTTL)
		// A collision of 2^49 codes is as good as never; two more draws
		// make it never.
		for try := 0; ; try++ {
			if code, err = newInviteCode(); err != nil {
				return err
			}
			h := inviteHash(code)
			res, err := tx.ExecContext(ctx, `INSERT INTO team_invites (team_id, hash, created_by, created_at, expires_at, for_user, for_username)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, teamID, h[:], person, unix(j.at), unix(expires), forUser, forName)
			if isUnique(err) && try < 2 {
				continue
			}
			if err != nil {
				return fmt.Errorf("sqlite: store invite of team %d: %w", teamID, err)
			}
			id, err := res.LastInsertId()
			if err != nil {
				return fmt.Errorf("sqlite: store invite of team %d: %w", teamID, err)
			}
			inv = ledger.Invite{ID: id, TeamID: teamID, CreatedBy: person, ForUser: forUser, ForUsername: forName, Expires: expires}
			return nil
		}
	})
	if err != nil {
		return "", ledger.Invite{}, err
	}
	return code, inv, nil
}

// Join admits a.Person() through code. The code is looked up by its
// hash alone (a wrong code costs one indexed read, whatever it is, and
// takes no write lock);
// then, in the same transaction: used (ECONFLICT "invite_used"),
// expired (EINVALID "invite_expired"), addressed to someone else
// (EUNAUTHORIZED "invite_not_for_you"), made by someone no longer an
// admin of the team (EUNAUTHORIZED "invite_revoked"), a current member already
// (ECONFLICT "team_already_member"), a full team (ECONFLICT "team_full");
// each refusal rolls back and leaves the invite as it was. The invite is
// used up by a conditional update (used_by IS NULL), so of two people
// joining with one code at once, one is admitted. A member who left or
// was removed gets their old row back as a plain member. The result's
// InvitedBy is the invite's maker, read in the same transaction.
func (rs *Rosters) Join(ctx context.Context, a ledger.Action, code, username string, outsider bool) (ledger.Membership, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Membership{}, err
	}
	uname := normUsername(username)
	h := inviteHash(code)
	// A wrong code is answered from the read pool: guessing takes no
	// write lock from the ledger's writers.
	var known int
	if err := rs.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM team_invites WHERE hash = ?`, h[:]).Scan(&known); err != nil {
		return ledger.Membership{}, storeError(fmt.Errorf("sqlite: look up an invite: %w", err))
	}
	if known == 0 {
		return ledger.Membership{}, ledger.Errorc(ledger.ENOTFOUND, "invite_unknown")
	}
	var out ledger.Membership
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		inv, err := scanInvite(tx.QueryRowContext(ctx, `SELECT `+inviteCols+` FROM team_invites WHERE hash = ?`, h[:]))
		if err == sql.ErrNoRows {
			return ledger.Errorc(ledger.ENOTFOUND, "invite_unknown")
		}
		if err != nil {
			return fmt.Errorf("sqlite: look up an invite: %w", err)
		}
		team, err := teamByID(ctx, tx, inv.TeamID)
		if err != nil {
			return err
		}
		j, err := rs.teamAction(ctx, tx, a, inv.TeamID, person, team.Name)
		if err != nil {
			return err
		}
		switch {
		case inv.UsedBy != 0:
			return ledger.Errorc(ledger.ECONFLICT, "invite_used")
		case !j.at.Before(inv.Expires):
			return ledger.Errorc(ledger.EINVALID, "invite_expired", inv.Expires)
		case inv.ForUser != 0 && inv.ForUser != person,
			inv.ForUser == 0 && inv.ForUsername != "" && !strings.EqualFold(inv.ForUsername, uname):
			return ledger.Errorc(ledger.EUNAUTHORIZED, "invite_not_for_you")
		}
		// A code speaks for the admin who made it: once they are removed
		// or demoted it admits no one (their unused codes are expired
		// then too; this also covers codes made before that was done).
		by, err := currentMember(ctx, tx, inv.TeamID, inv.CreatedBy)
		switch {
		case err == nil && by.Role.Admin():
		case err == nil, ledger.ErrorCode(err) == ledger.ENOTFOUND:
			return ledger.Errorc(ledger.EUNAUTHORIZED, "invite_revoked")
		default:
			return err
		}
		switch _, err := currentMember(ctx, tx, inv.TeamID, person); {
		case err == nil:
			return ledger.Errorc(ledger.ECONFLICT, "team_already_member", team.Name)
		case ledger.ErrorCode(err) != ledger.ENOTFOUND:
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM team_members WHERE team_id = ? AND removed_at IS NULL`, inv.TeamID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: members of team %d: %w", inv.TeamID, err)
		}
		if n >= ledger.MaxTeamMembers {
			return ledger.Errorc(ledger.ECONFLICT, "team_full", ledger.MaxTeamMembers)
		}
		res, err := tx.ExecContext(ctx, `UPDATE team_invites SET used_by = ?, used_at = ? WHERE id = ? AND used_by IS NULL`,
			person, unix(j.at), inv.ID)
		if err != nil {
			return fmt.Errorf("sqlite: use invite %d: %w", inv.ID, err)
		}
		if used, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: use invite %d: %w", inv.ID, err)
		} else if used != 1 {
			return ledger.Errorc(ledger.ECONFLICT, "invite_used")
		}
		if uname != "" {
			// Telegram moved the name to this person: it names them only.
			if _, err := tx.ExecContext(ctx, `UPDATE team_members SET username = '' WHERE username = ? COLLATE NOCASE AND user_id <> ?`,
				uname, person); err != nil {
				return fmt.Errorf("sqlite: admit %d to team %d: %w", person, inv.TeamID, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO team_members (team_id, user_id, username, role, joined_at, outsider)
			VALUES (?, ?, ?, 'member', ?, ?)
			ON CONFLICT (team_id, user_id) DO UPDATE SET username = excluded.username, role = 'member',
				joined_at = excluded.joined_at, outsider = excluded.outsider, dm = 0, removed_at = NULL, removed_by = NULL`,
			inv.TeamID, person, uname, unix(j.at), boolInt(outsider)); err != nil {
			return fmt.Errorf("sqlite: admit %d to team %d: %w", person, inv.TeamID, err)
		}
		m, err := currentMember(ctx, tx, inv.TeamID, person)
		if err != nil {
			return err
		}
		out = ledger.Membership{Team: team, Member: m, InvitedBy: by}
		return nil
	})
	if err != nil {
		return ledger.Membership{}, err
	}
	return out, nil
}

// ExpireInvite expires the unused, unexpired invite whose code is code
// at at, in one conditional update, so a code posted where others can
// read it stops working; Join then answers "invite_expired". ok is false
// and nothing changes when no such invite exists (unknown, used or
// expired already). Like Join, a code unknown to the store is answered
// from the read pool and takes no write lock.
func (rs *Rosters) ExpireInvite(ctx context.Context, code string, at time.Time) (int64, bool, error) {
	h := inviteHash(code)
	var known int
	if err := rs.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM team_invites WHERE hash = ? AND used_by IS NULL`, h[:]).Scan(&known); err != nil {
		return 0, false, storeError(fmt.Errorf("sqlite: look up an invite: %w", err))
	}
	if known == 0 {
		return 0, false, nil
	}
	var (
		teamID int64
		ok     bool
	)
	err := rs.db.withWrite(ctx, func(tx *wtx) error {
		teamID, ok = 0, false
		err := tx.QueryRowContext(ctx, `UPDATE team_invites SET expires_at = ?1
			WHERE hash = ?2 AND used_by IS NULL AND expires_at > ?1 RETURNING team_id`, unix(at), h[:]).Scan(&teamID)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sqlite: expire an invite: %w", err)
		}
		ok = true
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return teamID, ok, nil
}
