package tgfake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

// TestClient_Room drives a group's life through the control API, as an
// end-to-end test in another process does: the updates come as Telegram
// sends them (with the group's title), and the bot's messages to the old
// group, to a group it was kicked from, and to one it was added back to
// are answered as Telegram answers them.
func TestClient_Room(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	c := tgfake.NewClient(fake.URL(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const old, super, group = -4001, -1000000004001, -4002

	if err := c.SetChatTitle(ctx, old, "GPU crew"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMigrated(ctx, 5, old, -7); err == nil {
		t.Error("migrate accepted a group's ID (a supergroup's is below -10^12) as the new chat")
	}
	first, err := c.SendMigrated(ctx, 5, old, super)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := c.SendBotRemoved(ctx, 5, group, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendBotRemoved(ctx, 5, 5, true); err == nil {
		t.Error("remove_bot accepted a private chat")
	}
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Offset: first, Timeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 3 {
		t.Fatalf("%d updates, want 3", len(ups))
	}
	if m := ups[0].Message; m == nil || m.MigrateToChatID != super || m.Chat.ID != old || m.Chat.Title != "GPU crew" || m.From.ID != 5 {
		t.Errorf("migrate_to message = %+v", m)
	}
	if m := ups[1].Message; m == nil || m.MigrateFromChatID != old || m.Chat.ID != super || m.Chat.Type != "supergroup" || m.Chat.Title != "GPU crew" {
		t.Errorf("migrate_from message = %+v", m)
	}
	if m := ups[2].MyChatMember; ups[2].UpdateID != removed || m == nil || m.Chat.ID != group || !m.NewChatMember.WasKicked() || m.NewChatMember.User.ID != tgfake.BotID {
		t.Errorf("my_chat_member = %+v", m)
	}

	_, err = api.Send(tgbotapi.NewMessage(old, "card"))
	var te *tgbotapi.Error
	if !errors.As(err, &te) || te.Code != 400 || te.MigrateToChatID != super {
		t.Errorf("send to the old group: %v, want 400 with migrate_to_chat_id %d", err, super)
	}
	_, err = api.Send(tgbotapi.NewMessage(group, "card"))
	if !errors.As(err, &te) || te.Code != 403 || te.Message != "Forbidden: bot was kicked from the group chat" {
		t.Errorf("send to the group the bot was kicked from: %v", err)
	}
	if _, err := api.Send(tgbotapi.NewMessage(super, "card")); err != nil {
		t.Errorf("send to the supergroup: %v", err)
	}
	if _, err := c.SendBotAdded(ctx, 5, group); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Send(tgbotapi.NewMessage(group, "back")); err != nil {
		t.Errorf("send after the bot was added back: %v", err)
	}
}
