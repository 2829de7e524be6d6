package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestTeam_LimitKeepsUnwrittenBounds: a second /team limit for the same
// member and currency keeps the bounds it does not write, a bound written
// as 0 clears only that one, and the reply lists the whole limit.
func TestTeam_LimitKeepsUnwrittenBounds(t *testing.T) {
	e := newTeamChat(t, false)
	ctx := context.Background()
	tm := e.teamNamed("crew")
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")

	contains(t, e.reply(ann, "/team limit @ben gpus=2"), "2 GPUs")
	contains(t, e.reply(ann, "/team limit @ben month=3000"), "2 GPUs", "¥3000.00")
	ls, err := e.db.Limits(ctx, tm.ID)
	if err != nil || len(ls) != 1 || ls[0].GPUs != 2 || ls[0].Month.String() != "3000" {
		t.Fatalf("limits after month= = %+v %v, want gpus 2 and month 3000 kept together", ls, err)
	}
	r := e.reply(ann, "/team limit @ben gpus=0")
	contains(t, r, "¥3000.00")
	if strings.Contains(r, "GPUs") {
		t.Fatalf("gpus=0 reply still lists GPUs: %q", r)
	}
	if ls, _ := e.db.Limits(ctx, tm.ID); len(ls) != 1 || ls[0].GPUs != 0 || ls[0].Month.String() != "3000" {
		t.Fatalf("limits after gpus=0 = %+v, want month 3000 only", ls)
	}
	contains(t, e.reply(ann, "/team limit @ben month=0"), "No CNY limit for @ben now")

	// One GPU is one GPU, and clearing a limit that held only a GPU bound
	// says so, not that a money limit of some currency is gone.
	r = e.reply(ann, "/team limit team gpus=1")
	contains(t, r, "1 GPU at once")
	if strings.Contains(r, "1 GPUs") {
		t.Fatalf("one GPU counted as plural: %q", r)
	}
	r = e.reply(ann, "/team limit team gpus=0")
	contains(t, r, "No GPU bound for the team now")
	if strings.Contains(r, "CNY") {
		t.Fatalf("clearing a GPU bound names a currency: %q", r)
	}
}

// TestTeam_LimitListSaysMore: a list of more limits than one reply shows
// ends with how many were left out.
func TestTeam_LimitListSaysMore(t *testing.T) {
	e := newTeamChat(t, false)
	for i := range 53 {
		contains(t, e.reply(ann, fmt.Sprintf("/team limit project=p%d month=100", i)), "project p")
	}
	contains(t, e.reply(ann, "/team limit"), "… and 3 more")
}

// TestTeam_SwitchRepliesTagTheNewLedger: a reply to a switch of the
// ledger in use is tagged with the ledger switched to (the new team's
// name, or none for the sender's own), and a leave says where commands
// go now.
func TestTeam_SwitchRepliesTagTheNewLedger(t *testing.T) {
	e := newTeamChat(t, false)
	begins := func(got, want string) {
		t.Helper()
		if !strings.HasPrefix(got, want) {
			t.Fatalf("reply %q, want it to begin %q", got, want)
		}
	}
	begins(e.reply(ann, "/use me"), "✓ Commands now go to your own ledger")
	begins(e.reply(ann, "/use crew"), "👥 crew · ✓")
	begins(e.reply(ann, "/team new yard"), "👥 yard · ✓ Team yard")
	begins(e.reply(ann, "/use crew"), "👥 crew · ✓")
	code := e.invite(ann, "")
	contains(t, e.reply(ben, "/team new den"), "den")
	begins(e.reply(ben, "/team join "+code), "👥 crew · ✓ You joined team crew")
	r := e.reply(ben, "/team leave")
	begins(r, "✓ You left team crew")
	contains(t, r, "your own ledger now")

}

// TestTeam_ProjectsRefusedOnPersonalLedger: /project and project= on a
// personal ledger are refused in both languages and change nothing.
func TestTeam_ProjectsRefusedOnPersonalLedger(t *testing.T) {
	e := newTeamChat(t, false)
	ctx := context.Background()
	contains(t, e.reply(ann, "/use me"), "own ledger")
	contains(t, e.reply(ann, "/project yolo"), "✗", "projects belong to a team")
	contains(t, e.reply(ann, "/project"), "✗", "/use TEAM first")
	if p, err := e.db.Project(ctx, ann, ann); err != nil || p != "" {
		t.Fatalf("default project on the own ledger = %q %v, want none", p, err)
	}
	contains(t, e.reply(ann, "/rent box1 autodl 4090 1.88/h project=yolo"), "✗", "projects belong")
	if rs := e.book(ann).Rentals; len(rs) != 0 {
		t.Fatalf("a refused rent was stored: %+v", rs)
	}
	contains(t, e.reply(ann, "/settings lang=zh"), "")
	contains(t, e.reply(ann, "/project yolo"), "✗", "项目属于团队账本")
	contains(t, e.reply(ann, "/rent box1 autodl 4090 1.88/h"), "box1")
	contains(t, e.reply(ann, "/use crew"), "crew")
	contains(t, e.reply(ann, "/project yolo"), "yolo")
}

// TestTeam_OldOwnButtonOfOutsider: a person taken off the allow list and
// admitted again as a team's outsider presses an old button signed for
// the ledger of their own: refused, and their old ledger is unchanged.
func TestTeam_OldOwnButtonOfOutsider(t *testing.T) {
	was := newEnv(t, bot.Config{AllowedUsers: []int64{ann, dan}})
	contains(t, was.say(dan, "/rent box1 autodl 4090 1.88/h"), "box1")
	was.now = was.now.Add(10 * time.Minute) // an old action: /undo asks
	q := was.undoAsked(dan, "/undo")

	e := newEnv(t, bot.Config{Store: was.db, AllowedUsers: []int64{ann}, TeamOutsiders: true})
	contains(t, e.reply(ann, "/team new crew"), "crew")
	contains(t, e.reply(dan, "/team join "+e.invite(ann, "")), "joined team crew")
	var toast string
	for _, s := range press(e, dan, dan, 99, q.Buttons[0][0].Data) {
		if !s.IsAnswer {
			t.Fatalf("the old button acted: %+v", s.Out)
		}
		toast = s.Callback
	}
	contains(t, toast, "not yours")
	if x := e.book(dan).Rental("box1"); x == nil || x.State() != ledger.Running {
		t.Fatalf("box1 after the refused press = %+v, want it running", x)
	}
}

// TestTeam_SettingsRefusedWhole: a member who is no admin sending a team
// setting with lang= is refused the whole command: their language stays.
func TestTeam_SettingsRefusedWhole(t *testing.T) {
	e := newTeamChat(t, false)
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")
	contains(t, e.reply(ben, "/settings lang=zh summary=20:00"), "✗", "only an admin")
	u, err := e.db.User(context.Background(), ben)
	if err != nil || u.Lang == "zh" {
		t.Fatalf("ben after the refused /settings = lang %q %v, want unchanged", u.Lang, err)
	}
	contains(t, e.reply(ben, "/settings lang=zh"), "✓")
}

// TestTeam_RemovedAndLeftWording: a removal's reply says the member's
// history stays theirs and their running rentals passed to the remover.
func TestTeam_RemovedAndLeftWording(t *testing.T) {
	e := newTeamChat(t, false)
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")
	contains(t, e.reply(ben, "/rent box1 autodl 4090 1.88/h"), "box1")
	r := e.reply(ann, "/team remove @ben")
	contains(t, r, "history stays theirs", "Running rentals passed to @ann: box1")
	if strings.Contains(r, "records stay theirs") {
		t.Fatalf("removal reply %q still says the records stay theirs", r)
	}
}

// TestTeam_WrongCodesBoundedForAllowedUsers: a person of the allow list
// who sends 5 wrong codes is told to ask for a new one, and even a good
// code is not looked up for them in this run.
func TestTeam_WrongCodesBoundedForAllowedUsers(t *testing.T) {
	e := newTeamChat(t, false)
	for i := range 5 {
		contains(t, e.reply(ben, fmt.Sprintf("/team join wrongcode%d", i)), "✗")
	}
	code := e.invite(ann, "")
	contains(t, e.reply(ben, "/team join "+code), "Too many wrong codes")
	if _, err := e.db.Member(context.Background(), e.teamNamed("crew").ID, ben); err == nil {
		t.Fatal("a person past the bound joined")
	}
}

// TestTeam_FormerMembersNamed: a removed member's spend is named by their
// username, marked as left, in /spend's split, and /export lists them.
func TestTeam_FormerMembersNamed(t *testing.T) {
	e := newTeamChat(t, false)
	contains(t, e.reply(ben, "/team join "+e.invite(ann, "")), "joined")
	contains(t, e.reply(ben, "/rent box1 autodl 4090 1.88/h"), "box1")
	e.now = e.now.Add(2 * time.Hour)
	contains(t, e.reply(ben, "/release box1"), "released")
	contains(t, e.reply(ann, "/team remove @ben"), "no longer in team crew")
	r := e.reply(ann, "/spend")
	contains(t, r, "@ben (left)")
	if strings.Contains(r, "id702") {
		t.Fatalf("/spend names the former member by ID: %q", r)
	}
	var doc string
	for _, s := range e.talk(ann, "/export json") {
		if s.Out.Document != nil {
			doc = strings.ReplaceAll(string(s.Out.Document.Data), " ", "")
		}
	}
	contains(t, doc, `"username":"ben"`, `"removed":true`)
	contains(t, e.reply(ann, "/settings lang=zh"), "")
	contains(t, e.reply(ann, "/spend"), "@ben（已退出）")
}

// TestTeam_CodePostedInGroupBurnt: a join code posted in a group, by a
// person of the allow list or a stranger, is deleted from the group and
// works no more; the group is not shown the code; the admins are told
// privately.
func TestTeam_CodePostedInGroupBurnt(t *testing.T) {
	for _, c := range []struct {
		name, text string
		who        int64
	}{
		{"join", "/team join %s", ben},
		{"start", "/start join-%s", ben},
		{"stranger", "/team join %s", dan},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newTeamChat(t, true)
			code := e.invite(ann, "")
			ds := &delSender{}
			u := e.as(c.who, fmt.Sprintf(c.text, code))
			u.ChatID, u.ChatType, u.ChatTitle, u.MessageID = -950, chat.ChatGroup, "GPU crew", 41
			if err := e.core.Handle(context.Background(), u, ds); err != nil {
				t.Fatal(err)
			}
			if d := ds.Deleted(); len(d) != 1 || d[0] != 41 {
				t.Fatalf("deleted %v, want the message 41", d)
			}
			var group, notice string
			for _, s := range ds.Take() {
				switch s.Out.ChatID {
				case -950:
					group = s.Out.Text
				case ann:
					notice = s.Out.Text
				}
			}
			contains(t, group, "no longer works")
			if strings.Contains(group, code) {
				t.Fatalf("the group was shown the code: %q", group)
			}
			contains(t, notice, "posted in a group", "crew")
			contains(t, e.reply(c.who, "/team join "+code), "✗")
			if _, err := e.db.Member(context.Background(), e.teamNamed("crew").ID, c.who); err == nil {
				t.Fatal("the burnt code admitted its poster")
			}
		})
	}
}

// TestTeam_NoRentalNamedIsTheTeams: a rental name the team's ledger does
// not hold is answered as the team's ("team crew has no rental named
// box9"), not as the sender's own; in their own ledger it stays theirs.
func TestTeam_NoRentalNamedIsTheTeams(t *testing.T) {
	e := newTeamChat(t, false)
	e.teamNamed("crew")
	r := e.reply(ann, "/stop box9")
	contains(t, r, "team crew has no rental named box9", "nothing was changed")
	if strings.Contains(r, "you have no rental") {
		t.Errorf("a team's missing rental read as the sender's: %q", r)
	}
	contains(t, e.reply(ann, "/team owner box9 @ann"), "team crew has no rental named box9")
	contains(t, e.reply(ann, "/use me"), "own ledger")
	contains(t, e.reply(ann, "/stop box9"), "you have no rental named box9")
}
