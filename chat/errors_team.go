package chat

import (
	"errors"
	"strconv"
)

// ErrChatGone is returned (wrapped) by a Sender when a group or
// supergroup no longer takes the bot's messages: the bot was removed or
// kicked from it, or the chat was deleted (Telegram answers 403 "bot was
// kicked from the group chat", "bot is not a member of the group chat",
// or 400 "chat not found"). A team's room that answers so is unbound and
// its cards go to the owners' private chats. A private chat that refuses
// is ErrNoPrivateChat instead: the person can open it again.
var ErrChatGone = errors.New("chat: the bot is no longer in the group chat")

// MigratedError is returned by a Sender when a group was upgraded to a
// supergroup, which Telegram gives a new chat ID (To): it answers a send
// to the old ID 400 "group chat was upgraded to a supergroup chat" with
// parameters.migrate_to_chat_id. Nothing was sent; the caller moves what
// it keeps of the chat (a team's room: TeamStore.MoveRoom) and sends
// again to To. Err is the transport's error, for errors.Is and the log.
type MigratedError struct {
	To  int64
	Err error
}

func (e *MigratedError) Error() string {
	s := "chat: the group was upgraded to supergroup " + strconv.FormatInt(e.To, 10)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *MigratedError) Unwrap() error { return e.Err }

// MigratedTo returns the chat a send's error says the group moved to, or
// 0 when err is no MigratedError.
func MigratedTo(err error) int64 {
	var me *MigratedError
	if errors.As(err, &me) {
		return me.To
	}
	return 0
}
