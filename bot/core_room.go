package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// roomTexts are what the core says of a team's room that Telegram took
// away: the bot was removed from the group.
var roomTexts = chat.Catalog{
	"room_gone_first": {
		"I was removed from team <b>%[1]s</b>'s group%[2]s. Its cards now come to you privately; send <code>/team bind</code> in a group to choose a new room.",
		"我已被移出团队 <b>%[1]s</b> 的群%[2]s。它的卡片现在私聊发给你；在群里发送 <code>/team bind</code> 可以选择新的群。"},
	"room_gone_other": {
		"I was removed from team <b>%[1]s</b>'s group%[2]s. Its cards now go privately to %[3]s; send <code>/team bind</code> in a group to choose a new room.",
		"我已被移出团队 <b>%[1]s</b> 的群%[2]s。它的卡片现在私聊发给 %[3]s；在群里发送 <code>/team bind</code> 可以选择新的群。"},
}

// roomEvent handles Telegram's news about a group (chat.Update.RoomEvent).
// Core.Handle calls it before any access check: whoever caused it (a
// group's admin need not use the bot) and whatever they may do, the chat
// IDs are Telegram's. A group upgraded to a supergroup takes its team's
// room along (TeamStore.MoveRoom, both from the old group's service
// message and the new supergroup's); a group the bot was removed or kicked
// from is no room any more (TeamStore.UnbindRoom) and the team's owners
// are told privately. Nothing is said in the group.
//
// Each is idempotent and the update's key is recorded as any other's, so
// a redelivery changes nothing and tells nobody twice: it finds the room
// moved or unbound already. What is read comes before the one write, so
// a transient failure retries the whole event with the room as it was; a
// crash between the write and the owners' notice loses the notice (the
// cards themselves go to the first owner privately from then on).
func (c *Core) roomEvent(ctx context.Context, u chat.Update, s chat.Sender) error {
	r := &req{c: c, ctx: ctx, u: u, s: s, now: commandTime(c.now(), u), lang: chat.NormLang(u.LangCode), loc: time.UTC}
	if c.teams != nil {
		if err := r.followRoom(); err != nil {
			if ledger.Transient(err) {
				c.log.Warn("bot: transient failure, the room event will be retried", "key", u.Key, "chat", u.ChatID, "err", err)
				return fmt.Errorf("bot: room event %s: %w", u.Key, err)
			}
			c.log.Error("bot: room event", "key", u.Key, "chat", u.ChatID, "err", err)
		}
	}
	err := r.mark()
	switch {
	case err == nil, ledger.ErrorCode(err) == ledger.EDUPLICATE:
		return nil
	case ledger.Transient(err):
		return fmt.Errorf("bot: room event %s: %w", u.Key, err)
	}
	c.log.Error("bot: record handled room event", "key", u.Key, "err", err)
	return nil
}

// followRoom applies a room event to the team whose room the chat is.
func (r *req) followRoom() error {
	ts, u, log := r.c.teams, r.u, r.c.log
	if u.MigrateTo != 0 || u.MigrateFrom != 0 {
		from, to := u.ChatID, u.MigrateTo
		if u.MigrateFrom != 0 {
			from, to = u.MigrateFrom, u.ChatID
		}
		if from >= 0 || to >= 0 || from == to {
			return nil // not a group's move: nothing Telegram sends
		}
		t, moved, err := ts.MoveRoom(r.ctx, from, to)
		if err != nil || !moved {
			return err
		}
		log.Info("bot: a team's room was upgraded to a supergroup; the room follows it", "team", t.ID, "from", from, "to", to, "room", t.Room)
		return nil
	}
	if !u.BotLeft || u.ChatID >= 0 {
		return nil
	}
	t, err := ts.TeamByRoom(r.ctx, u.ChatID)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return nil // no team's room, or unbound already
	}
	if err != nil {
		return err
	}
	members, err := ts.Members(r.ctx, t.ID)
	if err != nil {
		return err
	}
	t, unbound, err := ts.UnbindRoom(r.ctx, u.ChatID)
	if err != nil || !unbound {
		return err
	}
	log.Info("bot: removed from a team's room; its cards go to its first owner privately", "team", t.ID, "chat", u.ChatID)
	r.tellRoomGone(t, members)
	return nil
}

// tellRoomGone tells each owner of t privately that its room is gone.
// A failed send is logged: the room is unbound either way.
func (r *req) tellRoomGone(t ledger.Team, members []ledger.Member) {
	var owners []ledger.Member
	for _, m := range members {
		if m.Role == ledger.RoleOwner {
			owners = append(owners, m)
		}
	}
	if len(owners) == 0 {
		return
	}
	first := owners[0] // Members lists owners first, in joining order: the cards go to them
	title := t.RoomTitle
	if title == "" {
		title = r.u.ChatTitle
	}
	for _, m := range owners {
		lang := chat.LangEN
		if usr, err := r.c.store.User(r.ctx, m.UserID); err == nil {
			lang = chat.NormLang(usr.Lang)
		}
		where := ""
		if title != "" {
			where = " «" + title + "»"
		}
		text := roomTexts.Render(lang, "room_gone_first", t.Name, where)
		if m.UserID != first.UserID {
			text = roomTexts.Render(lang, "room_gone_other", t.Name, where, first.Name())
		}
		_, err := r.s.Send(r.ctx, chat.Outgoing{ChatID: m.UserID, Text: text})
		switch {
		case err == nil:
		case errors.Is(err, chat.ErrNoPrivateChat):
			r.c.log.Info("bot: a team's owner has no private chat with the bot to be told its room is gone", "team", t.ID, "user", m.UserID)
		default:
			r.c.log.Warn("bot: tell a team's owner its room is gone", "team", t.ID, "user", m.UserID, "err", err)
		}
	}
}
