package bot_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
)

// The people of the team command tests: ann, ben and cat are on the allow
// list; dan is not.
const (
	ann int64 = 701
	ben int64 = 702
	cat int64 = 703
	dan int64 = 704
)

var usernames = map[int64]string{ann: "ann", ben: "ben", cat: "cat", dan: "dan"}

// as is a private text update from user, with their username.
func (e *env) as(user int64, text string) chat.Update {
	u := e.update(user, text)
	u.Username = usernames[user]
	return u
}

// talk sends text as user privately and returns everything the core sent.
func (e *env) talk(user int64, text string) []testkit.Sent {
	e.t.Helper()
	return e.handle(e.as(user, text))
}

// reply sends text as user privately and returns the one reply to their
// chat (notices to other chats are left out).
func (e *env) reply(user int64, text string) string {
	e.t.Helper()
	var mine []string
	for _, s := range e.talk(user, text) {
		if s.Out.ChatID == user {
			mine = append(mine, s.Out.Text)
		}
	}
	if len(mine) != 1 {
		e.t.Fatalf("%q: want 1 reply to %d, got %d: %q", text, user, len(mine), mine)
	}
	return mine[0]
}

var codeRe = regexp.MustCompile(`<code>([a-z0-9]+)</code>`)

// invite has ann (an admin of the team in use) make an invite and returns
// its code.
func (e *env) invite(admin int64, args string) string {
	e.t.Helper()
	r := e.reply(admin, strings.TrimSpace("/team invite "+args))
	m := codeRe.FindStringSubmatch(r)
	if m == nil {
		e.t.Fatalf("/team invite %s = %q: no code", args, r)
	}
	return m[1]
}

func newTeamChat(t *testing.T, outsiders bool) *env {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{ann, ben, cat}, TeamOutsiders: outsiders, BotName: "LedgerBot"})
	contains(t, e.reply(ann, "/team new crew"), "crew", "owner", "/use me")
	return e
}

func (e *env) teamNamed(name string) ledger.Team {
	e.t.Helper()
	tm, err := e.db.TeamByName(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return tm
}

// TestTeam_Lifecycle: a team is made, a second person joins by the code
// (its admins told), /team lists both with their roles, a role changes,
// the member's rental on the team is handed to the admin who removes them
// (the member told privately), and the removed member's commands go back
// to their own ledger.
func TestTeam_Lifecycle(t *testing.T) {
	e := newTeamChat(t, false)
	tm := e.teamNamed("crew")
	code := e.invite(ann, "")
	if r := e.reply(ann, "/team invite"); !strings.Contains(r, "https://t.me/LedgerBot?start=join-") {
		t.Errorf("the invite has no link: %q", r)
	}

	out := e.talk(ben, "/team join "+code)
	var joined, notice string
	for _, s := range out {
		switch s.Out.ChatID {
		case ben:
			joined = s.Out.Text
		case ann:
			notice = s.Out.Text
		}
	}
	contains(t, joined, "joined team crew", "member")
	contains(t, notice, "@ben joined team crew with @ann's invite")

	list := e.reply(ann, "/team")
	contains(t, list, "crew", "Members: 2", "@ann · owner", "@ben · member")
	if strings.Index(list, "@ann") > strings.Index(list, "@ben") {
		t.Errorf("the owner is not listed first: %q", list)
	}

	contains(t, e.reply(ann, "/team role @ben admin"), "@ben", "admin")
	m, err := e.db.Member(context.Background(), tm.ID, ben)
	if err != nil || m.Role != ledger.RoleAdmin {
		t.Fatalf("ben after /team role admin: %+v %v", m, err)
	}
	contains(t, e.reply(ann, "/team role @ben member"), "@ben", "member")
	contains(t, e.reply(ben, "/team role @ann member"), "✗") // a member changes no one's role

	// ben's commands go to the team since he joined: his rental is the team's.
	contains(t, e.reply(ben, "/rent box1 autodl 4090 1.88/h"), "box1")
	x := e.rentalNamed(tm.Ledger(), "box1")
	if x == nil || x.Owner != ben {
		t.Fatalf("box1 on the team = %+v, want ben's", x)
	}
	if len(e.book(ben).Rentals) != 0 {
		t.Fatal("ben's rental on the team landed in his own ledger")
	}

	out = e.talk(ann, "/team remove @ben")
	var removed, told string
	for _, s := range out {
		switch s.Out.ChatID {
		case ann:
			removed = s.Out.Text
		case ben:
			told = s.Out.Text
		}
	}
	contains(t, removed, "@ben", "box1", "@ann")
	contains(t, told, "removed from team crew", "@ann")
	if x := e.rentalNamed(tm.Ledger(), "box1"); x == nil || x.Owner != ann {
		t.Fatalf("box1 after ben's removal = %+v, want ann's", x)
	}
	if _, err := e.db.Member(context.Background(), tm.ID, ben); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("ben is still a member: %v", err)
	}

	contains(t, e.reply(ben, "/use"), "your own ledger")
	st := e.reply(ben, "/status")
	if strings.HasPrefix(st, "👥") || !strings.Contains(st, "No rentals") {
		t.Errorf("ben's /status after removal = %q, want his own ledger", st)
	}
	contains(t, e.reply(ann, "/team leave"), "✗") // the last owner cannot leave
}

// TestTeam_InviteNotInGroup: /team invite in a group is answered there
// with "send it privately", and no code is shown; /team (the list) goes
// privately.
func TestTeam_InviteNotInGroup(t *testing.T) {
	e := newTeamChat(t, false)
	u := e.as(ann, "/team invite")
	u.ChatID, u.ChatType = -900, chat.ChatGroup
	out := e.handle(u)
	if len(out) != 1 || out[0].Out.ChatID != -900 {
		t.Fatalf("/team invite in a group = %+v, want one note in the group", out)
	}
	contains(t, out[0].Out.Text, "privately", "/team invite")
	if codeRe.MatchString(out[0].Out.Text) || strings.Contains(out[0].Out.Text, "join-") {
		t.Errorf("the group saw a code: %q", out[0].Out.Text)
	}
	u = e.as(ann, "/team")
	u.ChatID, u.ChatType = -900, chat.ChatGroup
	for _, s := range e.handle(u) {
		if s.Out.ChatID == -900 && strings.Contains(s.Out.Text, "owner") {
			t.Errorf("the member list went to the group: %q", s.Out.Text)
		}
	}
}

// TestTeam_CodeOnce: a code works once: replayed by the one who used it
// or by someone else, it is refused and admits no one.
func TestTeam_CodeOnce(t *testing.T) {
	e := newTeamChat(t, false)
	tm := e.teamNamed("crew")
	code := e.invite(ann, "")
	contains(t, e.reply(ben, "/team join "+code), "joined")
	contains(t, e.reply(cat, "/team join "+code), "✗")
	if _, err := e.db.Member(context.Background(), tm.ID, cat); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("a used code admitted cat: %v", err)
	}
	contains(t, e.reply(ben, "/start join-"+code), "✗")
	contains(t, e.reply(cat, "/team join nosuchcode1"), "✗")
}

// TestTeam_AddressedCode: a code made for cat is refused to ben, and
// still admits cat afterwards.
func TestTeam_AddressedCode(t *testing.T) {
	e := newTeamChat(t, false)
	tm := e.teamNamed("crew")
	code := e.invite(ann, "@cat")
	contains(t, e.reply(ben, "/team join "+code), "✗")
	if _, err := e.db.Member(context.Background(), tm.ID, ben); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("cat's code admitted ben: %v", err)
	}
	contains(t, e.reply(cat, "/team join "+code), "joined team crew")
}

// TestTeam_StrangerOff: with outsiders off, a person outside the allow
// list who opens an invite link gets the usual refusal, and the code
// stays unused: an allowed person joins with it afterwards.
func TestTeam_StrangerOff(t *testing.T) {
	e := newTeamChat(t, false)
	tm := e.teamNamed("crew")
	code := e.invite(ann, "")
	contains(t, e.reply(dan, "/start join-"+code), "private bot")
	if e.core.Allowed(dan) {
		t.Fatal("a stranger was let in with outsiders off")
	}
	if _, err := e.db.Member(context.Background(), tm.ID, dan); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("dan joined with outsiders off: %v", err)
	}
	contains(t, e.reply(cat, "/team join "+code), "joined team crew")
}

// TestTeam_StrangerOn: with outsiders on, the invite link admits a person
// outside the allow list to that team only: /use me is refused, /status
// answers the team's ledger, /team new is refused; removed, they are a
// stranger again.
func TestTeam_StrangerOn(t *testing.T) {
	e := newTeamChat(t, true)
	contains(t, e.reply(ann, "/rent box1 autodl 4090 1.88/h"), "box1")
	code := e.invite(ann, "")
	out := e.talk(dan, "/start join-"+code)
	var joined, notice string
	for _, s := range out {
		switch s.Out.ChatID {
		case dan:
			joined = s.Out.Text
		case ann:
			notice = s.Out.Text
		}
	}
	contains(t, joined, "joined team crew", "no ledger of your own")
	contains(t, notice, "@dan", "crew")
	if !e.core.Allowed(dan) {
		t.Fatal("the admitted outsider is not allowed")
	}
	contains(t, e.reply(dan, "/use me"), "no ledger of your own")
	st := e.reply(dan, "/status")
	if !strings.HasPrefix(st, "👥 crew") || !strings.Contains(st, "box1") {
		t.Errorf("the outsider's /status = %q, want the team's", st)
	}
	contains(t, e.reply(dan, "/team new mine"), "no ledger of your own")

	contains(t, e.reply(ann, "/team remove @dan"), "@dan")
	if e.core.Allowed(dan) {
		t.Fatal("a removed outsider in no team is still allowed")
	}
	if r := e.talk(dan, "/status"); len(r) > 1 || len(r) == 1 && strings.Contains(r[0].Out.Text, "1.88") {
		t.Errorf("the removed outsider read the team: %+v", r)
	}
}

// TestTeam_ThousandMembers: a team of 1,000 members with 32-character
// names lists them 50 a page, each page within one message, every member
// on exactly one page.
func TestTeam_ThousandMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("joins 999 members one transaction each; runs without -short")
	}
	e := newTeamChat(t, false)
	tm := e.teamNamed("crew")
	ctx := context.Background()
	for i := 1; i < ledger.MaxTeamMembers; i++ {
		id := int64(10_000 + i)
		a := ledger.Action{UserID: tm.Ledger(), By: ann, At: e.now, Key: fmt.Sprintf("inv:%d", i)}
		code, _, err := e.db.CreateInvite(ctx, a, tm.ID, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("member_%025d", i) // 32 characters
		if _, err := e.db.Join(ctx, ledger.Action{UserID: id, By: id, At: e.now, Key: fmt.Sprintf("join:%d", i)}, code, name, false); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	nameRe := regexp.MustCompile(`@(member_\d{25}|ann)\b`)
	for page := 1; page <= 20; page++ {
		r := e.reply(ann, fmt.Sprintf("/team page=%d", page))
		if n := chat.UTF16Len(r); n > 4096 {
			t.Fatalf("page %d is %d characters, over one message", page, n)
		}
		contains(t, r, "Members: 1000", fmt.Sprintf("page %d of 20", page))
		for _, m := range nameRe.FindAllStringSubmatch(r, -1) {
			if seen[m[1]] {
				t.Fatalf("%s listed twice", m[1])
			}
			seen[m[1]] = true
		}
	}
	if len(seen) != ledger.MaxTeamMembers {
		t.Fatalf("%d members listed over the pages, want %d", len(seen), ledger.MaxTeamMembers)
	}
	contains(t, e.reply(ann, "/team page=21"), "20 pages")
}

// TestTeam_OutsiderRestart: an outsider admitted by a team's invite is
// let in again after a restart (the store keeps them, LoadAccess reads
// them), and is a stranger once the operator turns outsiders off.
func TestTeam_OutsiderRestart(t *testing.T) {
	e := newTeamChat(t, true)
	code := e.invite(ann, "")
	contains(t, e.reply(dan, "/team join "+code), "joined team crew")

	again := newEnv(t, bot.Config{Store: e.db, AllowedUsers: []int64{ann, ben, cat}, TeamOutsiders: true})
	if !again.core.Allowed(dan) {
		t.Fatal("the outsider is not let in after a restart")
	}
	contains(t, again.reply(dan, "/use"), "team crew")

	off := newEnv(t, bot.Config{Store: e.db, AllowedUsers: []int64{ann, ben, cat}})
	if off.core.Allowed(dan) {
		t.Fatal("the outsider is let in with outsiders turned off")
	}
	if r := off.talk(dan, "/status"); len(r) > 1 || len(r) == 1 && strings.Contains(r[0].Out.Text, "crew") {
		t.Errorf("with outsiders off the outsider read the team: %+v", r)
	}
}

// TestTeam_SeenUsername: a member who writes under a new username is
// named by it in the team's list.
func TestTeam_SeenUsername(t *testing.T) {
	e := newTeamChat(t, false)
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")
	u := e.as(ben, "/status")
	u.Username = "benny"
	e.handle(u)
	list := e.reply(ann, "/team")
	contains(t, list, "@benny · member")
	if strings.Contains(list, "@ben ") {
		t.Errorf("the old username is still listed: %q", list)
	}
}

// TestTeam_StrangerWrongCodes: a stranger's wrong join codes are answered
// five times, then not at all, and admit no one, so codes cannot be
// guessed through the bot.
func TestTeam_StrangerWrongCodes(t *testing.T) {
	e := newTeamChat(t, true)
	for i := range 5 {
		contains(t, e.reply(dan, fmt.Sprintf("/team join wrongcode%d", i)), "✗", "not known")
	}
	if out := e.talk(dan, "/team join wrongcode9"); len(out) != 0 {
		t.Fatalf("the sixth wrong code was answered: %+v", out)
	}
	if out := e.talk(dan, "/start join-"+e.invite(ann, "")); len(out) != 0 || e.core.Allowed(dan) {
		t.Fatalf("a stranger past the bound was admitted: %+v", out)
	}
}

// TestTeam_BindUnbind: an admin's /team bind in a group makes it the
// room, with the group's title; a member may neither bind nor unbind; the
// admin's /team unbind leaves the team without a room.
func TestTeam_BindUnbind(t *testing.T) {
	e := newTeamChat(t, false)
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")
	inGroup := func(user int64, text string) string {
		u := e.as(user, text)
		u.ChatID, u.ChatType, u.ChatTitle = -950, chat.ChatGroup, "GPU crew"
		out := e.handle(u)
		if len(out) != 1 || out[0].Out.ChatID != -950 {
			t.Fatalf("%q in the group = %+v, want one reply there", text, out)
		}
		return out[0].Out.Text
	}
	contains(t, inGroup(ben, "/team bind"), "✗")
	if tm := e.teamNamed("crew"); tm.Room != 0 {
		t.Fatalf("a member bound the room: %+v", tm)
	}
	contains(t, inGroup(ann, "/team bind"), "room of team crew")
	if tm := e.teamNamed("crew"); tm.Room != -950 || tm.RoomTitle != "GPU crew" {
		t.Fatalf("crew after /team bind = %+v, want room -950 titled GPU crew", tm)
	}
	contains(t, e.reply(ann, "/team"), "room: GPU crew")
	contains(t, inGroup(ben, "/team unbind"), "Only an admin")
	contains(t, inGroup(ann, "/team unbind"), "no room now")
	if tm := e.teamNamed("crew"); tm.Room != 0 {
		t.Fatalf("crew after /team unbind = %+v, want no room", tm)
	}
	contains(t, e.reply(ann, "/team unbind"), "no room to unbind")
}

// TestTeam_LimitOwnerProject: an admin sets a member's limit (the currency
// the team's budget's, else CNY) and clears it with 0, a member may not;
// an admin hands a rental to a member, a member may not hand one back;
// /project sets the default a new rental takes.
func TestTeam_LimitOwnerProject(t *testing.T) {
	e := newTeamChat(t, false)
	ctx := context.Background()
	tm := e.teamNamed("crew")
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")

	contains(t, e.reply(ann, "/team limit @ben rate=10/h gpus=2"), "@ben", "¥10.00/h", "2 GPUs")
	contains(t, e.reply(ben, "/team limit team month=1"), "✗")
	ls, err := e.db.Limits(ctx, tm.ID)
	if err != nil || len(ls) != 1 || ls[0].Scope != ledger.ScopeMember || ls[0].Subject != fmt.Sprint(ben) ||
		ls[0].Currency != ledger.CNY || ls[0].GPUs != 2 || ls[0].RatePerHour.String() != "10" {
		t.Fatalf("limits = %+v %v", ls, err)
	}
	contains(t, e.reply(ann, "/budget $500"), "500")
	contains(t, e.reply(ann, "/team limit project=yolo month=5000"), "project yolo", "$5000.00")
	contains(t, e.reply(ann, "/team limit @ben rate=0 gpus=0 CNY"), "No CNY limit")
	if ls, _ := e.db.Limits(ctx, tm.ID); len(ls) != 1 || ls[0].Scope != ledger.ScopeProject || ls[0].Currency != ledger.USD {
		t.Fatalf("limits after clearing ben's = %+v", ls)
	}

	contains(t, e.reply(ann, "/rent box1 autodl 4090 1.88/h"), "box1")
	contains(t, e.reply(ben, "/team owner box1 @ben"), "✗")
	contains(t, e.reply(ann, "/team owner box1 @ben"), "box1", "@ben")
	if x := e.rentalNamed(tm.Ledger(), "box1"); x.Owner != ben {
		t.Fatalf("box1 after /team owner = %+v, want ben's", x)
	}
	contains(t, e.reply(ben, "/team owner box1 @ann"), "✗")

	contains(t, e.reply(ben, "/project yolo"), "project yolo")
	contains(t, e.reply(ben, "/rent box2 autodl 4090 1.88/h"), "box2")
	if x := e.rentalNamed(tm.Ledger(), "box2"); x.Project != "yolo" || x.Owner != ben {
		t.Fatalf("box2 = owner %d project %q, want ben's in yolo", x.Owner, x.Project)
	}
	contains(t, e.reply(ben, "/project none"), "No default project")
	contains(t, e.reply(ben, "/project"), "no default project")
}

// TestTeam_Chinese: the team commands answer a Chinese speaker in
// Chinese, their refusals too.
func TestTeam_Chinese(t *testing.T) {
	e := newTeamChat(t, false)
	zh := func(user int64, text string) string {
		u := e.as(user, text)
		u.LangCode = "zh-CN"
		for _, s := range e.handle(u) {
			if s.Out.ChatID == user {
				return s.Out.Text
			}
		}
		t.Fatalf("%q: no reply", text)
		return ""
	}
	contains(t, zh(cat, "/设置 lang=zh"), "lang=zh")
	contains(t, zh(cat, "/团队"), "你还不在任何团队中")
	contains(t, zh(cat, "/团队 角色 @ann 老板"), "不是角色")
	contains(t, zh(cat, "/团队 加入 "+e.invite(ann, "")), "加入团队 crew")
	contains(t, zh(cat, "/团队"), "2 名成员", "@ann · 所有者", "@cat · 成员")
	contains(t, zh(cat, "/切换 个人"), "你自己的账本")
}
