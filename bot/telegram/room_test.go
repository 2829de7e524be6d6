package telegram_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestSend_RoomRefusals: through the real library and the fake, a send to
// a group upgraded to a supergroup is a *chat.MigratedError naming the
// new ID, one to a group the bot was kicked or removed from is
// chat.ErrChatGone, and a private chat never opened is still
// chat.ErrNoPrivateChat (never ErrChatGone); nothing reaches a refused
// chat.
func TestSend_RoomRefusals(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	ctx := context.Background()
	const old, super, kicked, left = -4001, -1000000004001, -4002, -1000000004003
	fake.MigrateChat(old, super)
	fake.RemoveBot(kicked, true)
	fake.RemoveBot(left, false)
	fake.ClosePrivate(42)

	_, err := tr.Send(ctx, chat.Outgoing{ChatID: old, Text: "card"})
	var me *chat.MigratedError
	if !errors.As(err, &me) || me.To != super {
		t.Fatalf("send to a migrated group: %v, want a MigratedError to %d", err, super)
	}
	if errors.Is(err, chat.ErrChatGone) {
		t.Error("a migrated group is taken for gone")
	}
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: me.To, Text: "card"}); err != nil {
		t.Fatalf("send to the new ID: %v", err)
	}
	for _, id := range []int64{kicked, left} {
		_, err := tr.Send(ctx, chat.Outgoing{ChatID: id, Text: "card", Buttons: [][]chat.Button{{{Text: "Snooze", Data: "s:1"}}}})
		if !errors.Is(err, chat.ErrChatGone) || errors.Is(err, chat.ErrNoPrivateChat) {
			t.Errorf("send to %d, the bot out of it: %v, want ErrChatGone only", id, err)
		}
		_, err = tr.Send(ctx, chat.Outgoing{ChatID: id, Text: "card", EditMessageID: 3})
		if !errors.Is(err, chat.ErrChatGone) {
			t.Errorf("edit in %d, the bot out of it: %v, want ErrChatGone", id, err)
		}
	}
	_, err = tr.Send(ctx, chat.Outgoing{ChatID: 42, Text: "hello"})
	if !errors.Is(err, chat.ErrNoPrivateChat) || errors.Is(err, chat.ErrChatGone) || chat.MigratedTo(err) != 0 {
		t.Errorf("send to a closed private chat: %v, want ErrNoPrivateChat only", err)
	}
	for _, id := range []int64{old, kicked, left, 42} {
		if n := len(fake.Messages(id)); n != 0 {
			t.Errorf("chat %d got %d messages", id, n)
		}
	}
	if n := len(fake.Messages(super)); n != 1 {
		t.Errorf("the supergroup got %d messages, want 1", n)
	}

	fake.SendBotAdded(7, kicked)
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: kicked, Text: "back"}); err != nil {
		t.Errorf("send after the bot was added back: %v", err)
	}
}

// addCounter is a memStore that counts the stored updates per user.
type addCounter struct {
	*memStore
	mu    sync.Mutex
	added map[int64]int
}

func (s *addCounter) InboxAdd(ctx context.Context, es []ledger.InboxEntry, key, offset string) error {
	if err := s.memStore.InboxAdd(ctx, es, key, offset); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		s.added[e.UserID]++
	}
	return nil
}

func (s *addCounter) count(userID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.added[userID]
}

// TestTransport_RoomEvents: the service messages of a group upgraded to
// a supergroup and the bot's removal reach the handler with Telegram's
// IDs, and are stored in the inbox (so a crash does not lose them) though
// the group's admin who caused them is not a user of the bot; the same
// person's own message is a stranger's, kept out of the store.
func TestTransport_RoomEvents(t *testing.T) {
	fake := tgfake.New(t, token)
	fake.SetChatTitle(-4001, "GPU crew")
	store := &addCounter{memStore: newMemStore(), added: map[int64]int{}}
	h := &recorder{}
	const admin = 99 // a group admin outside the allow list
	start(t, fake, h, store, func(c *telegram.Config) {
		c.Allowed = func(id int64) bool { return id != admin }
	})
	to, from := fake.SendMigrated(admin, -4001, -1000000004001)
	removed := fake.SendBotRemoved(admin, -4002, true)
	fake.SendText(admin, admin, "/status")
	waitFor(t, "four handled", func() bool { return len(h.updates()) == 4 })
	byKey := map[string]chat.Update{}
	for _, u := range h.updates() {
		byKey[u.Key] = u
	}
	if u := byKey[telegram.UpdateKey(to)]; u.MigrateTo != -1000000004001 || u.ChatID != -4001 || u.ChatTitle != "GPU crew" || u.Kind != chat.KindOther || u.UserID != admin {
		t.Errorf("migrate_to = %+v", u)
	}
	if u := byKey[telegram.UpdateKey(from)]; u.MigrateFrom != -4001 || u.ChatID != -1000000004001 || u.ChatType != chat.ChatSupergroup || u.ChatTitle != "GPU crew" {
		t.Errorf("migrate_from = %+v", u)
	}
	if u := byKey[telegram.UpdateKey(removed)]; !u.BotLeft || u.ChatID != -4002 || u.RoomEvent() != true {
		t.Errorf("bot removed = %+v", u)
	}
	if n := store.count(admin); n != 3 {
		t.Errorf("%d of the admin's updates stored, want the 3 room events (not the stranger's /status)", n)
	}
}

// TestTransport_AnswerFollowsMigration: an answer to a group's update
// that waits for its turn while the group becomes a supergroup goes to
// the supergroup (the same people), not lost to the old ID's refusal.
func TestTransport_AnswerFollowsMigration(t *testing.T) {
	fake := tgfake.New(t, token)
	const old, super = -4001, -1000000004001
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		fake.MigrateChat(old, super) // Telegram upgrades the group while the answer waits
		_, err := s.Send(ctx, chat.Outgoing{ChatID: u.ChatID, Text: "answer to " + u.Text})
		return err
	}}
	start(t, fake, h, newMemStore(), nil)
	fake.SendText(1, old, "/status")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msgs, err := fake.WaitMessages(ctx, super, 1)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Text != "answer to /status" {
		t.Errorf("the supergroup got %q", msgs[0].Text)
	}
	if n := len(fake.Messages(old)); n != 0 {
		t.Errorf("the old group got %d messages", n)
	}
}
