package connsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// teamLab makes team "lab" of alice (uid, its owner) with bob (2), a
// member, and its room bound; it returns the team's ledger, and press,
// which presses data as user in the room.
func teamLab(t *testing.T, e *env) (lid int64, press func(user int64, data, key string)) {
	t.Helper()
	const bob, room = int64(2), int64(-100700)
	if _, err := e.db.EnsureUser(e.ctx, ledger.User{ID: bob, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	tm, err := e.db.CreateTeam(e.ctx, ledger.Action{UserID: uid, By: uid, At: e.clk.Now()}, "lab", "alice")
	if err != nil {
		t.Fatal(err)
	}
	code, _, err := e.db.CreateInvite(e.ctx, ledger.Action{UserID: tm.Ledger(), By: uid, At: e.clk.Now()}, tm.ID, bob, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Join(e.ctx, ledger.Action{UserID: bob, By: bob, At: e.clk.Now()}, code, "bob", false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.BindRoom(e.ctx, ledger.Action{UserID: tm.Ledger(), By: uid, At: e.clk.Now()}, tm.ID, room, "Lab"); err != nil {
		t.Fatal(err)
	}
	return tm.Ledger(), func(user int64, data, key string) {
		t.Helper()
		teams := map[int64]string{}
		ms, err := e.db.TeamsOf(e.ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			teams[m.Team.Ledger()] = string(m.Member.Role)
		}
		dispatch(t, e.db, e.btn, e.snd, chat.ButtonPress{Update: chat.Update{Key: key, Kind: chat.KindCallback, UserID: user, ChatID: room,
			MessageID: 1, CallbackID: "cb", CallbackData: data}, Now: e.clk.Now(), Teams: teams})
	}
}

// lastAnswer is the toast of the last press.
func (e *env) lastAnswer() string {
	if len(e.snd.answers) == 0 {
		return ""
	}
	return e.snd.answers[len(e.snd.answers)-1]
}

// TestSync_TeamSkipAdminOnly: on a team's ledger [Don't track it] is the
// team's choice: bob, a member, is refused and the question stays open;
// alice, its owner, declines the instance.
func TestSync_TeamSkipAdminOnly(t *testing.T) {
	e := newEnv(t)
	lid, press := teamLab(t, e)
	hand := ledger.Rental{Name: "mine", Platform: "runpod", GPU: "A40", GPUCount: 2, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0.Add(-5 * time.Hour)}}}
	if p, ok := ledger.LookupProfile("runpod"); ok {
		p.Apply(&hand)
	}
	if _, err := e.db.CreateRental(e.ctx, ledger.Action{UserID: lid, By: uid, At: e.clk.Now()}, hand); err != nil {
		t.Fatal(err)
	}
	e.rp.SetPods(pod("abc123", "", "RUNNING", "0.79", t0.Add(-time.Hour)))
	if _, err := e.s.Connect(e.ctx, lid, "runpod", rpKey); err != nil {
		t.Fatal(err)
	}
	e.round()
	q := question(t, e.snd.take())
	skip := ""
	for _, row := range q.Buttons {
		for _, b := range row {
			if b.Text == "Don't track it" {
				skip = b.Data
			}
		}
	}
	if skip == "" {
		t.Fatalf("no [Don't track it] on %q", q.Text)
	}
	press(2, skip, "tg:update:skip:1")
	if a := e.lastAnswer(); !strings.Contains(a, "Only an admin") {
		t.Fatalf("bob's Don't track it answered %q, want refused", a)
	}
	if ins, err := e.db.PlatformInstances(e.ctx, lid, "runpod"); err != nil || len(ins) != 1 || ins[0].Status != ledger.PlatformAsked {
		t.Fatalf("after bob's press: %+v, %v; want the instance still asked", ins, err)
	}
	press(uid, skip, "tg:update:skip:2")
	if ins, err := e.db.PlatformInstances(e.ctx, lid, "runpod"); err != nil || len(ins) != 1 || ins[0].Status != ledger.PlatformDeclined {
		t.Fatalf("after alice's press: %+v, %v; want it declined", ins, err)
	}
}

// TestSync_TeamFloodAdminOnly: on a team's ledger the flood card's [Log
// all] and [Ignore] are an admin's: bob's presses change nothing (no
// rental after a round); alice's Log all logs them.
func TestSync_TeamFloodAdminOnly(t *testing.T) {
	e := newEnv(t)
	lid, press := teamLab(t, e)
	e.rp.SetPods(pods(0, 30)...)
	if _, err := e.s.Connect(e.ctx, lid, "runpod", rpKey); err != nil {
		t.Fatal(err)
	}
	e.round()
	_, data := card(t, e.snd.take())
	for _, label := range []string{"Log all", "Ignore"} {
		press(2, data[label], "tg:update:flood:"+label)
		if a := e.lastAnswer(); !strings.Contains(a, "Only an admin") {
			t.Fatalf("bob's %s answered %q, want refused", label, a)
		}
	}
	e.round()
	if b, err := e.db.Book(e.ctx, lid); err != nil || len(b.Rentals) != 0 {
		t.Fatalf("after bob's presses: %d rentals, %v; want none", len(b.Rentals), err)
	}
	press(uid, data["Log all"], "tg:update:flood:alice")
	e.round()
	if b, err := e.db.Book(e.ctx, lid); err != nil || len(b.Rentals) != 30 {
		t.Fatalf("after alice's Log all: %d rentals, %v; want 30", len(b.Rentals), err)
	}
}
