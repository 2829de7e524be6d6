package telegram

import (
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// UpdateKey returns the exactly-once key of a Telegram update.
func UpdateKey(updateID int) string {
	return "tg:update:" + strconv.Itoa(updateID)
}

// convert turns a Telegram update into the core's Update. ok is false for
// updates the core never sees (channel posts, inline queries, polls,
// updates without a sender); they are confirmed without handling.
// botName is the bot's username, for commands addressed "/cmd@botname".
func convert(u tgbotapi.Update, botName string) (out chat.Update, ok bool) {
	out.Key = UpdateKey(u.UpdateID)
	switch {
	case u.Message != nil:
		m := u.Message
		if m.From == nil || m.Chat == nil {
			return out, false
		}
		fromMessage(&out, m)
		out.MessageID = m.MessageID
		if m.MigrateToChatID != 0 || m.MigrateFromChatID != 0 {
			// The group was upgraded to a supergroup: Telegram's service
			// messages in the old chat (migrate_to_chat_id) and in the new
			// one (migrate_from_chat_id). A team's room follows it.
			out.Kind = chat.KindOther
			out.MigrateTo, out.MigrateFrom = m.MigrateToChatID, m.MigrateFromChatID
			return out, true
		}
		out.Forwarded = m.ForwardFrom != nil || m.ForwardFromChat != nil || m.ForwardSenderName != "" || m.ForwardDate != 0
		raw := m.Text
		if raw == "" && isCommand(m.Caption) {
			// A command as a photo's or a document's caption is read as
			// its text: "/connect runpod KEY" so sent must be handled,
			// and its message deleted, as a text message would be.
			raw = m.Caption
		}
		if raw == "" {
			// Sticker, voice, service message; a photo or document with
			// a caption that is not a command (kept in Text, so that a
			// key in it is still found and kept out of the store).
			out.Kind = chat.KindOther
			out.Text = m.Caption
			return out, true
		}
		text, mine := stripBotName(raw, botName)
		out.Text = text
		out.Kind = chat.KindText
		if !mine {
			out.Kind = chat.KindOther // a command for another bot in a group
		}
		return out, true
	case u.EditedMessage != nil:
		m := u.EditedMessage
		if m.From == nil || m.Chat == nil {
			return out, false
		}
		fromMessage(&out, m)
		out.Kind = chat.KindOther
		out.Edited = true
		out.Text = m.Text
		out.MessageID = m.MessageID
		return out, true
	case u.CallbackQuery != nil:
		cb := u.CallbackQuery
		if cb.From == nil {
			return out, false
		}
		// The presser, never the message's author (the bot) or the chat.
		out.Kind = chat.KindCallback
		out.UserID = cb.From.ID
		out.Username = cb.From.UserName
		out.LangCode = cb.From.LanguageCode
		out.CallbackID = cb.ID
		out.CallbackData = cb.Data
		out.ChatID = cb.From.ID
		out.ChatType = chat.ChatPrivate
		if cb.Message != nil && cb.Message.Chat != nil {
			out.ChatID = cb.Message.Chat.ID
			out.ChatType = chat.ChatType(cb.Message.Chat.Type)
			out.ChatTitle = cb.Message.Chat.Title
			out.MessageID = cb.Message.MessageID
		}
		return out, true
	case u.MyChatMember != nil:
		// The bot was blocked, unblocked, added to or removed from a chat.
		m := u.MyChatMember
		if m.Chat.Type == string(chat.ChatChannel) {
			return out, false
		}
		out.Kind = chat.KindOther
		out.UserID = m.From.ID
		out.Username = m.From.UserName
		out.LangCode = m.From.LanguageCode
		out.ChatID = m.Chat.ID
		out.ChatType = chat.ChatType(m.Chat.Type)
		out.ChatTitle = m.Chat.Title
		if isGroup(out.ChatType) && (m.NewChatMember.HasLeft() || m.NewChatMember.WasKicked()) {
			out.BotLeft = true // removed from a group: a team's room there is gone
		}
		return out, true
	}
	return out, false // channel posts and everything else
}

func fromMessage(out *chat.Update, m *tgbotapi.Message) {
	out.UserID = m.From.ID
	out.Username = m.From.UserName
	out.LangCode = m.From.LanguageCode
	out.ChatID = m.Chat.ID
	out.ChatType = chat.ChatType(m.Chat.Type)
	out.ChatTitle = m.Chat.Title
	if m.Date > 0 {
		out.SentAt = time.Unix(int64(m.Date), 0).UTC() // for an edit, the original's
	}
}

// isGroup reports whether t is a group or a supergroup.
func isGroup(t chat.ChatType) bool { return t == chat.ChatGroup || t == chat.ChatSupergroup }

// isCommand reports whether text begins with a command ("/cmd", also
// with a full-width slash), leading spaces aside.
func isCommand(text string) bool {
	s := strings.TrimSpace(text)
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "／")
}

// stripBotName turns "/status@mybot args" into "/status args" when mybot is
// this bot, and reports false when the command names another bot.
func stripBotName(text, botName string) (string, bool) {
	if !strings.HasPrefix(text, "/") {
		return text, true
	}
	end := strings.IndexAny(text, " \n\t")
	if end < 0 {
		end = len(text)
	}
	cmd, name, ok := strings.Cut(text[:end], "@")
	if !ok {
		return text, true
	}
	if botName != "" && !strings.EqualFold(name, botName) {
		return text, false
	}
	return cmd + text[end:], true
}
