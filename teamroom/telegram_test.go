package teamroom_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/teamroom"
)

// noHandler handles no update: the transport is used only to send.
type noHandler struct{}

func (noHandler) Handle(context.Context, chat.Update, chat.Sender) error { return nil }

// TestSender_Telegram: the real transport against the fake Bot API, as
// the server wires it: a room Telegram upgrades to a supergroup without a
// word to the bot is followed on the first send (the 400 with
// migrate_to_chat_id), and when the bot is then kicked from the
// supergroup the next send unbinds the room and goes to alice, with the
// owners told in their languages.
func TestSender_Telegram(t *testing.T) {
	e := newEnv(t)
	fake := tgfake.New(t, "123456:TEAMROOM-test-token")
	tr, err := telegram.New(telegram.Config{
		Token: fake.Token(), Endpoint: fake.Endpoint(), Handler: noHandler{}, Store: e.db,
		Logger:       slog.New(slog.DiscardHandler),
		PollTimeout:  time.Second,
		Backoff:      telegram.Backoff{Min: 5 * time.Millisecond, Max: 40 * time.Millisecond},
		RetryBackoff: telegram.Backoff{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		Pacing:       telegram.Pacing{Chat: time.Millisecond, Group: time.Millisecond, Global: time.Millisecond, ChatBurst: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	snd := teamroom.Wrap(tr, teamroom.Config{Teams: e.db, Store: e.db, Now: func() time.Time { return t0 }, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()

	fake.MigrateChat(room, super)
	if _, err := snd.Send(ctx, chat.Outgoing{ChatID: room, Text: "box3 idle"}); err != nil {
		t.Fatalf("send to the migrated room: %v", err)
	}
	if got := fake.Messages(super); len(got) != 1 || got[0].Text != "box3 idle" {
		t.Fatalf("the supergroup got %+v", got)
	}
	if r := e.room(); r != super {
		t.Fatalf("room = %d, want %d", r, super)
	}

	fake.RemoveBot(super, true)
	if _, err := snd.Send(ctx, chat.Outgoing{ChatID: super, Text: "box3 released"}); err != nil {
		t.Fatalf("send to the lost room: %v", err)
	}
	if r := e.room(); r != 0 {
		t.Fatalf("room = %d, want unbound", r)
	}
	got := fake.Messages(alice)
	if len(got) != 2 || !strings.Contains(got[0].Text, "I was removed from team lab's group") || got[1].Text != "box3 released" {
		t.Fatalf("alice got %+v, want the notice then the card", got)
	}
	if got := fake.Messages(carol); len(got) != 1 || !strings.Contains(got[0].Text, "我已被移出团队 lab 的群组") {
		t.Fatalf("carol got %+v", got)
	}
	if got := fake.Messages(super); len(got) != 1 {
		t.Errorf("the lost supergroup has %d messages, want the first only", len(got))
	}
}
