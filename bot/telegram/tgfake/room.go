package tgfake

import (
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A group's life as Telegram tells a bot of it: its title, its upgrade
// to a supergroup (a new chat ID), the bot removed from it and added
// back. Each Send… method queues the updates Telegram sends and changes
// how the fake answers the bot's messages to that chat from then on, as
// Telegram does.

// chatLocked is chatFor with the chat's title (SetChatTitle). s.mu must
// be held.
func (s *Server) chatLocked(chatID int64) *tgbotapi.Chat {
	c := chatFor(chatID)
	c.Title = s.titles[chatID]
	return c
}

// SetChatTitle sets the title sent with a group's or supergroup's
// updates ("" for none).
func (s *Server) SetChatTitle(chatID int64, title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.titles[chatID] = title
}

// MigrateChat upgrades group oldChat to supergroup newChat without
// telling the bot: from now on the bot's messages to oldChat answer 400
// "Bad Request: group chat was upgraded to a supergroup chat" with
// parameters.migrate_to_chat_id = newChat. newChat keeps oldChat's title.
func (s *Server) MigrateChat(oldChat, newChat int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.migrateLocked(oldChat, newChat)
}

func (s *Server) migrateLocked(oldChat, newChat int64) {
	s.migrated[oldChat] = newChat
	if t, ok := s.titles[oldChat]; ok {
		if _, set := s.titles[newChat]; !set {
			s.titles[newChat] = t
		}
	}
	s.notifyLocked()
}

// SendMigrated upgrades group oldChat to supergroup newChat (MigrateChat)
// as userID did it, and queues the two service messages Telegram sends:
// one in oldChat with migrate_to_chat_id, then one in newChat with
// migrate_from_chat_id. It returns their update IDs.
func (s *Server) SendMigrated(userID, oldChat, newChat int64) (toUpdate, fromUpdate int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.migrateLocked(oldChat, newChat)
	m := s.newMessageLocked(userID, oldChat)
	m.MigrateToChatID = newChat
	toUpdate = s.enqueueLocked(tgbotapi.Update{Message: m})
	m = s.newMessageLocked(userID, newChat)
	m.MigrateFromChatID = oldChat
	fromUpdate = s.enqueueLocked(tgbotapi.Update{Message: m})
	return toUpdate, fromUpdate
}

// RemoveBot takes the bot out of group or supergroup chatID without
// telling it: from now on its messages there answer 403 "Forbidden: bot
// was kicked from the group chat" (kicked) or "Forbidden: bot is not a
// member of the group chat" (it was removed, or left).
func (s *Server) RemoveBot(chatID int64, kicked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(chatID, kicked)
}

func (s *Server) removeLocked(chatID int64, kicked bool) {
	kind := "group chat"
	if chatFor(chatID).Type == "supergroup" {
		kind = "supergroup chat"
	}
	if kicked {
		s.gone[chatID] = "Forbidden: bot was kicked from the " + kind
	} else {
		s.gone[chatID] = "Forbidden: bot is not a member of the " + kind
	}
	s.notifyLocked()
}

// SendBotRemoved removes the bot from chatID (RemoveBot) as userID did
// it, and queues the my_chat_member update Telegram sends: the bot's new
// status "kicked" or "left". It returns the update ID.
func (s *Server) SendBotRemoved(userID, chatID int64, kicked bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(chatID, kicked)
	status := "left"
	if kicked {
		status = "kicked"
	}
	return s.enqueueLocked(tgbotapi.Update{MyChatMember: s.botMemberLocked(userID, chatID, "member", status)})
}

// SendBotAdded adds the bot to chatID as userID did it: its messages
// there work again, and the my_chat_member update with the bot's new
// status "member" is queued. It returns the update ID.
func (s *Server) SendBotAdded(userID, chatID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.gone, chatID)
	s.notifyLocked()
	return s.enqueueLocked(tgbotapi.Update{MyChatMember: s.botMemberLocked(userID, chatID, "left", "member")})
}

// botMemberLocked is a my_chat_member change of the bot's status in
// chatID from oldStatus to newStatus, made by userID. s.mu must be held.
func (s *Server) botMemberLocked(userID, chatID int64, oldStatus, newStatus string) *tgbotapi.ChatMemberUpdated {
	bot := &tgbotapi.User{ID: BotID, IsBot: true, FirstName: "Fake Bot", UserName: BotUsername}
	return &tgbotapi.ChatMemberUpdated{
		Chat:          *s.chatLocked(chatID),
		From:          *s.userLocked(userID),
		Date:          int(time.Now().Unix()),
		OldChatMember: tgbotapi.ChatMember{User: bot, Status: oldStatus},
		NewChatMember: tgbotapi.ChatMember{User: bot, Status: newStatus},
	}
}
