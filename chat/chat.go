// Package chat is the vocabulary the conversation core, the scheduler and
// the transports (Telegram, the terminal) share: incoming updates, outgoing
// messages with their buttons and files, the Sender and Handler interfaces,
// the languages, message catalogs, and the HTML helpers every reply goes
// through (escaping, stripping, splitting).
//
// It imports only the standard library, so a transport or the scheduler
// can speak to people without linking the command parser: the core (bot)
// turns updates into ledger calls, a transport turns what it receives into
// an Update, calls Handler.Handle, and delivers the Outgoing messages
// through its Sender.
package chat

import (
	"context"
	"errors"
	"time"
)

// UpdateKind says what an incoming update carries.
type UpdateKind string

// Update kinds.
const (
	KindText     UpdateKind = "text"     // a text message (commands and plain text)
	KindCallback UpdateKind = "callback" // a button press
	KindOther    UpdateKind = "other"    // stickers, photos, edits, channel posts: ignored or answered briefly
)

// ChatType is the kind of chat an update came from.
type ChatType string

// Chat types, as Telegram names them.
const (
	ChatPrivate    ChatType = "private"
	ChatGroup      ChatType = "group"
	ChatSupergroup ChatType = "supergroup"
	ChatChannel    ChatType = "channel"
)

// Update is one incoming event from a person.
type Update struct {
	// Key identifies the update for exactly-once processing: it is passed
	// to the ledger as Action.Key, so a redelivered update changes nothing.
	// Telegram uses "tg:update:<update_id>"; the console "" (no dedupe).
	Key      string
	Kind     UpdateKind
	UserID   int64 // the sender; every check is against this ID
	ChatID   int64 // where replies go (a group's ID for group chats)
	ChatType ChatType
	Username string // for display only, never for access decisions
	LangCode string // the client's language hint ("zh-hans"), for new users
	Text     string // KindText: the message text (a command as a caption too); KindOther: an edit's text or a caption, read only to find a secret

	// CallbackID and CallbackData are set for KindCallback. MessageID is
	// the message whose button was pressed (for editing it in place), or,
	// for KindText, the user's message itself (so that one holding a
	// secret can be deleted, see Deleter); 0 where the transport has no
	// message IDs (the console).
	CallbackID   string
	CallbackData string
	MessageID    int

	// Forwarded is true when the message was forwarded from someone else.
	Forwarded bool
	// Edited is true for an edited message (ignored: the original was
	// already handled).
	Edited bool

	// SentAt is when the sender sent the message (Telegram's message
	// date), zero when unknown (button presses, the console). The core
	// uses it as the command's time when it is earlier than its clock, so
	// an update handled late (a backlog, a full disk, a restart) is
	// recorded at the moment the user meant.
	SentAt time.Time `json:",omitzero"`
	// Redelivered is true when an earlier delivery of this update may have
	// been applied without its answer being kept (a crash, a failed
	// attempt). The core then answers a change it finds already applied
	// from what was stored, instead of staying silent: the transport
	// redelivers only updates whose answer it has not kept.
	Redelivered bool `json:",omitempty"`

	// ChatTitle is a group's or supergroup's title, for display only (a
	// team's room is named by it); "" for private chats.
	ChatTitle string `json:",omitempty"`
	// MigrateTo and MigrateFrom are set on Telegram's service messages
	// about a group upgraded to a supergroup (KindOther): in the old group
	// MigrateTo is the supergroup's new chat ID; in the new supergroup
	// MigrateFrom is the old group's. The IDs are Telegram's, not the
	// sender's (who may be anyone), so the core acts on them before any
	// access check (a team's room follows the group: TeamStore.MoveRoom).
	MigrateTo   int64 `json:",omitempty"`
	MigrateFrom int64 `json:",omitempty"`
	// BotLeft is set (KindOther) when the bot was removed or kicked from
	// the group or supergroup ChatID (Telegram's my_chat_member with the
	// bot's new status "left" or "kicked"); UserID is who removed it.
	BotLeft bool `json:",omitempty"`
}

// RoomEvent reports whether u is Telegram's news about the group itself
// (migrated, or the bot removed) rather than a person's message.
func (u Update) RoomEvent() bool {
	return u.MigrateTo != 0 || u.MigrateFrom != 0 || u.BotLeft
}

// Button is an inline button: Text shown, Data returned in a callback
// (at most 64 bytes, per Telegram).
type Button struct {
	Text string
	Data string
	// WebApp, when set, makes the button open this https URL as a
	// Telegram Mini App (the dashboard) instead of returning Data.
	// Telegram allows such buttons in private chats only; the core adds
	// them only there, and a transport that cannot open a Mini App (the
	// console) leaves the button out.
	WebApp string
}

// File is a document or picture sent to the user.
type File struct {
	Name string
	Data []byte
}

// Outgoing is one message to a chat. Text is HTML (Telegram's subset:
// <b>, <i>, <code>, <pre>); the core escapes user-supplied text. A
// transport splits texts longer than it can send.
type Outgoing struct {
	ChatID  int64
	Text    string
	Buttons [][]Button // rows of inline buttons; nil for none
	// EditMessageID, when non-zero, edits that earlier message in place
	// instead of sending a new one (cards that change).
	EditMessageID int
	Document      *File // sent as a document with Text as caption
	Photo         *File // sent as a photo with Text as caption
	// Silent sends without a notification sound (quiet hours).
	Silent bool
	// Refresh marks an edit that only brings a card's running figures up
	// to date (an idle card's minutes and money at each check). A
	// transport that cannot edit in place (the terminal) leaves it out:
	// it would print the whole card again at every check.
	Refresh bool
}

// Sender delivers messages. Send returns the message ID of what was sent
// (or edited), so cards can be edited later. Implementations are safe for
// concurrent use.
type Sender interface {
	Send(ctx context.Context, m Outgoing) (messageID int, err error)
	// AnswerCallback acknowledges a button press (stopping the client's
	// spinner), optionally with a short toast text.
	AnswerCallback(ctx context.Context, callbackID, text string) error
}

// Deleter is a Sender that can delete a message from a chat: the core
// deletes a message that holds a secret (a platform API key sent with
// /connect) as soon as it has read it. The terminal console has nothing
// to delete and does not implement it.
type Deleter interface {
	DeleteMessage(ctx context.Context, chatID int64, messageID int) error
}

// Handler processes updates. Handle returns an error only for failures the
// transport should retry later (e.g. the database is unavailable); bad
// input is answered, not returned.
type Handler interface {
	Handle(ctx context.Context, u Update, s Sender) error
}

// ErrNoPrivateChat is returned (wrapped) by a Sender when the user has not
// opened a private chat with the bot, or blocked it, so nothing can be sent
// there (Telegram answers 403 "bot can't initiate conversation with a
// user").
var ErrNoPrivateChat = errors.New("chat: the user has not opened a private chat with the bot")
