package connsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestSync_TeamQuestionInRoom: a platform connected in a team asks the
// team's room about an instance it lists, and a member's [A new rental]
// logs it in the team's ledger as theirs; someone outside the team
// pressing the same button changes nothing.
func TestSync_TeamQuestionInRoom(t *testing.T) {
	e := newEnv(t)
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
	// A rental logged by hand in the team makes the sync ask.
	hand := ledger.Rental{Name: "mine", Platform: "runpod", GPU: "A40", GPUCount: 2, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0.Add(-5 * time.Hour)}}}
	if p, ok := ledger.LookupProfile("runpod"); ok {
		p.Apply(&hand)
	}
	if _, err := e.db.CreateRental(e.ctx, ledger.Action{UserID: tm.Ledger(), By: uid, At: e.clk.Now()}, hand); err != nil {
		t.Fatal(err)
	}
	e.rp.SetPods(pod("abc123", "", "RUNNING", "0.79", t0.Add(-time.Hour)))
	if _, err := e.s.Connect(e.ctx, tm.Ledger(), "runpod", rpKey); err != nil {
		t.Fatal(err)
	}
	e.round()
	q := question(t, e.snd.take())
	if q.ChatID != room {
		t.Fatalf("the question went to chat %d, want the room %d", q.ChatID, room)
	}
	last := q.Buttons[len(q.Buttons)-1]
	press := func(user int64, key string) {
		teams := map[int64]string{}
		ms, err := e.db.TeamsOf(e.ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			teams[m.Team.Ledger()] = string(m.Member.Role)
		}
		dispatch(t, e.db, e.btn, e.snd, chat.ButtonPress{Update: chat.Update{Key: key, Kind: chat.KindCallback, UserID: user, ChatID: room,
			MessageID: 1, CallbackID: "cb", CallbackData: last[0].Data}, Now: e.clk.Now(), Teams: teams})
	}
	press(99, "tg:update:team:1") // not in the team
	if got := e.snd.answers; len(got) != 1 || !strings.Contains(got[0], "not yours") {
		t.Fatalf("a stranger's answer = %q", got)
	}
	press(bob, "tg:update:team:2")
	b, err := e.db.Book(e.ctx, tm.Ledger())
	if err != nil {
		t.Fatal(err)
	}
	var synced []*ledger.Rental
	for _, r := range b.Rentals {
		if r.PlatformID == "abc123" {
			synced = append(synced, r)
		}
	}
	if len(synced) != 1 || synced[0].Owner != bob {
		t.Fatalf("synced = %+v, want one rental of bob's", synced)
	}
	if own, err := e.db.Book(e.ctx, uid); err != nil || len(own.Rentals) != 0 {
		t.Fatalf("alice's own ledger got rentals: %v %v", own, err)
	}
}
