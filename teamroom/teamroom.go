// Package teamroom follows a team's room when Telegram moves or drops it:
// a chat.Sender that both loops which notify a team (the scheduler's
// cards, the platform sync's notices and questions) send through, so a
// room upgraded to a supergroup, or a group that removed the bot, is
// handled in one place and the same way whichever loop meets it first.
//
// It is a package of its own, not part of chat or of either loop: it
// needs the ledger's TeamStore (to move or unbind the room) and its
// notices (to tell each owner once), which the chat vocabulary must not
// import (chat imports only the standard library); and the scheduler and
// the sync are actors that may not link each other. So it sits between
// them: it imports the chat vocabulary and the ledger only, and the
// scheduler and connsync import it. The core (bot) follows a room from
// the updates that say it moved (bot/core_room.go), not from failed sends.
package teamroom

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Store is what the Sender needs beside the teams: the once-only notices
// (ledger.NotifyStore's MarkNotice and UnmarkNotice) and the owners'
// languages. ledger/sqlite's DB implements it, as do the scheduler's and
// the sync's stores.
type Store interface {
	MarkNotice(ctx context.Context, userID int64, key string, at time.Time) (bool, error)
	UnmarkNotice(ctx context.Context, key string) error
	User(ctx context.Context, id int64) (ledger.User, error)
}

// Config configures a Sender. Teams and Store are required (Wrap returns
// the sender unwrapped without them).
type Config struct {
	Teams ledger.TeamStore
	Store Store
	// ChatID maps a user to their private chat. Default: the user ID.
	ChatID func(userID int64) int64
	Now    func() time.Time // default time.Now
	Logger *slog.Logger     // default slog.Default()
}

// Sender is a chat.Sender that follows a team's room. A send (or an
// edit: Outgoing.EditMessageID) to a group that fails because Telegram
// upgraded the group to a supergroup (*chat.MigratedError) moves the
// team's room to the new ID (TeamStore.MoveRoom) and is sent there once
// more. One that fails because the group no longer takes the bot
// (chat.ErrChatGone), when the group is a team's room, unbinds the room,
// tells each of the team's owners once in private (a notice keyed by
// team, room and owner, so neither loop nor a restart tells twice), and
// sends a new message to the first owner's private chat instead; an
// edit of a message in the lost group is not sent anywhere else (its
// message lives only there), and its error is returned. Every other
// failure, and any failure of a private chat, is returned as it was.
//
// A Sender is safe for concurrent use when the wrapped sender and the
// stores are: the scheduler and the sync may meet the same lost room at
// once; the store's UnbindRoom lets one of them win, and the other's
// error is returned (its next send goes where the team's notices go now).
type Sender struct {
	next  chat.Sender
	teams ledger.TeamStore
	store Store
	chat  func(int64) int64
	now   func() time.Time
	log   *slog.Logger
}

// Wrap returns next wrapped in a Sender with cfg. It returns next itself
// when there is nothing to follow or nothing to send through: next nil,
// cfg.Teams or cfg.Store nil (a store without teams has no rooms), or
// next already a *Sender (so a loop given a following sender does not
// follow twice).
func Wrap(next chat.Sender, cfg Config) chat.Sender {
	if next == nil || cfg.Teams == nil || cfg.Store == nil {
		return next
	}
	if _, ok := next.(*Sender); ok {
		return next
	}
	if cfg.ChatID == nil {
		cfg.ChatID = func(id int64) int64 { return id }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sender{next: next, teams: cfg.Teams, store: cfg.Store, chat: cfg.ChatID, now: cfg.Now, log: cfg.Logger}
}

// AnswerCallback answers a button press through the wrapped sender: a
// press comes from a chat that is there.
func (s *Sender) AnswerCallback(ctx context.Context, callbackID, text string) error {
	return s.next.AnswerCallback(ctx, callbackID, text)
}

// Send sends or edits m through the wrapped sender, following the room
// as the type's comment says.
func (s *Sender) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	id, err := s.next.Send(ctx, m)
	if err == nil || m.ChatID >= 0 {
		// Only a group (a negative chat ID) can be a team's room.
		return id, err
	}
	return s.failed(ctx, m, err)
}

// failed follows a send to the group m.ChatID that failed with err.
func (s *Sender) failed(ctx context.Context, m chat.Outgoing, err error) (int, error) {
	if to := chat.MigratedTo(err); to != 0 && to != m.ChatID {
		if _, _, merr := s.teams.MoveRoom(ctx, m.ChatID, to); merr != nil {
			s.log.Error("teamroom: move a migrated room", "from", m.ChatID, "to", to, "err", merr)
		}
		// Sent again once, to the wrapped sender: a supergroup is never
		// migrated again, and a second MigratedError is returned.
		m.ChatID = to
		return s.next.Send(ctx, m)
	}
	if !errors.Is(err, chat.ErrChatGone) {
		return 0, err
	}
	t, ok, uerr := s.teams.UnbindRoom(ctx, m.ChatID)
	if uerr != nil {
		s.log.Error("teamroom: unbind a room the bot left", "chat", m.ChatID, "err", uerr)
		return 0, err
	}
	if !ok {
		return 0, err
	}
	s.log.Warn("teamroom: the team's room no longer takes the bot: unbound", "team", t.ID, "chat", m.ChatID)
	ms, merr := s.teams.Members(ctx, t.ID)
	if merr != nil {
		s.log.Error("teamroom: read the members of a team whose room is gone", "team", t.ID, "err", merr)
		return 0, err
	}
	s.tellGone(ctx, t, ms, m.ChatID)
	owner := firstOwner(ms)
	if m.EditMessageID != 0 || owner == 0 {
		return 0, err
	}
	m.ChatID = s.chat(owner)
	return s.next.Send(ctx, m)
}

// firstOwner is the first owner of ms (Members lists owners first), 0
// when there is none.
func firstOwner(ms []ledger.Member) int64 {
	for _, m := range ms {
		if m.Role == ledger.RoleOwner {
			return m.UserID
		}
	}
	return 0
}

// GoneKey is the once-only notice key (MarkNotice, on the team's ledger)
// of telling owner that room, team's room, is gone. It is the key the
// scheduler used before this package, so an upgraded server does not
// tell an owner twice.
func GoneKey(team, room, owner int64) string {
	return "team_room_gone:" + strconv.FormatInt(team, 10) + ":" + strconv.FormatInt(room, 10) + ":" + strconv.FormatInt(owner, 10)
}

// tellGone tells each owner of team t (members ms), once per lost room,
// that its cards come to them now. A notice that cannot be sent is
// unmarked, so a later loss tries again.
func (s *Sender) tellGone(ctx context.Context, t ledger.Team, ms []ledger.Member, room int64) {
	now := s.now()
	for _, o := range ms {
		if o.Role != ledger.RoleOwner {
			continue
		}
		key := GoneKey(t.ID, room, o.UserID)
		fresh, err := s.store.MarkNotice(ctx, t.Ledger(), key, now)
		if err != nil || !fresh {
			continue
		}
		lg := chat.LangEN
		if u, err := s.store.User(ctx, o.UserID); err == nil {
			lg = chat.NormLang(u.Lang)
		}
		if _, err := s.next.Send(ctx, chat.Outgoing{ChatID: s.chat(o.UserID), Text: messages.Render(lg, "room_gone", t.Name)}); err != nil {
			s.log.Warn("teamroom: tell an owner the room is gone", "team", t.ID, "err", err)
			if err := s.store.UnmarkNotice(ctx, key); err != nil {
				s.log.Error("teamroom: unmark the room-gone notice", "team", t.ID, "err", err)
			}
		}
	}
}

// messages are the package's texts, in English and Chinese (HTML;
// arguments escaped by chat.Catalog.Render).
var messages = chat.Catalog{
	"room_gone": {"I was removed from team %[1]s's group: its cards now come here. Send /team bind in a group to choose a new room.", "我已被移出团队 %[1]s 的群组：它的卡片现在发到这里。在群组中发送 /team bind 选择新的群组。"},
}
