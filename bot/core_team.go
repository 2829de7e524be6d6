package bot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// resolveLedger sets the ledger this update reads and writes (r.ledgerID,
// r.team): in a team's room, that team's when the sender is a member;
// else the one the sender chose with /use, when they still belong to it;
// else their own. A person admitted to a team from outside the allow list
// has no ledger of their own: their commands go to a team of theirs.
func (r *req) resolveLedger() error {
	if err := r.resolveTeam(); err != nil {
		return err
	}
	if err := r.resolveOutsider(); err != nil {
		return err
	}
	r.seenUsername()
	return nil
}

// resolveTeam is resolveLedger for a person with a ledger of their own.
func (r *req) resolveTeam() error {
	r.ledgerID, r.team = r.u.UserID, nil
	ts := r.c.teams
	if ts == nil {
		return nil
	}
	if r.u.ChatType == chat.ChatGroup || r.u.ChatType == chat.ChatSupergroup {
		t, err := ts.TeamByRoom(r.ctx, r.u.ChatID)
		switch {
		case err == nil:
			m, err := ts.Member(r.ctx, t.ID, r.u.UserID)
			if err == nil {
				r.ledgerID, r.team = t.Ledger(), &ledger.Membership{Team: t, Member: m}
				return nil
			}
			if ledger.ErrorCode(err) != ledger.ENOTFOUND {
				return err
			}
		case ledger.ErrorCode(err) != ledger.ENOTFOUND:
			return err
		}
	}
	id, err := ts.Use(r.ctx, r.u.UserID)
	if err != nil {
		return err
	}
	teamID, ok := ledger.TeamOf(id)
	if !ok {
		return nil
	}
	t, err := ts.Team(r.ctx, teamID)
	if err != nil {
		return err
	}
	m, err := ts.Member(r.ctx, teamID, r.u.UserID)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return nil // left or removed since /use: back to their own
	}
	if err != nil {
		return err
	}
	r.ledgerID, r.team = t.Ledger(), &ledger.Membership{Team: t, Member: m}
	return nil
}

// teamRoles returns the sender's team ledgers with their role in each,
// for a press of a team card's button (chat.ButtonPress.Teams).
func (r *req) teamRoles() (map[int64]string, error) {
	if r.c.teams == nil {
		return nil, nil
	}
	ms, err := r.c.teams.TeamsOf(r.ctx, r.u.UserID)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	out := make(map[int64]string, len(ms))
	for _, m := range ms {
		out[m.Team.Ledger()] = string(m.Member.Role)
	}
	return out, nil
}

// switched makes the reply to a switch of the ledger in use (/team new,
// /team join, /use) about the ledger switched to: its tag names that team,
// or none for the sender's own ledger.
func (r *req) switched(m *ledger.Membership) {
	r.team, r.tagged = m, false
	r.ledgerID = r.u.UserID
	if m != nil {
		r.ledgerID = m.Team.Ledger()
	}
}

// resolveOutsider gives a person admitted from outside the allow list a
// team of theirs when resolveLedger found none: they have no ledger of
// their own, so their commands go to their first team. It leaves r.team
// nil when they are in no team now (the caller refuses them).
func (r *req) resolveOutsider() error {
	if r.team != nil || r.c.teams == nil || r.c.acc.Personal(r.u.UserID) {
		return nil
	}
	r.ledgerID = 0 // never their own ledger
	ms, err := r.c.teams.TeamsOf(r.ctx, r.u.UserID)
	if err != nil || len(ms) == 0 {
		return err
	}
	m := ms[0]
	r.ledgerID, r.team = m.Team.Ledger(), &m
	return nil
}

// seenUsername records the username the member writes with, when it is
// not the one the team knows (for the room's names). A failure is logged:
// the name is for display only.
func (r *req) seenUsername() {
	if r.team == nil || r.u.Username == "" || r.u.Username == r.team.Member.Username {
		return
	}
	if err := r.c.teams.SeenUsername(r.ctx, r.u.UserID, r.u.Username); err != nil {
		r.c.log.Warn("bot: record a member's username", "user", r.u.UserID, "err", err)
		return
	}
	r.team.Member.Username = r.u.Username
}

// teams is the family of the team commands: /team and its subcommands,
// /use and /project.
type teams struct{ *req }

func (teams) register(t *table) {
	on(t, teams.teamCmd)
	on(t, teams.use)
	on(t, teams.project)
}

// membersPerPage is how many members one /team reply lists: 50 lines of
// the longest names stay well within one message's 4,096 characters.
const membersPerPage = 50

// maxJoinNotices bounds the admins told privately of a join.
const maxJoinNotices = 20

// teamAct is the action of a /team command: the person acting is always
// the sender (By), on the team's ledger when one is in use.
func (r teams) teamAct(ledgerID int64) ledger.Action {
	a := r.act()
	a.UserID, a.By = r.u.UserID, r.u.UserID
	if ledgerID != 0 {
		a.UserID = ledgerID
	}
	return a
}

func (r teams) teamCmd(c command.TeamCmd) error {
	if r.c.teams == nil {
		return r.answer(r.plain(r.tt("team_off")))
	}
	switch c.Sub {
	case command.TeamList:
		return r.list(c.Page)
	case command.TeamNew:
		return r.create(c.Name)
	case command.TeamJoin:
		if r.inGroup() {
			return r.burnGroupCode(c.Name)
		}
		return r.join(c.Name)
	case command.TeamInvite:
		if r.inGroup() {
			// The code never shows in a group: it admits whoever reads it.
			return r.answer(r.plain(r.tt("team_invite_private", r.mention())))
		}
	case command.TeamBind:
		if !r.inGroup() {
			return r.answer(r.plain(r.tt("team_bind_private")))
		}
	}
	if r.team == nil {
		return r.answer(r.plain(r.tt("team_none_in_use")))
	}
	switch c.Sub {
	case command.TeamInvite:
		return r.invite(c.Who)
	case command.TeamLeave:
		return r.leave()
	case command.TeamRemove:
		return r.remove(c.Who)
	case command.TeamRole:
		return r.role(c.Who, c.Role)
	case command.TeamBind:
		return r.bind()
	case command.TeamUnbind:
		return r.unbind()
	case command.TeamDM:
		m, err := r.c.teams.SetDM(r.ctx, r.teamAct(r.ledgerID), r.team.Team.ID, c.On)
		if err != nil {
			return err
		}
		key := "team_dm_off"
		if m.DM {
			key = "team_dm_on"
		}
		return r.send(r.plain(r.tt(key, r.team.Team.Name)))
	case command.TeamLimit:
		return r.limit(c)
	case command.TeamOwner:
		return r.owner(c.Name, c.Who)
	}
	return fmt.Errorf("bot: /team %q has no handler", c.Sub)
}

// roleText names a role in the reader's language.
func (r teams) roleText(role ledger.Role) string {
	return teamTexts.Text(r.lang, "role_"+string(role))
}

// list answers /team: the members of the team in use, a page at a time,
// or the sender's teams when none is in use.
func (r teams) list(page int) error {
	if r.team == nil {
		ms, err := r.c.teams.TeamsOf(r.ctx, r.u.UserID)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return r.answer(r.plain(r.tt("team_yours_none")))
		}
		var b strings.Builder
		b.WriteString(r.tt("team_yours_head"))
		for i, m := range ms {
			if i == membersPerPage {
				break
			}
			b.WriteString("\n")
			b.WriteString(r.tt("team_yours_line", m.Team.Name, r.roleText(m.Member.Role)))
		}
		return r.answer(r.plain(b.String()))
	}
	t := r.team.Team
	ms, err := r.c.teams.Members(r.ctx, t.ID)
	if err != nil {
		return err
	}
	pages := max(1, (len(ms)+membersPerPage-1)/membersPerPage)
	if page < 1 {
		page = 1
	}
	if page > pages {
		return r.answer(r.plain(r.tt("team_page_past", strconv.Itoa(pages))))
	}
	room := r.tt("team_no_room")
	if t.Room != 0 {
		room = chat.Escape(t.RoomTitle)
		if t.RoomTitle == "" {
			room = strconv.FormatInt(t.Room, 10)
		}
	}
	var b strings.Builder
	b.WriteString(r.tt("team_head", t.Name, r.roleText(r.team.Member.Role), chat.RawHTML(room)))
	b.WriteString("\n")
	b.WriteString(r.tt("team_members", strconv.Itoa(len(ms)), strconv.Itoa(page), strconv.Itoa(pages)))
	for _, m := range ms[(page-1)*membersPerPage : min(len(ms), page*membersPerPage)] {
		b.WriteString("\n")
		b.WriteString(r.tt("team_member_line", clip.Runes(m.Name(), 40, "…"), r.roleText(m.Role)))
	}
	if page < pages {
		b.WriteString("\n")
		b.WriteString(r.tt("team_more", strconv.Itoa(page+1)))
	}
	return r.answer(r.plain(b.String()))
}

// create answers /team new NAME: the team, its owner, and the sender's
// commands switched to it.
func (r teams) create(name string) error {
	if r.inGroup() {
		return r.answer(r.plain(r.tt("team_new_private", r.mention())))
	}
	if !r.c.acc.Personal(r.u.UserID) {
		return r.answer(r.plain(r.tt("use_no_own")))
	}
	t, err := r.c.teams.CreateTeam(r.ctx, r.teamAct(0), name, r.u.Username)
	if err != nil {
		return err
	}
	if err := r.c.teams.SetUse(r.ctx, r.u.UserID, t.Ledger()); err != nil {
		return err
	}
	r.switched(&ledger.Membership{Team: t, Member: ledger.Member{TeamID: t.ID, UserID: r.u.UserID, Username: r.u.Username, Role: ledger.RoleOwner}})
	return r.send(r.plain(r.tt("team_created", t.Name)))
}

// invite answers /team invite [@user|ID] in a private chat: a one-time
// code, and the deep link when the bot's name is known.
func (r teams) invite(who string) error {
	var forUser int64
	var forName string
	if who != "" {
		if n, ok := strings.CutPrefix(who, "@"); ok {
			forName = n
		} else {
			forUser, _ = strconv.ParseInt(who, 10, 64)
		}
	}
	code, inv, err := r.c.teams.CreateInvite(r.ctx, r.teamAct(r.ledgerID), r.team.Team.ID, forUser, forName)
	if err != nil {
		return err
	}
	for_ := ""
	if who != "" {
		for_ = r.tt("team_invite_for", who)
	}
	text := r.tt("team_invite", r.team.Team.Name, chat.RawHTML(for_), code, r.when(inv.Expires))
	if r.c.botName != "" {
		text += r.tt("team_invite_link", "https://t.me/"+strings.TrimPrefix(r.c.botName, "@")+"?start="+"join-"+code)
	}
	return r.send(r.plain(text))
}

// join admits the sender through an invite code (/team join CODE, /start
// join-CODE), switches their commands to the team and tells its admins.
// A person outside the allow list reaches here only when the server lets
// teams admit them (Handle's stranger path), and is admitted as one.
func (r teams) join(code string) error {
	if !r.c.acc.joinAllowed(r.u.UserID) {
		// Wrong codes are bounded per person, whoever they are: past the
		// bound no code is looked up for them in this run.
		return r.answer(r.plain(r.tt("team_join_tries")))
	}
	outsider := !r.c.acc.Personal(r.u.UserID)
	a := r.teamAct(0)
	m, err := r.c.teams.Join(r.ctx, a, code, r.u.Username, outsider)
	switch ledger.ErrorCode(err) {
	case ledger.ENOTFOUND, ledger.EINVALID, ledger.ECONFLICT, ledger.EUNAUTHORIZED:
		r.c.acc.joinFailed(r.u.UserID)
	}
	if err != nil {
		return err
	}
	if outsider {
		r.c.acc.Admit(r.u.UserID)
		user, err := r.c.ensureUser(r.ctx, r.u) // their language and zone; never a ledger they reach
		if err != nil {
			return err
		}
		r.user, r.lang, r.loc = user, chat.NormLang(user.Lang), user.Location()
	}
	if err := r.c.teams.SetUse(r.ctx, r.u.UserID, m.Team.Ledger()); err != nil {
		return err
	}
	r.switched(&m)
	key := "team_joined"
	if outsider {
		key = "team_joined_outsider"
	}
	if err := r.send(r.plain(r.tt(key, m.Team.Name, r.roleText(m.Member.Role)))); err != nil {
		return err
	}
	r.tellAdmins(m, r.u.UserID)
	return nil
}

// tellAdmins tells the team's admins privately that m's member joined,
// and with whose invite (m.InvitedBy), so they know who let them in. A
// failed send is logged only: the join stands.
func (r teams) tellAdmins(m ledger.Membership, except int64) {
	r.tellAdminsKey(m.Team, "team_join_notice", except, m.Member.Name(), m.Team.Name, m.InvitedBy.Name())
}

// tellAdminsKey tells the team's admins (but except) one of teamTexts
// privately, each in their language, at most maxJoinNotices of them.
func (r teams) tellAdminsKey(t ledger.Team, key string, except int64, args ...any) {
	ms, err := r.c.teams.Members(r.ctx, t.ID)
	if err != nil {
		r.c.log.Warn("bot: list a team's admins for a notice", "team", t.ID, "key", key, "err", err)
		return
	}
	sent := 0
	for _, m := range ms {
		if !m.Role.Admin() || m.UserID == except || sent == maxJoinNotices {
			continue
		}
		sent++
		r.tellPrivately(m.UserID, r.userLang(m.UserID), key, args...)
	}
}

// userLang returns the language of the person userID, English when the
// store has none.
func (r teams) userLang(userID int64) string {
	u, err := r.c.store.User(r.ctx, userID)
	if err != nil {
		return chat.LangEN
	}
	return chat.NormLang(u.Lang)
}

// tellPrivately sends one of teamTexts to a person's private chat (their
// chat ID is their user ID). A failure is logged only.
func (r teams) tellPrivately(userID int64, lang, key string, args ...any) {
	out := chat.Outgoing{ChatID: userID, Text: teamTexts.Render(lang, key, args...)}
	if _, err := r.s.Send(r.ctx, out); err != nil {
		r.c.log.Info("bot: a team notice could not be sent privately", "user", userID, "err", err)
	}
}

// member finds a current member of the team in use by "@username" or a
// user ID in decimal.
func (r teams) member(who string) (ledger.Member, error) {
	teamID := r.team.Team.ID
	var m ledger.Member
	var err error
	if n, ok := strings.CutPrefix(who, "@"); ok {
		m, err = r.c.teams.MemberByUsername(r.ctx, teamID, n)
	} else {
		id, perr := strconv.ParseInt(who, 10, 64)
		if perr != nil {
			return m, r.notMember(who)
		}
		m, err = r.c.teams.Member(r.ctx, teamID, id)
	}
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return m, r.notMember(who)
	}
	return m, err
}

// notMember is the refusal for a name that is no member of the team.
func (r teams) notMember(who string) error {
	return ledger.Errorf(ledger.ENOTFOUND, "%s", teamTexts.Text(r.lang, "team_not_member_who", who, r.team.Team.Name))
}

// handedText says which rentals passed to whom.
func (r teams) handedText(handed []string, to string) chat.RawHTML {
	if len(handed) == 0 {
		return ""
	}
	return chat.RawHTML(r.tt("team_handed", to, strings.Join(handed, ", ")))
}

// leave answers /team leave: the sender's running rentals pass to the
// team's first owner (or admin) who is not the sender, who is told
// privately, with the agent tokens revoked as the sender left.
func (r teams) leave() error {
	t := r.team.Team
	me := r.team.Member.Name()
	ms, err := r.c.teams.Members(r.ctx, t.ID)
	if err != nil {
		return err
	}
	var to ledger.Member
	for _, m := range ms {
		if m.UserID != r.u.UserID && m.Role.Admin() {
			to = m
			break
		}
	}
	rm, err := r.c.teams.RemoveMember(r.ctx, r.teamAct(r.ledgerID), t.ID, r.u.UserID, to.UserID)
	if err != nil {
		return err
	}
	r.forgetRevoked(rm)
	// The reply is about where the sender's commands go now: resolve the
	// ledger again (the room's team, their /use, their own) and tag it.
	if err := r.resolveLedger(); err != nil {
		return err
	}
	r.tagged = false
	where := chat.RawHTML(r.tt("left_to_own"))
	switch {
	case r.team != nil:
		where = chat.RawHTML(r.tt("left_to_team", r.team.Team.Name))
	case !r.c.acc.Personal(r.u.UserID):
		where = ""
	}
	handed := r.handedText(rm.Handed, to.Name()) + revokedText(r.lang, rm, me, "left")
	if err := r.send(r.plain(r.tt("team_left", t.Name, handed, where))); err != nil {
		return err
	}
	if len(rm.Handed) > 0 {
		lang := r.userLang(to.UserID)
		r.tellPrivately(to.UserID, lang, "team_left_notice", me, t.Name, strings.Join(rm.Handed, ", "), revokedText(lang, rm, me, "left"))
	}
	r.tellIssuedOwners(rm, t.Name, me, "left")
	r.forgetOutsider(r.u.UserID)
	return nil
}

// forgetOutsider takes a person admitted from outside the allow list off
// the server's access when they are in no team any more.
func (r teams) forgetOutsider(userID int64) {
	if r.c.acc.Personal(userID) {
		return
	}
	ms, err := r.c.teams.TeamsOf(r.ctx, userID)
	if err != nil {
		r.c.log.Warn("bot: read a removed outsider's teams", "user", userID, "err", err)
		return
	}
	if len(ms) == 0 {
		r.c.acc.Forget(userID)
	}
}

// remove answers /team remove @user (admins): the member's running
// rentals and live volumes pass to the sender, their agent tokens are
// revoked, and the member is told.
func (r teams) remove(who string) error {
	t := r.team.Team
	m, err := r.member(who)
	if err != nil {
		return err
	}
	if m.UserID == r.u.UserID {
		return r.answer(r.plain(r.tt("team_remove_self", t.Name)))
	}
	rm, err := r.c.teams.RemoveMember(r.ctx, r.teamAct(r.ledgerID), t.ID, m.UserID, r.u.UserID)
	if err != nil {
		return err
	}
	r.forgetRevoked(rm)
	// The sender receives the rentals: the reply is their notice, with
	// the way to a new install line (never the line itself: it may be
	// read in the room).
	handed := r.handedText(rm.Handed, r.team.Member.Name()) + revokedText(r.lang, rm, m.Name(), "removed")
	if err := r.send(r.plain(r.tt("team_removed", m.Name(), t.Name, handed))); err != nil {
		return err
	}
	r.tellPrivately(m.UserID, r.userLang(m.UserID), "team_removed_notice", t.Name, r.team.Member.Name())
	r.tellIssuedOwners(rm, t.Name, m.Name(), "removed")
	r.forgetOutsider(m.UserID)
	return nil
}

// role answers /team role @user ROLE.
func (r teams) role(who string, role ledger.Role) error {
	m, err := r.member(who)
	if err != nil {
		return err
	}
	m, err = r.c.teams.SetRole(r.ctx, r.teamAct(r.ledgerID), r.team.Team.ID, m.UserID, role)
	if err != nil {
		return err
	}
	if err := r.send(r.plain(r.tt("team_role_set", m.Name(), r.roleText(m.Role), r.team.Team.Name))); err != nil {
		return err
	}
	if m.UserID != r.u.UserID {
		lang := r.userLang(m.UserID)
		r.tellPrivately(m.UserID, lang, "team_role_notice", r.team.Member.Name(), teamTexts.Text(lang, "role_"+string(m.Role)), r.team.Team.Name)
	}
	return nil
}

// bind answers /team bind in a group: the group becomes the room of the
// team in use (the store checks the sender is its admin).
func (r teams) bind() error {
	t, err := r.c.teams.BindRoom(r.ctx, r.teamAct(r.ledgerID), r.team.Team.ID, r.u.ChatID, r.u.ChatTitle)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.tt("team_bound", t.Name)))
}

// unbind answers /team unbind: the team's room is forgotten. UnbindRoom
// takes no action (the transport calls it when the bot is removed), so
// the admin check is made here.
func (r teams) unbind() error {
	t := r.team.Team
	if !r.team.Member.Role.Admin() {
		return r.answer(r.plain(r.tt("team_admins_only", t.Name)))
	}
	if t.Room == 0 {
		return r.answer(r.plain(r.tt("team_unbind_none", t.Name)))
	}
	if r.inGroup() && r.u.ChatID != t.Room {
		return r.answer(r.plain(r.tt("team_unbind_other", t.Name)))
	}
	// UnbindRoom keys nothing and is idempotent: a redelivered unbind
	// unbinds again and is answered once (answer records the key).
	if _, _, err := r.c.teams.UnbindRoom(r.ctx, t.Room); err != nil {
		return err
	}
	return r.answer(r.plain(r.tt("team_unbound", t.Name)))
}

// owner answers /team owner RENTAL @user (admins): the rental is handed
// to the member, journaled.
func (r teams) owner(name, who string) error {
	m, err := r.member(who)
	if err != nil {
		return err
	}
	rt, err := r.named(name)
	if err != nil {
		return err
	}
	rt, err = r.c.teams.SetOwner(r.ctx, r.teamAct(r.ledgerID), rt.ID, m.UserID)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.tt("team_owner_set", rt.Name, m.Name())))
}

// use answers /use: where the sender's commands go, or a switch to a team
// of theirs or back to their own ledger.
func (r teams) use(c command.UseCmd) error {
	if r.c.teams == nil {
		return r.answer(r.plain(r.tt("team_off")))
	}
	if r.inGroup() {
		return r.answer(r.plain(r.t("group_write", r.mention())))
	}
	switch c.Team {
	case "":
		if r.team != nil {
			return r.answer(r.plain(r.tt("use_where_team", r.team.Team.Name, r.roleText(r.team.Member.Role))))
		}
		ms, err := r.c.teams.TeamsOf(r.ctx, r.u.UserID)
		if err != nil {
			return err
		}
		var names []string
		for i, m := range ms {
			if i == membersPerPage {
				break
			}
			names = append(names, m.Team.Name)
		}
		more := chat.RawHTML("")
		if len(names) > 0 {
			more = chat.RawHTML(r.tt("use_your_teams", strings.Join(names, ", ")))
		}
		return r.answer(r.plain(r.tt("use_where_me", more)))
	case "me":
		if !r.c.acc.Personal(r.u.UserID) {
			return r.answer(r.plain(r.tt("use_no_own")))
		}
		if err := r.c.teams.SetUse(r.ctx, r.u.UserID, r.u.UserID); err != nil {
			return err
		}
		r.switched(nil)
		return r.answer(r.plain(r.tt("use_set_me")))
	}
	t, err := r.c.teams.TeamByName(r.ctx, c.Team)
	var m ledger.Member
	if err == nil {
		m, err = r.c.teams.Member(r.ctx, t.ID, r.u.UserID)
	}
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		// The same answer for a team that does not exist and one the
		// sender is not in: no one learns another team's name this way.
		return r.answer(r.plain(r.tt("use_not_member", c.Team)))
	}
	if err != nil {
		return err
	}
	if err := r.c.teams.SetUse(r.ctx, r.u.UserID, t.Ledger()); err != nil {
		return err
	}
	r.switched(&ledger.Membership{Team: t, Member: m})
	return r.answer(r.plain(r.tt("use_set_team", t.Name)))
}

// ledgerName names the ledger in use for /project's replies.
func (r teams) ledgerName() chat.RawHTML {
	if r.team == nil {
		return chat.RawHTML(r.tt("ledger_own"))
	}
	return chat.RawHTML(r.tt("ledger_team", r.team.Team.Name))
}

// project answers /project: the sender's default project in the ledger
// in use, shown, set or cleared.
func (r teams) project(c command.ProjectCmd) error {
	if r.c.teams == nil {
		return r.answer(r.plain(r.tt("team_off")))
	}
	if r.inGroup() {
		return r.answer(r.plain(r.t("group_write", r.mention())))
	}
	if r.team == nil {
		// A personal ledger's records have no project: a default there
		// would be promised and never applied.
		return ledger.Errorc(ledger.EINVALID, "project_personal")
	}
	switch {
	case c.Clear:
		if err := r.c.teams.SetProject(r.ctx, r.u.UserID, r.ledgerID, ""); err != nil {
			return err
		}
		return r.answer(r.plain(r.tt("project_cleared", r.ledgerName())))
	case c.Name != "":
		if err := r.c.teams.SetProject(r.ctx, r.u.UserID, r.ledgerID, c.Name); err != nil {
			return err
		}
		return r.answer(r.plain(r.tt("project_set", r.ledgerName(), c.Name)))
	}
	p, err := r.c.teams.Project(r.ctx, r.u.UserID, r.ledgerID)
	if err != nil {
		return err
	}
	if p == "" {
		return r.answer(r.plain(r.tt("project_none", r.ledgerName())))
	}
	return r.answer(r.plain(r.tt("project_is", r.ledgerName(), p)))
}

// joinCode returns the join code a stranger's command carries: /start
// join-CODE (the invite link) or /team join CODE.
func joinCode(cmd command.Command) (string, bool) {
	switch c := cmd.(type) {
	case command.StartCmd:
		return c.Join, c.Join != ""
	case command.TeamCmd:
		return c.Name, c.Sub == command.TeamJoin
	}
	return "", false
}

// strangerJoin runs a join code sent privately by a person outside the
// allow list, when the server lets a team's invite admit them. Wrong codes
// are bounded like claim codes: after maxClaimTries the bot is silent.
func (r *req) strangerJoin(code string) error {
	if !r.c.acc.joinAllowed(r.u.UserID) {
		return r.mark()
	}
	return teams{r}.join(code) // counts a wrong code
}

// joinFrom answers /start join-CODE from a person who may use the bot:
// the invite link's join, in a private chat only.
func (r teams) joinFrom(code string) error {
	if r.c.teams == nil {
		return r.answer(r.plain(r.tt("team_off")))
	}
	if r.inGroup() {
		return r.burnGroupCode(code)
	}
	return r.join(code)
}

// burnGroupCode handles a join code posted in a group, where anyone who
// reads it could use it: the message is deleted (as one holding an API
// key), the code's invite expires at once, the group is told without the
// code, and the team's admins are told privately when a live code was
// burnt. A wrong code gets the same words, so the group learns nothing.
func (r *req) burnGroupCode(code string) error {
	r.deleteSecret()
	teamID, ok, err := r.c.teams.ExpireInvite(r.ctx, code, r.now)
	if err != nil {
		return err
	}
	if ok {
		t := teams{r}
		if tm, err := r.c.teams.Team(r.ctx, teamID); err == nil {
			t.tellAdminsKey(tm, "team_code_burnt_notice", 0, tm.Name)
		} else {
			r.c.log.Warn("bot: read the team of a code posted in a group", "team", teamID, "err", err)
		}
	}
	return r.answer(r.plain(r.tt("team_code_in_group", r.mention())))
}
