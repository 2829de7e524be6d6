package telegram

import (
	"errors"
	"fmt"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/chat"
)

// TestConvert_RoomEvents: Telegram's news about a group (upgraded to a
// supergroup, the bot removed) becomes an Update with the IDs Telegram
// gave, and nothing else of a group's life is taken for such news.
func TestConvert_RoomEvents(t *testing.T) {
	ann := &tgbotapi.User{ID: 42, UserName: "ann", LanguageCode: "en"}
	bot := &tgbotapi.User{ID: 777, IsBot: true}
	group := &tgbotapi.Chat{ID: -4001, Type: "group", Title: "GPU crew"}
	super := &tgbotapi.Chat{ID: -1004001, Type: "supergroup", Title: "GPU crew"}
	member := func(c tgbotapi.Chat, old, status string) *tgbotapi.ChatMemberUpdated {
		return &tgbotapi.ChatMemberUpdated{Chat: c, From: *ann,
			OldChatMember: tgbotapi.ChatMember{User: bot, Status: old}, NewChatMember: tgbotapi.ChatMember{User: bot, Status: status}}
	}
	tests := []struct {
		name string
		in   tgbotapi.Update
		want chat.Update
	}{
		{"migrate_to in the old group", tgbotapi.Update{UpdateID: 1, Message: &tgbotapi.Message{MessageID: 9, From: ann, Chat: group, MigrateToChatID: -1004001}},
			chat.Update{Key: "tg:update:1", Kind: chat.KindOther, UserID: 42, ChatID: -4001, ChatType: chat.ChatGroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en", MessageID: 9, MigrateTo: -1004001}},
		{"migrate_from in the new supergroup", tgbotapi.Update{UpdateID: 2, Message: &tgbotapi.Message{MessageID: 1, From: ann, Chat: super, MigrateFromChatID: -4001}},
			chat.Update{Key: "tg:update:2", Kind: chat.KindOther, UserID: 42, ChatID: -1004001, ChatType: chat.ChatSupergroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en", MessageID: 1, MigrateFrom: -4001}},
		{"bot removed from a group", tgbotapi.Update{UpdateID: 3, MyChatMember: member(*group, "member", "left")},
			chat.Update{Key: "tg:update:3", Kind: chat.KindOther, UserID: 42, ChatID: -4001, ChatType: chat.ChatGroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en", BotLeft: true}},
		{"bot kicked from a supergroup", tgbotapi.Update{UpdateID: 4, MyChatMember: member(*super, "administrator", "kicked")},
			chat.Update{Key: "tg:update:4", Kind: chat.KindOther, UserID: 42, ChatID: -1004001, ChatType: chat.ChatSupergroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en", BotLeft: true}},
		{"bot added to a group", tgbotapi.Update{UpdateID: 5, MyChatMember: member(*group, "left", "member")},
			chat.Update{Key: "tg:update:5", Kind: chat.KindOther, UserID: 42, ChatID: -4001, ChatType: chat.ChatGroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en"}},
		{"bot made an admin", tgbotapi.Update{UpdateID: 6, MyChatMember: member(*super, "member", "administrator")},
			chat.Update{Key: "tg:update:6", Kind: chat.KindOther, UserID: 42, ChatID: -1004001, ChatType: chat.ChatSupergroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en"}},
		{"bot blocked in a private chat", tgbotapi.Update{UpdateID: 7, MyChatMember: member(tgbotapi.Chat{ID: 42, Type: "private"}, "member", "kicked")},
			chat.Update{Key: "tg:update:7", Kind: chat.KindOther, UserID: 42, ChatID: 42, ChatType: chat.ChatPrivate, Username: "ann", LangCode: "en"}},
		{"a group's text keeps its title", tgbotapi.Update{UpdateID: 8, Message: &tgbotapi.Message{MessageID: 3, From: ann, Chat: group, Text: "/team bind"}},
			chat.Update{Key: "tg:update:8", Kind: chat.KindText, UserID: 42, ChatID: -4001, ChatType: chat.ChatGroup, ChatTitle: "GPU crew", Username: "ann", LangCode: "en", MessageID: 3, Text: "/team bind"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := convert(tc.in, "fake_bot")
			if !ok {
				t.Fatal("not converted")
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if got.RoomEvent() != (tc.want.MigrateTo != 0 || tc.want.MigrateFrom != 0 || tc.want.BotLeft) {
				t.Errorf("RoomEvent = %v", got.RoomEvent())
			}
		})
	}
}

// TestSendError types Telegram's refusals by the chat they were for: a
// group's 403 or "chat not found" is a gone chat, a private chat's 403
// stays ErrNoPrivateChat, a 400 with migrate_to_chat_id names the new ID,
// and any other error is left as it is.
func TestSendError(t *testing.T) {
	tgErr := func(code int, msg string, migrate int64) error {
		return fmt.Errorf("telegram: send part 1 of 1: telegram: %w", &tgbotapi.Error{Code: code, Message: msg, ResponseParameters: tgbotapi.ResponseParameters{MigrateToChatID: migrate}})
	}
	other := errors.New("telegram: 3 attempts failed: connection refused")
	tests := []struct {
		name      string
		chatID    int64
		err       error
		gone      bool
		private   bool
		migrateTo int64
	}{
		{"kicked from a group", -4001, tgErr(403, "Forbidden: bot was kicked from the group chat", 0), true, false, 0},
		{"not a member of a supergroup", -1004001, tgErr(403, "Forbidden: bot is not a member of the supergroup chat", 0), true, false, 0},
		{"group not found", -4001, tgErr(400, "Bad Request: chat not found", 0), true, false, 0},
		{"group upgraded", -4001, tgErr(400, "Bad Request: group chat was upgraded to a supergroup chat", -1004001), false, false, -1004001},
		{"private chat never opened", 42, tgErr(403, "Forbidden: bot can't initiate conversation with a user", 0), false, true, 0},
		{"private chat blocked", 42, tgErr(403, "Forbidden: bot was blocked by the user", 0), false, true, 0},
		{"private chat not found", 42, tgErr(400, "Bad Request: chat not found", 0), false, false, 0},
		{"bad HTML in a group", -4001, tgErr(400, "Bad Request: can't parse entities", 0), false, false, 0},
		{"network", -4001, other, false, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sendError(tc.chatID, tc.err)
			if errors.Is(err, chat.ErrChatGone) != tc.gone {
				t.Errorf("ErrChatGone = %v, want %v: %v", !tc.gone, tc.gone, err)
			}
			if errors.Is(err, chat.ErrNoPrivateChat) != tc.private {
				t.Errorf("ErrNoPrivateChat = %v, want %v: %v", !tc.private, tc.private, err)
			}
			if got := chat.MigratedTo(err); got != tc.migrateTo {
				t.Errorf("MigratedTo = %d, want %d", got, tc.migrateTo)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("the transport's error is no longer in the chain: %v", err)
			}
		})
	}
	if sendError(-1, nil) != nil {
		t.Error("no error became one")
	}
}
