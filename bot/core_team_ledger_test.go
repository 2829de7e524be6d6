package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// teamEnv is a core over a real store with team "lab": alice its owner,
// bob a member, carol an admin; all three use the team's ledger.
type teamEnv struct {
	*env
	team              ledger.Team
	alice, bob, carol int64
}

const teamTag = "👥 lab · "

func newTeamEnv(t *testing.T) *teamEnv {
	t.Helper()
	return newTeamEnvWith(t, bot.Config{})
}

// newTeamEnvWith is newTeamEnv with cfg (its store and allow list set here
// unless given).
func newTeamEnvWith(t *testing.T, cfg bot.Config) *teamEnv {
	t.Helper()
	cfg.AllowedUsers = []int64{501, 502, 503, 504}
	e := &teamEnv{env: newEnv(t, cfg), alice: 501, bob: 502, carol: 503}
	ctx := context.Background()
	for _, u := range []int64{e.alice, e.bob, e.carol} {
		e.say(u, "/status") // registers each with a ledger of their own
	}
	act := func(u int64) ledger.Action {
		return ledger.Action{UserID: u, At: e.now, Key: fmt.Sprintf("team:%d", keySeq.Add(1))}
	}
	team, err := e.db.CreateTeam(ctx, act(e.alice), "lab", "alice")
	if err != nil {
		t.Fatal(err)
	}
	e.team = team
	for _, m := range []struct {
		id   int64
		name string
		role ledger.Role
	}{{e.bob, "bob", ledger.RoleMember}, {e.carol, "carol", ledger.RoleAdmin}} {
		code, _, err := e.db.CreateInvite(ctx, act(e.alice), team.ID, m.id, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Join(ctx, act(m.id), code, m.name, false); err != nil {
			t.Fatal(err)
		}
		if m.role != ledger.RoleMember {
			if _, err := e.db.SetRole(ctx, act(e.alice), team.ID, m.id, m.role); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, u := range []int64{e.alice, e.bob, e.carol} {
		e.use(u, team.Ledger())
	}
	return e
}

// use sets where u's commands go, as /use does.
func (e *teamEnv) use(u, ledgerID int64) {
	e.t.Helper()
	if err := e.db.SetUse(context.Background(), u, ledgerID); err != nil {
		e.t.Fatal(err)
	}
}

func (e *teamEnv) rental(ledgerID int64, name string) *ledger.Rental {
	e.t.Helper()
	for _, x := range e.book(ledgerID).Rentals {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// TestCore_TeamLedger: a member's commands on a team act on the team's
// ledger, as themselves: the rental is the team's, owned by the member,
// in the project given, and every reply says which ledger it wrote; the
// member's own ledger is untouched and its replies carry no tag.
func TestCore_TeamLedger(t *testing.T) {
	e := newTeamEnv(t)
	e.use(e.bob, e.bob)
	contains(t, e.say(e.bob, "/rent mine vast 3090 0.30/h"), "mine")
	e.use(e.bob, e.team.Ledger())

	got := e.say(e.bob, "/rent box1 autodl 4090 1.88/h project=yolo-v9")
	if !strings.HasPrefix(got, teamTag) {
		t.Errorf("a reply on the team's ledger = %q, want it to begin %q", got, teamTag)
	}
	x := e.rental(e.team.Ledger(), "box1")
	if x == nil {
		t.Fatalf("box1 is not in the team's ledger: %+v", e.book(e.team.Ledger()).Rentals)
	}
	if x.Owner != e.bob || x.Project != "yolo-v9" {
		t.Errorf("box1: owner %d project %q, want %d and yolo-v9", x.Owner, x.Project, e.bob)
	}
	if e.rental(e.bob, "box1") != nil {
		t.Error("box1 was also written to bob's own ledger")
	}
	if s := e.say(e.bob, "/status"); !strings.HasPrefix(s, teamTag) || !strings.Contains(s, "box1") || strings.Contains(s, "mine") {
		t.Errorf("/status on the team = %q, want the team's rentals, tagged", s)
	}

	// Back on their own ledger: what was there, nothing of the team's, no tag.
	e.use(e.bob, e.bob)
	s := e.say(e.bob, "/status")
	if strings.HasPrefix(s, "👥") || !strings.Contains(s, "mine") || strings.Contains(s, "box1") {
		t.Errorf("/status on bob's own ledger = %q, want mine only, untagged", s)
	}
	if b := e.book(e.bob); len(b.Rentals) != 1 || b.Rentals[0].Owner != 0 || b.Rentals[0].Project != "" {
		t.Errorf("bob's own ledger changed: %+v", b.Rentals)
	}
}

// TestCore_TeamDefaultProject: without project=, a record on a team takes
// the person's default project there; a charge on a rental takes the
// rental's owner and project.
func TestCore_TeamDefaultProject(t *testing.T) {
	e := newTeamEnv(t)
	if err := e.db.SetProject(context.Background(), e.carol, e.team.Ledger(), "llm"); err != nil {
		t.Fatal(err)
	}
	e.say(e.carol, "/rent box2 autodl 4090 2.00/h")
	if x := e.rental(e.team.Ledger(), "box2"); x == nil || x.Project != "llm" || x.Owner != e.carol {
		t.Fatalf("box2 = %+v, want carol's, in llm", x)
	}
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h project=yolo-v9")
	// An admin's charge on bob's rental is bob's, in its project.
	e.say(e.carol, "/charge box1 5 image pull")
	b := e.book(e.team.Ledger())
	if len(b.Charges) != 1 || b.Charges[0].Owner != e.bob || b.Charges[0].Project != "yolo-v9" {
		t.Errorf("charges = %+v, want one of bob's in yolo-v9", b.Charges)
	}
}

// TestCore_TeamStopOthers: a member cannot stop a teammate's rental (the
// store refuses, worded, nothing changes); an admin can.
func TestCore_TeamStopOthers(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h")
	e.say(e.carol, "/rent box2 autodl 4090 2.00/h")
	e.now = e.now.Add(30 * time.Minute)

	got := e.say(e.bob, "/stop box2")
	contains(t, got, teamTag, "✗", "box2", "@carol", "admin")
	if x := e.rental(e.team.Ledger(), "box2"); x == nil || len(x.Events) != 1 {
		t.Errorf("box2 after a member's refused /stop: %+v, want it still running", x)
	}
	got = e.say(e.carol, "/stop box1")
	if !strings.HasPrefix(got, teamTag) || strings.Contains(got, "✗") {
		t.Errorf("an admin's /stop of bob's box1 = %q, want it done, tagged", got)
	}
	if x := e.rental(e.team.Ledger(), "box1"); x == nil || len(x.Events) != 2 {
		t.Errorf("box1 after the admin's /stop: %+v, want it stopped", x)
	}
}

// TestCore_TeamAdminOnly: a member's change of the team's budget or
// settings is refused before the store; an admin's is made; a member's
// language stays their own.
func TestCore_TeamAdminOnly(t *testing.T) {
	e := newTeamEnv(t)
	contains(t, e.say(e.bob, "/budget ¥3000/month"), teamTag, "✗", "admin")
	contains(t, e.say(e.bob, "/settings idlewarn=10m"), teamTag, "✗", "admin")
	u, err := e.db.User(context.Background(), e.team.Ledger())
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Budgets) != 0 {
		t.Errorf("a member's /budget changed the team's: %+v", u.Budgets)
	}
	if got := e.say(e.carol, "/budget ¥3000/month"); strings.Contains(got, "✗") {
		t.Errorf("an admin's /budget = %q", got)
	}
	if u, _ = e.db.User(context.Background(), e.team.Ledger()); len(u.Budgets) != 1 {
		t.Errorf("the admin's budget was not set on the team: %+v", u.Budgets)
	}
	// The team's auto-release policies are its admins'.
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h")
	contains(t, e.say(e.bob, "/autorelease box1 stop after 30m"), teamTag, "✗", "admin")
	box1 := e.rental(e.team.Ledger(), "box1")
	if p, err := e.db.AutoPolicy(context.Background(), box1.ID); err != nil || p.Action != ledger.AutoNotify {
		t.Errorf("a member's /autorelease set %+v (%v)", p, err)
	}
	if got := e.say(e.carol, "/autorelease box1 stop after 30m"); strings.Contains(got, "✗") {
		t.Errorf("an admin's /autorelease = %q", got)
	}
	if p, err := e.db.AutoPolicy(context.Background(), box1.ID); err != nil || p.Action != ledger.AutoStop {
		t.Errorf("the admin's /autorelease: %+v (%v), want stop", p, err)
	}
	// A member's language is their own: set on their row, not the team's.
	e.say(e.bob, "/settings lang=zh")
	own, _ := e.db.User(context.Background(), e.bob)
	team, _ := e.db.User(context.Background(), e.team.Ledger())
	if own.Lang != "zh" || team.Lang == "zh" {
		t.Errorf("after a member's lang=zh: own %q, team %q; want zh on their own only", own.Lang, team.Lang)
	}
}

// TestCore_TeamSpendSplit: /spend on a team adds its split by person and
// by project, and each list adds up to the statement's total.
func TestCore_TeamSpendSplit(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h project=yolo-v9")
	e.say(e.carol, "/rent box2 autodl 4090 2.00/h project=llm")
	e.say(e.alice, "/rent box3 autodl 4090 1.00/h")
	e.now = e.now.Add(3 * 30 * time.Minute)
	got := e.say(e.alice, "/spend")
	contains(t, got, teamTag, "By person", "@bob", "@carol", "@alice", "By project", "yolo-v9", "llm", "(no project)")

	b := e.book(e.team.Ledger())
	from, _ := ledger.MonthRange(e.now, b.User.Location())
	st := ledger.Spend(b, from, e.now)
	rows := ledger.Split(st)
	want := view.TeamSplit("en", rows, func(id int64) string {
		return map[int64]string{e.alice: "@alice", e.bob: "@bob", e.carol: "@carol"}[id]
	})
	if !strings.Contains(got, want) {
		t.Errorf("/spend = %q\nwant the split %q", got, want)
	}
	for _, byProject := range []bool{false, true} {
		var sum ledger.Money
		for _, r := range ledger.SplitBy(rows, byProject) {
			sum = sum.Add(r.Amount)
		}
		if total := st.Totals[ledger.CNY].Total; sum != total || total.Minor == 0 {
			t.Errorf("split (by project %v) adds up to %v, want the total %v", byProject, sum, total)
		}
	}
	// Their own ledger's /spend has no split.
	e.use(e.alice, e.alice)
	if s := e.say(e.alice, "/spend"); strings.Contains(s, "By person") || strings.HasPrefix(s, "👥") {
		t.Errorf("/spend on a personal ledger = %q", s)
	}
}

// TestCore_TeamSpendSplitUnpriced: on a team where @alice's rental is
// priced and @bob's has no price, /spend's split says Bob's row is
// unpriced ("¥0.00 + UNPRICED", in English and in Chinese), not a bare
// ¥0.00 read as nothing spent, and Alice's row is not marked.
func TestCore_TeamSpendSplitUnpriced(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.alice, "/rent box1 autodl 4090 2.00/h project=yolo")
	contains(t, e.say(e.bob, "/rent box2 autodl 4090 project=llm"), "✓")
	e.now = e.now.Add(2 * time.Hour)
	got := e.say(e.alice, "/spend")
	contains(t, got, "By person", "\n@alice ¥4.00\n", "\n@bob ¥0.00 + UNPRICED\n", "By project", "\nyolo ¥4.00\n", "\nllm ¥0.00 + UNPRICED")
	if strings.Contains(got, "@alice ¥4.00 + UNPRICED") {
		t.Errorf("/spend marks Alice's priced row unpriced:\n%s", got)
	}
	e.say(e.bob, "/settings lang=zh")
	contains(t, e.say(e.bob, "/spend"), "按成员", "\n@alice ¥4.00\n", "\n@bob ¥0.00 + UNPRICED\n", "按项目")
}

// TestCore_ProjectRefused: a bad project name is refused in the sender's
// language and nothing is recorded.
func TestCore_ProjectRefused(t *testing.T) {
	e := newTeamEnv(t)
	contains(t, e.say(e.bob, "/rent box1 autodl 4090 1.88/h project=-bad"), teamTag, "✗", "project", "-bad")
	u := e.update(504, "/rent box1 autodl 4090 1.88/h 项目=坏/名")
	u.LangCode = "zh"
	out := e.handle(u)
	if len(out) != 1 || !strings.Contains(out[0].Out.Text, "项目名") {
		t.Errorf("the Chinese refusal = %+v, want 项目名…", out)
	}
	if len(e.book(e.team.Ledger()).Rentals) != 0 || len(e.book(504).Rentals) != 0 {
		t.Error("a refused project= recorded a rental")
	}
}

// TestCore_TeamPress: a button of the core made on a team's ledger (a
// question about a mistyped name) acts on that ledger when pressed, even
// after the presser's /use moved elsewhere; /summary on a team adds the
// month's split.
func TestCore_TeamPress(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h project=yolo-v9")
	e.now = e.now.Add(30 * time.Minute)
	out := e.handle(e.update(e.bob, "/charge bx1 5"))
	if len(out) != 1 || len(out[0].Out.Buttons) == 0 {
		t.Fatalf("/charge bx1 5 = %+v, want a question with buttons", out)
	}
	if !strings.HasPrefix(out[0].Out.Text, teamTag) {
		t.Errorf("the question = %q, want it tagged", out[0].Out.Text)
	}
	data := out[0].Out.Buttons[0][0].Data
	e.use(e.bob, e.bob) // the press still acts where the question was asked
	var reply string
	for _, s := range press(e.env, e.bob, e.bob, 7, data) {
		if !s.IsAnswer {
			reply = s.Out.Text
		}
	}
	if !strings.HasPrefix(reply, teamTag) || !strings.Contains(reply, "box1") {
		t.Errorf("the press = %q, want a reply on the team's ledger", reply)
	}
	if cs := e.book(e.team.Ledger()).Charges; len(cs) != 1 || cs[0].Owner != e.bob {
		t.Errorf("the team's charges after the press: %+v, want bob's one", cs)
	}
	if cs := e.book(e.bob).Charges; len(cs) != 0 {
		t.Errorf("the press charged bob's own ledger: %+v", cs)
	}
	e.use(e.bob, e.team.Ledger())
	contains(t, e.say(e.bob, "/summary"), teamTag, "The team's month to date:", "@bob", "yolo-v9")
}

// TestCore_TeamExport: /export on a team exports the team's ledger with
// its team and each record's owner and project; the person's own export
// names no team.
func TestCore_TeamExport(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h project=yolo-v9")
	e.now = e.now.Add(time.Hour)
	out := e.handle(e.update(e.alice, "/export json"))
	if len(out) != 1 || out[0].Out.Document == nil {
		t.Fatalf("/export json = %+v, want a document", out)
	}
	doc := string(out[0].Out.Document.Data)
	for _, w := range []string{`"team"`, `"name":"lab"`, `"username":"bob"`, `"owner":502`, `"project":"yolo-v9"`, `"box1"`} {
		if !strings.Contains(strings.ReplaceAll(doc, " ", ""), w) {
			t.Errorf("the team's export lacks %s:\n%s", w, doc)
		}
	}
	if !strings.HasPrefix(out[0].Out.Text, teamTag) || !strings.Contains(out[0].Out.Document.Name, "lab") {
		t.Errorf("the export's caption %q and name %q, want the team's", out[0].Out.Text, out[0].Out.Document.Name)
	}
	e.use(e.alice, e.alice)
	out = e.handle(e.update(e.alice, "/export json"))
	if len(out) != 1 || out[0].Out.Document == nil || strings.Contains(string(out[0].Out.Document.Data), `"team"`) || strings.Contains(string(out[0].Out.Document.Data), "box1") {
		t.Errorf("alice's own export = %+v, want no team and none of its rentals", out)
	}
}

// TestCore_TeamUndoOwn: /undo on a team names and takes back the
// person's own latest change, never a teammate's later one.
func TestCore_TeamUndoOwn(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h")
	e.now = e.now.Add(time.Minute)
	e.say(e.carol, "/rent box2 autodl 4090 2.00/h")
	e.now = e.now.Add(time.Minute)
	got := e.say(e.bob, "/undo")
	if !strings.HasPrefix(got, teamTag) || !strings.Contains(got, "box1") || strings.Contains(got, "box2") {
		t.Errorf("bob's /undo = %q, want his box1 named, not carol's box2", got)
	}
	if e.rental(e.team.Ledger(), "box2") == nil {
		t.Error("bob's /undo took back carol's box2")
	}
	if e.rental(e.team.Ledger(), "box1") != nil {
		t.Error("bob's /undo left his box1")
	}
}

// TestCore_TeamRoom: in the team's room a member's question is about the
// team (whatever their /use says) and answered privately, tagged; a write
// is not run in the group; an allowed person outside the team is answered
// about their own ledger.
func TestCore_TeamRoom(t *testing.T) {
	e := newTeamEnv(t)
	const room = -1001234
	act := ledger.Action{UserID: e.alice, At: e.now, Key: "bind"}
	if _, err := e.db.BindRoom(context.Background(), act, e.team.ID, room, "Lab"); err != nil {
		t.Fatal(err)
	}
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h")
	e.use(e.bob, e.bob)
	inRoom := func(user int64, text string) []string {
		u := e.update(user, text)
		u.ChatID, u.ChatType = room, chat.ChatSupergroup
		var priv []string
		for _, s := range e.handle(u) {
			if s.Out.ChatID == user {
				priv = append(priv, s.Out.Text)
			}
		}
		return priv
	}
	priv := inRoom(e.bob, "/status")
	if len(priv) != 1 || !strings.HasPrefix(priv[0], teamTag) || !strings.Contains(priv[0], "box1") {
		t.Errorf("/status in the room, privately = %q, want the team's, tagged", priv)
	}
	inRoom(e.bob, "/rent box9 autodl 4090 1.88/h")
	if e.rental(e.team.Ledger(), "box9") != nil || e.rental(e.bob, "box9") != nil {
		t.Error("a write sent in the room was run")
	}
	e.say(504, "/status") // registers an allowed person outside the team
	priv = inRoom(504, "/status")
	if len(priv) != 1 || strings.HasPrefix(priv[0], "👥") || !strings.Contains(priv[0], "No rentals") {
		t.Errorf("an outsider's /status in the room = %q, want their own ledger, untagged", priv)
	}
}

// TestCore_TeamSpendMonthIsTheTeams: /spend's month on a team is the
// team ledger's, in its zone, not the member's: the figure the team's
// budget and nightly summary count.
func TestCore_TeamSpendMonthIsTheTeams(t *testing.T) {
	e := newTeamEnv(t) // the team's zone is alice's, Asia/Shanghai
	e.use(e.bob, e.bob)
	e.say(e.bob, "/settings tz=UTC")
	e.use(e.bob, e.team.Ledger())
	e.now = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	e.say(e.bob, "/rent box1 autodl 4090 1.00/h")
	e.now = time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC) // December 1st, 04:00 in Shanghai
	got := e.say(e.bob, "/spend")
	if !strings.Contains(got, "¥4.00") || strings.Contains(got, "¥10.00") {
		t.Errorf("/spend on the team = %q, want December in Shanghai (¥4.00), not November in UTC (¥10.00)", got)
	}
}

// TestCore_TeamAgentToken: a member may issue the agent token of their
// own rental, not a teammate's (a new token revokes the one its agent
// runs on); an admin may; a member's enrolment token is the team's.
func TestCore_TeamAgentToken(t *testing.T) {
	db := openStore(t)
	var now time.Time
	h, err := hub.New(hub.Config{Store: db, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e := newTeamEnvWith(t, bot.Config{Store: db, AgentTokens: h.Tokens(), Enrolment: h.Enrolment(), PublicURL: "https://ledger.example.com"})
	now = e.now
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h")
	e.say(e.carol, "/rent box2 autodl 4090 2.00/h")
	contains(t, e.say(e.bob, "/agent box2"), teamTag, "✗", "box2", "@carol")
	for _, who := range []int64{e.bob, e.carol} {
		if got := e.say(who, "/agent box1"); !strings.HasPrefix(got, teamTag) || strings.Contains(got, "✗") || !strings.Contains(got, "https://ledger.example.com") {
			t.Errorf("/agent box1 by %d = %q, want its install line", who, got)
		}
	}
	if got := e.say(e.bob, "/agent"); !strings.HasPrefix(got, teamTag) || strings.Contains(got, "✗") {
		t.Errorf("a member's /agent (enrolment) = %q", got)
	}
	toks, err := db.EnrolTokens(context.Background(), e.team.Ledger())
	if err != nil || len(toks) != 1 || toks[0].CreatedBy != e.bob {
		t.Errorf("the team's enrolment tokens = %+v (%v), want one made by bob", toks, err)
	}
	// /agent revoke on a team revokes every member's: its admins'.
	contains(t, e.say(e.bob, "/agent revoke"), teamTag, "✗", "admin")
	if toks, _ := db.EnrolTokens(context.Background(), e.team.Ledger()); len(toks) != 1 || !toks[0].RevokedAt.IsZero() {
		t.Errorf("a member's /agent revoke: %+v, want the token live", toks)
	}
	if got := e.say(e.carol, "/agent revoke"); strings.Contains(got, "✗") {
		t.Errorf("an admin's /agent revoke = %q", got)
	}
}
