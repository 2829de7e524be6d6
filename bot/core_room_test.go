package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// roomAdmin is a group's admin who is not on the allow list: Telegram's
// news about the group comes from whoever caused it.
const roomAdmin int64 = 799

// roomTeam makes team crew on the store with ann its owner, ben a second
// owner (his language Chinese) and cat a member, its room bound to
// chatID, and returns it.
func roomTeam(t *testing.T, e *env, chatID int64) ledger.Team {
	t.Helper()
	ctx := context.Background()
	for _, u := range []ledger.User{{ID: ann, Lang: "en", TZ: "UTC"}, {ID: ben, Lang: "zh", TZ: "UTC"}, {ID: cat, Lang: "en", TZ: "UTC"}} {
		if _, err := e.db.EnsureUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	seq := 0
	act := func(by int64) ledger.Action {
		seq++
		return ledger.Action{UserID: by, By: by, At: e.now, Key: fmt.Sprintf("room-setup:%d", seq)}
	}
	tm, err := e.db.CreateTeam(ctx, act(ann), "crew", "ann")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		id   int64
		name string
	}{{ben, "ben"}, {cat, "cat"}} {
		code, _, err := e.db.CreateInvite(ctx, act(ann), tm.ID, p.id, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Join(ctx, act(p.id), code, p.name, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.SetRole(ctx, act(ann), tm.ID, ben, ledger.RoleOwner); err != nil {
		t.Fatal(err)
	}
	tm, err = e.db.BindRoom(ctx, act(ann), tm.ID, chatID, "GPU crew")
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// roomUpdate is Telegram's news about chatID, from the group's admin.
func roomUpdate(chatID int64, edit func(*chat.Update)) chat.Update {
	u := chat.Update{Key: fmt.Sprintf("test:%d", keySeq.Add(1)), Kind: chat.KindOther, UserID: roomAdmin, ChatID: chatID,
		ChatType: chat.ChatGroup, ChatTitle: "GPU crew"}
	edit(&u)
	return u
}

// TestCore_RoomMigrated: the service message of a group upgraded to a
// supergroup moves the team's room to the new ID, whoever sent it (here a
// group admin the bot does not serve), and says nothing; the second
// service message (from the supergroup) and a redelivery change nothing
// more; a group that is no room is left alone.
func TestCore_RoomMigrated(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{ann, ben, cat}})
	const old, super = -4001, -1000000004001
	tm := roomTeam(t, e, old)
	ctx := context.Background()

	to := roomUpdate(old, func(u *chat.Update) { u.MigrateTo = super })
	if out := e.handle(to); len(out) != 0 {
		t.Errorf("the migration was answered: %+v", out)
	}
	got, err := e.db.TeamByRoom(ctx, super)
	if err != nil || got.ID != tm.ID || got.RoomTitle != "GPU crew" {
		t.Fatalf("the supergroup's team = %+v, %v; want crew with its title", got, err)
	}
	if _, err := e.db.TeamByRoom(ctx, old); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Errorf("the old group is still a room: %v", err)
	}

	from := roomUpdate(super, func(u *chat.Update) { u.ChatType, u.MigrateFrom = chat.ChatSupergroup, old })
	again := to
	again.Redelivered = true
	for _, u := range []chat.Update{from, again} {
		if out := e.handle(u); len(out) != 0 {
			t.Errorf("%+v was answered: %+v", u, out)
		}
		if got, err := e.db.Team(ctx, tm.ID); err != nil || got.Room != super {
			t.Errorf("after %+v the room is %d (%v), want %d", u, got.Room, err, super)
		}
	}

	// A group that is no team's room: nothing to move, nothing said.
	if out := e.handle(roomUpdate(-4009, func(u *chat.Update) { u.MigrateTo = -1000000004009 })); len(out) != 0 {
		t.Errorf("a plain group's migration was answered: %+v", out)
	}
	if _, err := e.db.TeamByRoom(ctx, -1000000004009); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Errorf("a room appeared for a group that was none: %v", err)
	}
}

// TestCore_RoomBotRemoved: the bot removed from a team's room unbinds it
// and tells each owner privately, once, in their language, where the
// cards go now; a member who is no owner, the group and the admin who
// removed the bot are told nothing; a second notice of the same removal
// (redelivered, or Telegram's next my_chat_member) tells nobody again.
func TestCore_RoomBotRemoved(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{ann, ben, cat}})
	const group = -4002
	tm := roomTeam(t, e, group)
	ctx := context.Background()

	removed := roomUpdate(group, func(u *chat.Update) { u.BotLeft = true })
	out := e.handle(removed)
	told := map[int64]string{}
	for _, s := range out {
		if _, dup := told[s.Out.ChatID]; dup {
			t.Errorf("chat %d told twice", s.Out.ChatID)
		}
		told[s.Out.ChatID] = s.Out.Text
	}
	if len(told) != 2 || told[ann] == "" || told[ben] == "" {
		t.Fatalf("told %v, want the two owners only", told)
	}
	contains(t, told[ann], "crew", "«GPU crew»", "come to you privately", "/team bind")
	contains(t, told[ben], "crew", "«GPU crew»", "私聊发给 @ann", "/team bind")
	if got, err := e.db.Team(ctx, tm.ID); err != nil || got.Room != 0 {
		t.Fatalf("the room after the bot's removal: %d, %v; want unbound", got.Room, err)
	}

	again := removed
	again.Redelivered = true
	kicked := roomUpdate(group, func(u *chat.Update) { u.BotLeft = true })
	for _, u := range []chat.Update{again, kicked} {
		if out := e.handle(u); len(out) != 0 {
			t.Errorf("%s: told again: %+v", u.Key, out)
		}
	}
	if strings.Contains(e.logs.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", e.logs)
	}
}
