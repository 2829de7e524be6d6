package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.TeamStore's teams and members;
// team_invite.go has the invites and joining, team_room.go the rooms and
// each person's choice of ledger and project, team_limits.go the
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

// FormerMembers returns the team's former members (their row has
// removed_at set: they left or were removed), with the username and role
// they had last, in the order they left.
func (rs *Rosters) FormerMembers(ctx context.Context, teamID int64) ([]ledger.Member, error) {
	return queryAll(ctx, rs.db.reader, "former members", scanMember, `SELECT `+memberCols+` FROM team_members
		WHERE team_id = ? AND removed_at IS NOT NULL ORDER BY removed_at, rowid`, teamID)
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

// expireInvitesOf expires, at at, the unused invites userID made for the
// team: someone removed or no longer an admin must not be able to let
// themselves (or anyone) back in with a code made before. Invites expired
// already keep their time.
func expireInvitesOf(ctx context.Context, tx *wtx, teamID, userID int64, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE team_invites SET expires_at = ?1
		WHERE team_id = ?2 AND created_by = ?3 AND used_by IS NULL AND expires_at > ?1`, unix(at), teamID, userID); err != nil {
		return fmt.Errorf("sqlite: expire %d's invites of team %d: %w", userID, teamID, err)
	}
	return nil
}

// SetRole sets userID's role in the team, by a.Person(): an admin makes
// a member an admin or an admin a member; making or unmaking an owner
// takes an owner (EUNAUTHORIZED "team_owner_only"); the last owner keeps
// the role (ECONFLICT "team_last_owner"). Someone who stops being an
// admin loses the unused invites they made, in the same transaction.
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
		if m.Role.Admin() && !role.Admin() {
			if err := expireInvitesOf(ctx, tx, teamID, userID, j.at); err != nil {
				return err
			}
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
// for the team are revoked and the unused invites they made expired;
// their /use of the team ends. The agent tokens of the rentals handed
// over are revoked too, in the same transaction: the member may keep a
// copy of one (it was in the install line they ran), and a removed
// member must hold no credential to the team; a hub that caches tokens
// must be told (agent/hub.Tokens.Revoke). So are the tokens the member
// issued for teammates' rentals still in the team (issued_by), which stay
// their owners'. It returns the names of the rentals handed over and
// those whose token was revoked: the handed ones first, then the
// teammates', each in ID order.
func (rs *Rosters) RemoveMember(ctx context.Context, a ledger.Action, teamID, userID, handTo int64) (ledger.Removal, error) {
	person, err := actor(a)
	if err != nil {
		return ledger.Removal{}, err
	}
	if err := validTeamID(teamID); err != nil {
		return ledger.Removal{}, err
	}
	var out ledger.Removal
	err = rs.db.withWrite(ctx, func(tx *wtx) error {
		out = ledger.Removal{}
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
		rows, err := tx.QueryContext(ctx, `SELECT r.id, r.name, EXISTS (SELECT 1 FROM agent_tokens t WHERE t.rental_id = r.id AND t.revoked_at IS NULL)
			FROM rentals r WHERE r.user_id = ? AND r.owner = ? AND r.released = 0 ORDER BY r.id`, lid, userID)
		if err != nil {
			return fmt.Errorf("sqlite: rentals of %d in team %d: %w", userID, teamID, err)
		}
		for rows.Next() {
			var (
				id    int64
				name  string
				token bool
			)
			if err := rows.Scan(&id, &name, &token); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: rentals of %d in team %d: %w", userID, teamID, err)
			}
			out.Handed = append(out.Handed, name)
			if token {
				out.Revoked = append(out.Revoked, ledger.RevokedToken{RentalID: id, Rental: name})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: rentals of %d in team %d: %w", userID, teamID, err)
		}
		// The tokens the member issued for rentals not theirs (an admin's
		// /agent NAME): the install line went to them, and a removed
		// member keeps no credential to the team's hosts. The rentals
		// stay their owners', who are told (RevokedToken.Issued).
		rows, err = tx.QueryContext(ctx, `SELECT r.id, r.name, r.owner FROM rentals r
			WHERE r.user_id = ?1 AND r.owner <> ?2 AND r.released = 0 AND EXISTS (SELECT 1 FROM agent_tokens t
				WHERE t.rental_id = r.id AND t.issued_by = ?2 AND t.revoked_at IS NULL)
			ORDER BY r.id`, lid, userID)
		if err != nil {
			return fmt.Errorf("sqlite: agent tokens %d issued in team %d: %w", userID, teamID, err)
		}
		for rows.Next() {
			t := ledger.RevokedToken{Issued: true}
			if err := rows.Scan(&t.RentalID, &t.Rental, &t.Owner); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: agent tokens %d issued in team %d: %w", userID, teamID, err)
			}
			out.Revoked = append(out.Revoked, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: agent tokens %d issued in team %d: %w", userID, teamID, err)
		}
		for _, t := range out.Revoked {
			if _, err := tx.ExecContext(ctx, `UPDATE agent_tokens SET revoked_at = ? WHERE rental_id = ? AND revoked_at IS NULL`,
				unix(j.at), t.RentalID); err != nil {
				return fmt.Errorf("sqlite: revoke the agent token of %s in team %d: %w", t.Rental, teamID, err)
			}
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
		if err := expireInvitesOf(ctx, tx, teamID, userID, j.at); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM team_use WHERE user_id = ? AND ledger_id = ?`, userID, lid); err != nil {
			return fmt.Errorf("sqlite: remove %d from team %d: %w", userID, teamID, err)
		}
		return j.target(ctx, tx, 0, 0, map[string]any{"removed": userID, "role": m.Role, "handed_to": handTo,
			"rentals": out.Handed, "tokens_revoked": out.RevokedNames()})
	})
	if err != nil {
		return ledger.Removal{}, err
	}
	return out, nil
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
