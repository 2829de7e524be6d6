package bot

import (
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// This file keeps what the existing commands need to act on the ledger in
// use (r.ledgerID): a person's own, or a team's after /use TEAM or in the
// team's room. The ledger's user row, the reply's team tag, the buttons
// signed for that ledger, the admin-only refusal and a record's default
// project.

// loadLedgerUser sets r.lu, the ledger's user row: the sender's own on
// their ledger (already read), the team ledger's row on a team, so that
// the ledger's settings (budget currency, summary time) are the team's
// while the reply stays in the sender's language.
//
// A team's ledger has one clock, its zone: on a team r.loc is the team's,
// so "today", "this month" and "at 10:00" mean the same for every member
// and the same as the team's budget, cards, nightly summary and dashboard.
func (r *req) loadLedgerUser() error {
	r.lu, r.loc = r.user, r.user.Location()
	if r.team == nil || r.ledgerID == r.u.UserID {
		return nil
	}
	u, err := r.c.store.User(r.ctx, r.ledgerID)
	if err != nil {
		return err
	}
	r.lu, r.loc = u, u.Location()
	return nil
}

// teamTag is the beginning of a reply on a team's ledger, "👥 NAME · ",
// so that every answer says which ledger it read or wrote when it is not
// the sender's own; "" on their own ledger.
func (r *req) teamTag() string {
	if r.team == nil {
		return ""
	}
	return "👥 " + chat.Escape(r.team.Team.Name) + " · "
}

// tag prefixes the first reply of an update acting on a team's ledger
// with teamTag, when it goes to the chat the command came from (the
// group, or the sender's private chat) and does not carry it already (an
// edit of a message that had it). Messages to other chats (an admin's
// notice) are not replies and carry their own words.
func (r *req) tag(out *chat.Outgoing) {
	if r.team == nil || r.tagged || out.Text == "" {
		return
	}
	if out.ChatID != r.u.ChatID && out.ChatID != r.u.UserID {
		return
	}
	r.tagged = true
	t := r.teamTag()
	if strings.HasPrefix(out.Text, t) {
		return
	}
	out.Text = t + out.Text
}

// sign signs a button of the core for the ledger in use: on a team the
// press is verified against the team's ledger (chat.Buttons), so that it
// acts there again (usePress) and fails for anyone who left the team. A
// proposal's buttons stay the sender's alone: the proposals are kept per
// sender (r.c.props), which another member's press does not find.
func (r *req) sign(action, payload string) (string, error) {
	return r.c.buttons.Sign(r.ledgerID, action, payload)
}

// usePress sets the ledger a press of the core's buttons acts on: the one
// its button was signed for (p.Ledger), with the presser's place in that
// team, whatever the presser's /use says now.
func (r *req) usePress(p chat.ButtonPress) error {
	if p.Ledger == 0 || p.Ledger == r.ledgerID {
		return nil
	}
	if p.Ledger == r.u.UserID {
		if !r.c.acc.Personal(r.u.UserID) {
			// Signed for a ledger of their own they no longer have (taken
			// off the allow list, back as a team's outsider): not theirs.
			return ledger.Errorc(ledger.EUNAUTHORIZED, "button_not_yours")
		}
		r.ledgerID, r.team = r.u.UserID, nil
		return r.loadLedgerUser()
	}
	teamID, ok := ledger.TeamOf(p.Ledger)
	if !ok || r.c.teams == nil {
		return ledger.Errorc(ledger.ENOTFOUND, "team_not_member")
	}
	t, err := r.c.teams.Team(r.ctx, teamID)
	if err != nil {
		return err
	}
	m, err := r.c.teams.Member(r.ctx, teamID, r.u.UserID)
	if err != nil {
		return err
	}
	r.ledgerID, r.team = t.Ledger(), &ledger.Membership{Team: t, Member: m}
	return r.loadLedgerUser()
}

// adminOnly refuses a change of the ledger's own settings (its budget,
// settings, auto-release policy, platform connections) by a member of a
// team who is not an admin, before the store is asked: these are the
// team's, not a record with an owner.
func (r *req) adminOnly() error {
	if r.team == nil || r.team.Member.Role.Admin() {
		return nil
	}
	return ledger.Errorc(ledger.EUNAUTHORIZED, "team_admin_only")
}

// project is the project a new record of the ledger in use takes: the one
// given (project=NAME), else the sender's default there (/project). A
// personal ledger's records have no project (design section 11): a
// project= there is refused, EINVALID "project_personal".
func (r *req) project(given string) (string, error) {
	if r.team == nil {
		if given != "" {
			return "", ledger.Errorc(ledger.EINVALID, "project_personal")
		}
		return "", nil
	}
	if given != "" || r.c.teams == nil {
		return given, nil
	}
	return r.c.teams.Project(r.ctx, r.u.UserID, r.ledgerID)
}

// teamSplit is a team statement's split by person and by project
// (view.TeamSplit), after a newline; "" on a person's own ledger or when
// nothing was spent. Owners are named from the team's members; one no
// longer in the team by the name they had, marked as left.
func (r *req) teamSplit(st *ledger.Statement) (string, error) {
	if r.team == nil {
		return "", nil
	}
	rows := ledger.Split(st)
	if len(rows) == 0 {
		return "", nil
	}
	names, err := r.memberNames()
	if err != nil {
		return "", err
	}
	return "\n" + view.TeamSplit(r.lang, rows, func(id int64) string { return names[id] }), nil
}

// memberNames maps the team's members to their display names: the
// former ones ("@bob (left)") first, so a member who came back is named
// as a current one.
func (r *req) memberNames() (map[int64]string, error) {
	former, err := r.c.teams.FormerMembers(r.ctx, r.team.Team.ID)
	if err != nil {
		return nil, err
	}
	ms, err := r.c.teams.Members(r.ctx, r.team.Team.ID)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(ms)+len(former))
	for _, m := range former {
		names[m.UserID] = teamTexts.Text(r.lang, "member_left", m.Name()) // escaped by view.TeamSplit
	}
	for _, m := range ms {
		names[m.UserID] = m.Name()
	}
	return names, nil
}

// exportTeam names a team ledger's export its team, its current members
// and its former ones (the export's "team" object, and the owners' names
// in its CSV); none on a person's own ledger, whose export is as it
// always was.
func (r *req) exportTeam() ([]ledger.ExportOption, error) {
	if r.team == nil {
		return nil, nil
	}
	ms, err := r.c.teams.Members(r.ctx, r.team.Team.ID)
	if err != nil {
		return nil, err
	}
	former, err := r.c.teams.FormerMembers(r.ctx, r.team.Team.ID)
	if err != nil {
		return nil, err
	}
	return []ledger.ExportOption{ledger.WithTeam(ledger.ExportTeam{Team: r.team.Team, Members: ms, Former: former})}, nil
}

// mayChange refuses, on a team, a change the store does not journal (an
// agent's token) of a rental that is another member's, unless the sender
// is an admin: EUNAUTHORIZED "team_not_yours", as the store words its own.
// A rental nobody owns yet is anyone's in the team.
func (r *req) mayChange(x *ledger.Rental) error {
	if r.team == nil || r.team.Member.Role.Admin() || x.Owner == 0 || x.Owner == r.u.UserID {
		return nil
	}
	owner := "id" + strconv.FormatInt(x.Owner, 10)
	if m, err := r.c.teams.Member(r.ctx, r.team.Team.ID, x.Owner); err == nil {
		owner = m.Name()
	} else if ledger.ErrorCode(err) != ledger.ENOTFOUND {
		return err
	}
	return ledger.Errorc(ledger.EUNAUTHORIZED, "team_not_yours", x.Name, owner)
}
