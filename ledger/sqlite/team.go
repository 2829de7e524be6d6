package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.TeamStore's teams, members, invites, rooms
// and each person's choice of ledger and project; team_limits.go has the
// limits, the approvals and the owner of a record.
//
// A team's ledger is a row of users under ledger.TeamLedger(id), made in
// the same transaction as the team, so every other table serves it
// unchanged. Each change that takes an Action is journaled in the team's
// ledger (kind ledger.ActionTeam, never undoable) with by_id the person
// acting, in the transaction that makes it: a retried Action.Key is
// EDUPLICATE and changes nothing. Every role check runs inside that
// transaction, so a member removed or demoted a moment earlier is refused.

const teamCols = `id, name, created_by, created_at, room, room_title`

func scanTeam(s scanner) (ledger.Team, error) {
	var (
		t       ledger.Team
		created int64
		room    sql.NullInt64
	)
	if err := s.Scan(&t.ID, &t.Name, &t.CreatedBy, &created, &room, &t.RoomTitle); err != nil {
		return t, err
	}
	t.CreatedAt, t.Room = fromUnix(created), room.Int64
	return t, nil
}

const memberCols = `team_id, user_id, username, role, joined_at, outsider, dm`

// memberOrder lists owners, then admins, then members, each in joining
// order (a rejoined member's row keeps its rowid: joined_at decides).
const memberOrder = ` ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, joined_at, rowid`

func scanMember(s scanner) (ledger.Member, error) {
	var (
		m            ledger.Member
		role         string
		joined       int64
		outsider, dm bool
	)
	if err := s.Scan(&m.TeamID, &m.UserID, &m.Username, &role, &joined, &outsider, &dm); err != nil {
		return m, err
	}
	m.Role, m.JoinedAt, m.Outsider, m.DM = ledger.Role(role), fromUnix(joined), outsider, dm
	return m, nil
}

// teamByID reads a team with q. ENOTFOUND "team_unknown".
func teamByID(ctx context.Context, q querier, id int64) (ledger.Team, error) {
	t, err := scanTeam(q.QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return t, ledger.Errorc(ledger.ENOTFOUND, "team_unknown")
	}
	if err != nil {
		return t, fmt.Errorf("sqlite: team %d: %w", id, err)
	}
	return t, nil
}

// currentMember reads userID's row in the team while they are a member.
// ENOTFOUND "team_not_member" when they never were, left or were removed.
func currentMember(ctx context.Context, q querier, teamID, userID int64) (ledger.Member, error) {
	m, err := scanMember(q.QueryRowContext(ctx, `SELECT `+memberCols+` FROM team_members
		WHERE team_id = ? AND user_id = ? AND removed_at IS NULL`, teamID, userID))
	if err == sql.ErrNoRows {
		return m, ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
	}
	if err != nil {
		return m, fmt.Errorf("sqlite: member %d of team %d: %w", userID, teamID, err)
	}
	return m, nil
}

// adminOf is currentMember for someone who must be an admin or an owner
// of the team: EUNAUTHORIZED "team_admin_only" otherwise.
func adminOf(ctx context.Context, q querier, teamID, userID int64) (ledger.Member, error) {
	m, err := currentMember(ctx, q, teamID, userID)
	if err != nil {
		return m, err
	}
	if !m.Role.Admin() {
		return m, ledger.Errorc(ledger.EUNAUTHORIZED, "team_admin_only")
	}
	return m, nil
}

// countOwners counts the team's current owners.
func countOwners(ctx context.Context, q querier, teamID int64) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM team_members WHERE team_id = ? AND role = 'owner' AND removed_at IS NULL`, teamID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: owners of team %d: %w", teamID, err)
	}
	return n, nil
}

// actor is the person an Action on a team is made by: a.By, or the
// person whose own ledger a.UserID is. A team's ledger acting for itself
// (a.By 0 on a team's ledger) is no person.
func actor(a ledger.Action) (int64, error) {
	p := a.Person()
	if p <= 0 || ledger.IsTeamLedger(p) {
		return 0, ledger.Errorf(ledger.EINVALID, "a team's change needs the person making it (Action.By)")
	}
	return p, nil
}

// validTeamID refuses an ID no team's ledger can hold, as no such team.
func validTeamID(teamID int64) error {
	if teamID < 1 || teamID > ledger.MaxTeamID {
		return ledger.Errorc(ledger.ENOTFOUND, "team_unknown")
	}
	return nil
}

// teamAction journals a on team teamID's ledger as an ActionTeam entry
// named name, made by person: the first thing in the transaction, so a
// retried key is EDUPLICATE before anything is looked at.
func (rs *Rosters) teamAction(ctx context.Context, tx *wtx, a ledger.Action, teamID, person int64, name string) (journal, error) {
	ta := a
	ta.UserID, ta.By = ledger.TeamLedger(teamID), person
	j, err := rs.db.beginAction(ctx, tx, ta, ledger.ActionTeam, name, false, true)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		// The team's ledger is made with the team: none, no team.
		return j, ledger.Errorc(ledger.ENOTFOUND, "team_unknown")
	}
	return j, err
}

// normUsername is a Telegram username as stored: without '@', and ""
// for anything Telegram would not give (5 to 32 letters, digits or '_';
// a few are shorter), so that a name shown in a group is never markup.
func normUsername(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "@")
	if len(s) == 0 || len(s) > 32 {
		return ""
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return ""
		}
	}
	return s
}

// CreateTeam makes a team named name owned by a.Person(), its ledger (a
// users row under ledger.TeamLedger: the creator's language and zone,
// the default settings) and the owner's member row, in one transaction.
// The creator must have a ledger of their own (ENOTFOUND
// "not_registered"): a person admitted only into a team cannot make one.
// Errors: EINVALID "team_name"; ECONFLICT "team_name_taken", "teams_owned";
// EDUPLICATE for a retried key.
func (rs *Rosters) CreateTeam(ctx context.Context, a ledger.Action, name, username string) (ledger.Team, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Team{}, err
	}
	if err := ledger.ValidTeamName(name); err != nil {
		return ledger.Team{}, err
	}
	var out ledger.Team
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		ca := a
		ca.UserID, ca.By = person, 0
		j, err := rs.db.beginAction(ctx, tx, ca, ledger.ActionTeam, name, false, true)
		if err != nil {
			return err
		}
		creator, err := userByID(ctx, tx, person)
		if err != nil {
			return err
		}
		var owned int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM teams WHERE created_by = ?`, person).Scan(&owned); err != nil {
			return fmt.Errorf("sqlite: teams of %d: %w", person, err)
		}
		if owned >= ledger.MaxTeamsOwned {
			return ledger.Errorc(ledger.ECONFLICT, "teams_owned", ledger.MaxTeamsOwned)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO teams (name, name_key, created_by, created_at) VALUES (?, ?, ?, ?)`,
			name, strings.ToLower(name), person, unix(j.at))
		if isUnique(err) {
			return ledger.Errorc(ledger.ECONFLICT, "team_name_taken", name)
		}
		if err != nil {
			return fmt.Errorf("sqlite: create team %q: %w", name, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("sqlite: create team %q: %w", name, err)
		}
		if id > ledger.MaxTeamID {
			return ledger.Errorf(ledger.EINTERNAL, "team ID %d is past the largest a ledger ID holds", id)
		}
		lid := ledger.TeamLedger(id)
		s := ledger.DefaultSettings()
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			lid, creator.Lang, creator.TZ, s.SummaryAt, int64(s.IdleWarn), int64(s.Silent), s.QuietFrom, s.QuietTo,
			int64(s.LongRun), unix(j.at), boolInt(s.BenchOff)); err != nil {
			return fmt.Errorf("sqlite: create team %q's ledger: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO team_members (team_id, user_id, username, role, joined_at) VALUES (?, ?, ?, 'owner', ?)`,
			id, person, normUsername(username), unix(j.at)); err != nil {
			return fmt.Errorf("sqlite: create team %q's owner: %w", name, err)
		}
		// The entry belongs to the team's journal, made by its creator.
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET user_id = ?, by_id = ? WHERE id = ?`, lid, person, j.id); err != nil {
			return fmt.Errorf("sqlite: journal team %q: %w", name, err)
		}
		out, err = teamByID(ctx, tx, id)
		return err
	})
	if err != nil {
		return ledger.Team{}, err
	}
	return out, nil
}

// Team returns a team by ID. ENOTFOUND "team_unknown".
func (rs *Rosters) Team(ctx context.Context, teamID int64) (ledger.Team, error) {
	if err := validTeamID(teamID); err != nil {
		return ledger.Team{}, err
	}
	t, err := teamByID(ctx, rs.db.reader, teamID)
	return t, storeError(err)
}

// TeamByName returns the team called name, in any case. ENOTFOUND
// "team_unknown".
func (rs *Rosters) TeamByName(ctx context.Context, name string) (ledger.Team, error) {
	t, err := scanTeam(rs.db.reader.QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams WHERE name_key = ?`,
		strings.ToLower(strings.TrimSpace(name))))
	if err == sql.ErrNoRows {
		return t, ledger.Errorc(ledger.ENOTFOUND, "team_unknown")
	}
	if err != nil {
		return t, storeError(fmt.Errorf("sqlite: team called %q: %w", name, err))
	}
	return t, nil
}

// TeamByRoom returns the team whose room is chatID. ENOTFOUND
// "team_unknown".
func (rs *Rosters) TeamByRoom(ctx context.Context, chatID int64) (ledger.Team, error) {
	t, err := scanTeam(rs.db.reader.QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams WHERE room = ?`, chatID))
	if err == sql.ErrNoRows {
		return t, ledger.Errorc(ledger.ENOTFOUND, "team_unknown")
	}
	if err != nil {
		return t, storeError(fmt.Errorf("sqlite: team of room %d: %w", chatID, err))
	}
	return t, nil
}

// Teams returns every team in ID order.
func (rs *Rosters) Teams(ctx context.Context) ([]ledger.Team, error) {
	return queryAll(ctx, rs.db.reader, "teams", scanTeam, `SELECT `+teamCols+` FROM teams ORDER BY id`)
}

// TeamsOf returns the teams userID is a current member of, in ID order.
func (rs *Rosters) TeamsOf(ctx context.Context, userID int64) ([]ledger.Membership, error) {
	return queryAll(ctx, rs.db.reader, "teams of a person", func(s scanner) (ledger.Membership, error) {
		var (
			ms           ledger.Membership
			created      int64
			room         sql.NullInt64
			role         string
			joined       int64
			outsider, dm bool
		)
		err := s.Scan(&ms.Team.ID, &ms.Team.Name, &ms.Team.CreatedBy, &created, &room, &ms.Team.RoomTitle,
			&ms.Member.TeamID, &ms.Member.UserID, &ms.Member.Username, &role, &joined, &outsider, &dm)
		ms.Team.CreatedAt, ms.Team.Room = fromUnix(created), room.Int64
		ms.Member.Role, ms.Member.JoinedAt, ms.Member.Outsider, ms.Member.DM = ledger.Role(role), fromUnix(joined), outsider, dm
		return ms, err
	}, `SELECT t.id, t.name, t.created_by, t.created_at, t.room, t.room_title,
		m.team_id, m.user_id, m.username, m.role, m.joined_at, m.outsider, m.dm
		FROM team_members m JOIN teams t ON t.id = m.team_id
		WHERE m.user_id = ? AND m.removed_at IS NULL ORDER BY t.id`, userID)
}

// Member returns a current member. ENOTFOUND "team_not_member".
func (rs *Rosters) Member(ctx context.Context, teamID, userID int64) (ledger.Member, error) {
	m, err := currentMember(ctx, rs.db.reader, teamID, userID)
	return m, storeError(err)
}

// Members returns the team's current members: owners, then admins, then
// members, each in joining order.
func (rs *Rosters) Members(ctx context.Context, teamID int64) ([]ledger.Member, error) {
	return queryAll(ctx, rs.db.reader, "members", scanMember, `SELECT `+memberCols+` FROM team_members
		WHERE team_id = ? AND removed_at IS NULL`+memberOrder, teamID)
}

// MemberByUsername finds a current member by username, without '@', in
// any case. ENOTFOUND "team_not_member".
func (rs *Rosters) MemberByUsername(ctx context.Context, teamID int64, username string) (ledger.Member, error) {
	u := normUsername(username)
	if u == "" {
		return ledger.Member{}, ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
	}
	m, err := scanMember(rs.db.reader.QueryRowContext(ctx, `SELECT `+memberCols+` FROM team_members
		WHERE team_id = ? AND username = ? COLLATE NOCASE AND removed_at IS NULL`+memberOrder+` LIMIT 1`, teamID, u))
	if err == sql.ErrNoRows {
		return m, ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
	}
	if err != nil {
		return m, storeError(fmt.Errorf("sqlite: member @%s of team %d: %w", u, teamID, err))
	}
	return m, nil
}

// Outsiders returns, in order, the user IDs of every current member
// admitted outside the allow list.
func (rs *Rosters) Outsiders(ctx context.Context) ([]int64, error) {
	return queryAll(ctx, rs.db.reader, "outsiders", func(s scanner) (int64, error) {
		var id int64
		err := s.Scan(&id)
		return id, err
	}, `SELECT DISTINCT user_id FROM team_members WHERE outsider = 1 AND removed_at IS NULL ORDER BY user_id`)
}

// SeenUsername records the username userID was last seen with on their
// current member rows. The chat calls it on every update, so it only
// reads unless the name changed; a name Telegram moved from someone else
// to userID is taken off that person's rows, so a username names one
// member.
func (rs *Rosters) SeenUsername(ctx context.Context, userID int64, username string) error {
	u := normUsername(username)
	var stale int
	err := rs.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM team_members
		WHERE user_id = ? AND removed_at IS NULL AND username <> ?`, userID, u).Scan(&stale)
	if err != nil {
		return storeError(fmt.Errorf("sqlite: username of %d: %w", userID, err))
	}
	if stale == 0 {
		return nil
	}
	return rs.db.withWrite(ctx, func(tx *wtx) error {
		if u != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE team_members SET username = ''
				WHERE username = ? COLLATE NOCASE AND user_id <> ?`, u, userID); err != nil {
				return fmt.Errorf("sqlite: username of %d: %w", userID, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE team_members SET username = ?
			WHERE user_id = ? AND removed_at IS NULL AND username <> ?`, u, userID, u); err != nil {
			return fmt.Errorf("sqlite: username of %d: %w", userID, err)
		}
		return nil
	})
}

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
// (EUNAUTHORIZED "invite_not_for_you"), a current member already
// (ECONFLICT "team_already_member"), a full team (ECONFLICT "team_full");
// each refusal rolls back and leaves the invite as it was. The invite is
// used up by a conditional update (used_by IS NULL), so of two people
// joining with one code at once, one is admitted. A member who left or
// was removed gets their old row back as a plain member.
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
		out = ledger.Membership{Team: team, Member: m}
		return nil
	})
	if err != nil {
		return ledger.Membership{}, err
	}
	return out, nil
}

// SetRole sets userID's role in the team, by a.Person(): an admin makes
// a member an admin or an admin a member; making or unmaking an owner
// takes an owner (EUNAUTHORIZED "team_owner_only"); the last owner keeps
// the role (ECONFLICT "team_last_owner").
func (rs *Rosters) SetRole(ctx context.Context, a ledger.Action, teamID, userID int64, role ledger.Role) (ledger.Member, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Member{}, err
	}
	if err := validTeamID(teamID); err != nil {
		return ledger.Member{}, err
	}
	if !role.Valid() {
		return ledger.Member{}, ledger.Errorf(ledger.EINVALID, "%q is not a role: owner, admin or member", role)
	}
	var out ledger.Member
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		j, err := rs.teamAction(ctx, tx, a, teamID, person, string(role))
		if err != nil {
			return err
		}
		by, err := adminOf(ctx, tx, teamID, person)
		if err != nil {
			return err
		}
		m, err := currentMember(ctx, tx, teamID, userID)
		if err != nil {
			return err
		}
		if (role == ledger.RoleOwner || m.Role == ledger.RoleOwner) && by.Role != ledger.RoleOwner {
			return ledger.Errorc(ledger.EUNAUTHORIZED, "team_owner_only")
		}
		if m.Role == ledger.RoleOwner && role != ledger.RoleOwner {
			if n, err := countOwners(ctx, tx, teamID); err != nil {
				return err
			} else if n <= 1 {
				return ledger.Errorc(ledger.ECONFLICT, "team_last_owner")
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE team_members SET role = ? WHERE team_id = ? AND user_id = ?`, string(role), teamID, userID); err != nil {
			return fmt.Errorf("sqlite: role of %d in team %d: %w", userID, teamID, err)
		}
		if err := j.target(ctx, tx, 0, 0, map[string]any{"user": userID, "role": m.Role}); err != nil {
			return err
		}
		out, err = currentMember(ctx, tx, teamID, userID)
		return err
	})
	if err != nil {
		return ledger.Member{}, err
	}
	return out, nil
}

// RemoveMember takes userID out of the team: a.Person() is an admin, or
// userID leaving. Removing an owner takes an owner, and the last owner
// stays (ECONFLICT "team_last_owner"). The member row stays, marked
// removed, so the history still names them. Their unreleased rentals and
// live volumes in the team's ledger pass to handTo, a current admin or
// owner other than userID (EINVALID "team_hand_to" otherwise; 0 picks the
// team's first owner who is not userID); the enrolment tokens they made
// for the team are revoked; their /use of the team ends. It returns the
// names of the rentals handed over, in ID order.
func (rs *Rosters) RemoveMember(ctx context.Context, a ledger.Action, teamID, userID, handTo int64) ([]string, error) {
	person, err := actor(a)
	if err != nil {
		return nil, err
	}
	if err := validTeamID(teamID); err != nil {
		return nil, err
	}
	var handed []string
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		handed = nil
		j, err := rs.teamAction(ctx, tx, a, teamID, person, "")
		if err != nil {
			return err
		}
		var by ledger.Member
		if person == userID {
			by, err = currentMember(ctx, tx, teamID, person)
		} else {
			by, err = adminOf(ctx, tx, teamID, person)
		}
		if err != nil {
			return err
		}
		m, err := currentMember(ctx, tx, teamID, userID)
		if err != nil {
			return err
		}
		if m.Role == ledger.RoleOwner {
			if by.Role != ledger.RoleOwner {
				return ledger.Errorc(ledger.EUNAUTHORIZED, "team_owner_only")
			}
			if n, err := countOwners(ctx, tx, teamID); err != nil {
				return err
			} else if n <= 1 {
				return ledger.Errorc(ledger.ECONFLICT, "team_last_owner")
			}
		}
		if handTo == 0 {
			err := tx.QueryRowContext(ctx, `SELECT user_id FROM team_members WHERE team_id = ? AND role = 'owner' AND removed_at IS NULL
				AND user_id <> ? ORDER BY joined_at, rowid LIMIT 1`, teamID, userID).Scan(&handTo)
			if err != nil && err != sql.ErrNoRows {
				return fmt.Errorf("sqlite: owner of team %d: %w", teamID, err)
			}
		}
		if handTo == userID {
			return ledger.Errorc(ledger.EINVALID, "team_hand_to")
		}
		if to, err := currentMember(ctx, tx, teamID, handTo); err != nil || !to.Role.Admin() {
			if err != nil && ledger.ErrorCode(err) != ledger.ENOTFOUND {
				return err
			}
			return ledger.Errorc(ledger.EINVALID, "team_hand_to")
		}
		lid := ledger.TeamLedger(teamID)
		rows, err := tx.QueryContext(ctx, `SELECT name FROM rentals WHERE user_id = ? AND owner = ? AND released = 0 ORDER BY id`, lid, userID)
		if err != nil {
			return fmt.Errorf("sqlite: rentals of %d in team %d: %w", userID, teamID, err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: rentals of %d in team %d: %w", userID, teamID, err)
			}
			handed = append(handed, name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: rentals of %d in team %d: %w", userID, teamID, err)
		}
		for _, q := range []string{
			`UPDATE rentals SET owner = ?1 WHERE user_id = ?2 AND owner = ?3 AND released = 0`,
			`UPDATE volumes SET owner = ?1 WHERE user_id = ?2 AND owner = ?3 AND deleted = 0`,
		} {
			if _, err := tx.ExecContext(ctx, q, handTo, lid, userID); err != nil {
				return fmt.Errorf("sqlite: hand %d's records in team %d to %d: %w", userID, teamID, handTo, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE enrol_tokens SET revoked_at = ? WHERE user_id = ? AND created_by = ? AND revoked_at IS NULL`,
			unix(j.at), lid, userID); err != nil {
			return fmt.Errorf("sqlite: revoke %d's enrolment tokens of team %d: %w", userID, teamID, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE team_members SET removed_at = ?, removed_by = ? WHERE team_id = ? AND user_id = ?`,
			unix(j.at), person, teamID, userID); err != nil {
			return fmt.Errorf("sqlite: remove %d from team %d: %w", userID, teamID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM team_use WHERE user_id = ? AND ledger_id = ?`, userID, lid); err != nil {
			return fmt.Errorf("sqlite: remove %d from team %d: %w", userID, teamID, err)
		}
		return j.target(ctx, tx, 0, 0, map[string]any{"removed": userID, "role": m.Role, "handed_to": handTo, "rentals": handed})
	})
	if err != nil {
		return nil, err
	}
	return handed, nil
}

// SetDM turns a.Person()'s private copy of their cards in the team on or
// off. ENOTFOUND "team_not_member".
func (rs *Rosters) SetDM(ctx context.Context, a ledger.Action, teamID int64, on bool) (ledger.Member, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Member{}, err
	}
	if err := validTeamID(teamID); err != nil {
		return ledger.Member{}, err
	}
	var out ledger.Member
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := rs.teamAction(ctx, tx, a, teamID, person, "dm"); err != nil {
			return err
		}
		if _, err := currentMember(ctx, tx, teamID, person); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE team_members SET dm = ? WHERE team_id = ? AND user_id = ?`, boolInt(on), teamID, person); err != nil {
			return fmt.Errorf("sqlite: dm of %d in team %d: %w", person, teamID, err)
		}
		out, err = currentMember(ctx, tx, teamID, person)
		return err
	})
	if err != nil {
		return ledger.Member{}, err
	}
	return out, nil
}

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
