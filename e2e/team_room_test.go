package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestTeamRoom runs the real server with GPULEDGER_TEAM_OUTSIDERS=on
// against the fake Bot API: alice (the only allowed person) makes team
// crew and binds a group as its room; dan, outside the allow list, joins
// by her invite's t.me link (the server asked Telegram for the bot's
// username at start; dan is admitted, as the operator allowed); the group is
// upgraded to a supergroup, Telegram's service messages come from dan (no
// user of the bot's own), and the room follows the new chat ID; then dan
// removes the bot from the supergroup, and the room is unbound and alice,
// its owner, told privately, once; nothing is said in either chat.
func TestTeamRoom(t *testing.T) {
	const (
		dan   = 5009
		group = -7101
		super = -1000000007101
	)
	w := &teamWorld{world: startWorldEnv(t, []string{fmt.Sprintf("GPULEDGER_ALLOWED_USERS=%d", alice), "GPULEDGER_TEAM_OUTSIDERS=on"},
		func(ctx context.Context, w *world, db *sqlite.DB) {
			if _, err := db.EnsureUser(ctx, ledger.User{ID: alice, Lang: "en", TZ: "UTC", Settings: fastSettings()}); err != nil {
				t.Fatal(err)
			}
		})}
	w.fake.SetUser(alice, "alice", "en")
	w.fake.SetUser(dan, "dan", "en")
	w.fake.SetChatTitle(group, "GPU crew")
	const wait = 20 * time.Second

	w.waitIn(t, alice, w.say(alice, alice, "/team new crew"), wait, "crew", "owner")
	w.waitIn(t, group, w.say(alice, group, "/team bind"), wait, "room of team crew")
	_, link := w.invite(t)
	if link == "" {
		t.Fatal("the invite has no t.me link: the server did not give the core the bot's username")
	}
	w.waitIn(t, dan, w.say(dan, dan, "/start join-"+link), wait, "joined team crew")

	room := func() int64 {
		t.Helper()
		db, err := sqlite.Open(context.Background(), w.db)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		tm, err := db.TeamByName(context.Background(), "crew")
		if err != nil {
			t.Fatal(err)
		}
		return tm.Room
	}
	waitRoom := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(wait)
		for got := room(); got != want; got = room() {
			if time.Now().After(deadline) {
				t.Fatalf("team crew's room is %d, want %d; server log:\n%s", got, want, w.srvLog)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if got := room(); got != group {
		t.Fatalf("team crew's room is %d after /team bind, want %d", got, group)
	}
	inGroup, inSuper, toAlice := len(w.fake.Messages(group)), len(w.fake.Messages(super)), len(w.fake.Messages(alice))

	w.fake.SendMigrated(dan, group, super)
	waitRoom(super)

	w.fake.SendBotRemoved(dan, super, true)
	m := w.waitIn(t, alice, toAlice, wait, "removed from team crew's group «GPU crew»", "come to you privately", "/team bind")
	waitRoom(0)
	w.fake.SendBotRemoved(dan, super, true) // Telegram says it again: nobody is told twice
	w.waitIn(t, dan, w.say(dan, dan, "/team"), wait, "crew")
	if n := len(w.fake.Messages(alice)); n != toAlice+1 {
		t.Errorf("alice got %d messages after the removal, want 1 (%q):\n%s", n-toAlice, m.Text, w.chatText(alice))
	}
	if n := len(w.fake.Messages(group)); n != inGroup {
		t.Errorf("the old group got %d messages:\n%s", n-inGroup, w.chatText(group))
	}
	if n := len(w.fake.Messages(super)); n != inSuper {
		t.Errorf("the supergroup got %d messages:\n%s", n-inSuper, w.chatText(super))
	}
}
