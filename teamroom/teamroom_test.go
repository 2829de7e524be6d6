package teamroom_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/teamroom"
)

const (
	alice = int64(101) // the team's first owner, English
	carol = int64(103) // its second owner, Chinese
	bob   = int64(102) // a member
	room  = int64(-4001)
	super = int64(-1000000004001)
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fakeSender records what is sent and fails the sends to the chats told.
type fakeSender struct {
	mu    sync.Mutex
	fail  map[int64]error
	calls []chat.Outgoing // every call, failed or not
	sent  []chat.Outgoing // the calls that went out
}

func (f *fakeSender) failOn(chatID int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = map[int64]error{}
	}
	f.fail[chatID] = err
}

func (f *fakeSender) Send(_ context.Context, m chat.Outgoing) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, m)
	if err := f.fail[m.ChatID]; err != nil {
		return 0, err
	}
	f.sent = append(f.sent, m)
	return 1000 + len(f.sent), nil
}

func (f *fakeSender) AnswerCallback(context.Context, string, string) error { return nil }

// to returns what went out to chatID.
func (f *fakeSender) to(chatID int64) []chat.Outgoing {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []chat.Outgoing
	for _, m := range f.sent {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out
}

func (f *fakeSender) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// env is a real SQLite ledger with team lab: alice and carol its owners,
// bob a member, its room bound to room.
type env struct {
	t    *testing.T
	ctx  context.Context
	db   *sqlite.DB
	team ledger.Team
	next *fakeSender
	snd  chat.Sender
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for id, lang := range map[int64]string{alice: "en", bob: "en", carol: "zh"} {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: id, Lang: lang, TZ: "UTC", Settings: ledger.DefaultSettings(), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	at := ledger.Action{UserID: alice, By: alice, At: t0}
	tm, err := db.CreateTeam(ctx, at, "lab", "alice")
	if err != nil {
		t.Fatal(err)
	}
	at.UserID = tm.Ledger()
	for _, p := range []struct {
		id   int64
		name string
	}{{carol, "carol"}, {bob, "bob"}} {
		code, _, err := db.CreateInvite(ctx, at, tm.ID, p.id, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Join(ctx, ledger.Action{UserID: p.id, By: p.id, At: t0}, code, p.name, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetRole(ctx, at, tm.ID, carol, ledger.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if tm, err = db.BindRoom(ctx, at, tm.ID, room, "Lab"); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, db: db, team: tm, next: &fakeSender{}}
	e.snd = e.wrap()
	return e
}

// wrap is a new Sender over the same store and fake (a restart, or the
// other loop).
func (e *env) wrap() chat.Sender {
	return teamroom.Wrap(e.next, teamroom.Config{Teams: e.db, Store: e.db,
		ChatID: func(id int64) int64 { return id }, Now: func() time.Time { return t0 }, Logger: slog.New(slog.DiscardHandler)})
}

// room is the team's room as stored now.
func (e *env) room() int64 {
	e.t.Helper()
	tm, err := e.db.Team(e.ctx, e.team.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return tm.Room
}

// told counts the room-gone notices each of alice and carol got.
func (e *env) told() (a, c int) {
	for _, m := range e.next.to(alice) {
		if strings.Contains(m.Text, "I was removed from team lab's group") {
			a++
		}
	}
	for _, m := range e.next.to(carol) {
		if strings.Contains(m.Text, "我已被移出团队 lab 的群组") {
			c++
		}
	}
	return a, c
}

// TestSender_Migrated: a send to a room Telegram upgraded to a
// supergroup moves the team's room and goes to the new ID, once; the
// next send goes to the old ID only if its caller still asks for it.
func TestSender_Migrated(t *testing.T) {
	e := newEnv(t)
	e.next.failOn(room, &chat.MigratedError{To: super, Err: errors.New("400 upgraded")})
	id, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "box3 idle"})
	if err != nil || id == 0 {
		t.Fatalf("Send = %d, %v; want it sent to the supergroup", id, err)
	}
	if got := e.next.to(super); len(got) != 1 || got[0].Text != "box3 idle" {
		t.Fatalf("the supergroup got %+v", got)
	}
	if r := e.room(); r != super {
		t.Fatalf("room = %d, want %d", r, super)
	}
	if n := e.next.callCount(); n != 2 {
		t.Errorf("%d sends, want 2 (the failed one and the resend)", n)
	}
	// An edit follows the room the same way (its ID kept).
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, EditMessageID: 7, Text: "box3 kept"}); err != nil {
		t.Fatal(err)
	}
	if got := e.next.to(super); len(got) != 2 || got[1].EditMessageID != 7 {
		t.Fatalf("the edit went %+v", got)
	}
}

// TestSender_MigratedToSameID: an answer that names the chat itself as
// the one migrated to is returned as it is, after one try: no loop, and
// the room stays.
func TestSender_MigratedToSameID(t *testing.T) {
	e := newEnv(t)
	bad := &chat.MigratedError{To: room, Err: errors.New("400 upgraded")}
	e.next.failOn(room, bad)
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "x"}); err != bad {
		t.Fatalf("err = %v, want the MigratedError itself", err)
	}
	if n := e.next.callCount(); n != 1 {
		t.Errorf("%d sends, want 1", n)
	}
	if r := e.room(); r != room {
		t.Errorf("room = %d, want it unchanged", r)
	}
}

// TestSender_MigratedTwice: a new ID that answers with a migration too is
// tried once, and its error returned: the Sender never chases a chain.
func TestSender_MigratedTwice(t *testing.T) {
	e := newEnv(t)
	e.next.failOn(room, &chat.MigratedError{To: super})
	e.next.failOn(super, &chat.MigratedError{To: room})
	_, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "x"})
	if chat.MigratedTo(err) != room {
		t.Fatalf("err = %v, want the second migration's error", err)
	}
	if n := e.next.callCount(); n != 2 {
		t.Errorf("%d sends, want 2", n)
	}
}

// TestSender_RoomGone: a send to a room that removed the bot unbinds the
// room, tells each owner once in their language, and sends the message
// to the first owner privately. A second loop (or a restart) meeting the
// same room again, bound anew and lost again, does not tell them twice.
func TestSender_RoomGone(t *testing.T) {
	e := newEnv(t)
	e.next.failOn(room, fmt.Errorf("403 kicked: %w", chat.ErrChatGone))
	id, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "box3 idle", Silent: true})
	if err != nil || id == 0 {
		t.Fatalf("Send = %d, %v; want it sent to alice", id, err)
	}
	if r := e.room(); r != 0 {
		t.Fatalf("room = %d, want unbound", r)
	}
	got := e.next.to(alice)
	if len(got) != 2 || !strings.Contains(got[0].Text, "I was removed from team lab's group") || got[1].Text != "box3 idle" || !got[1].Silent {
		t.Fatalf("alice got %+v, want the notice then the message", got)
	}
	if got := e.next.to(carol); len(got) != 1 || !strings.Contains(got[0].Text, "我已被移出团队 lab 的群组") {
		t.Fatalf("carol got %+v, want the notice in Chinese", got)
	}
	if got := e.next.to(bob); len(got) != 0 {
		t.Errorf("bob (a member) got %+v", got)
	}
	// An admin binds the same group again; the bot is still out of it.
	if _, err := e.db.BindRoom(e.ctx, ledger.Action{UserID: e.team.Ledger(), By: alice, At: t0}, e.team.ID, room, "Lab"); err != nil {
		t.Fatal(err)
	}
	other := e.wrap()
	if _, err := other.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "second"}); err != nil {
		t.Fatal(err)
	}
	if a, c := e.told(); a != 1 || c != 1 {
		t.Errorf("alice told %d times, carol %d; want once each", a, c)
	}
	if got := e.next.to(alice); got[len(got)-1].Text != "second" {
		t.Errorf("alice's last = %+v, want the second message", got[len(got)-1])
	}
	if r := e.room(); r != 0 {
		t.Errorf("room = %d, want unbound again", r)
	}
}

// TestSender_EditToLostRoom: an edit of a message in a room that removed
// the bot unbinds the room and tells the owners, but is not turned into a
// new message anywhere: the message it edits lives in the lost group.
func TestSender_EditToLostRoom(t *testing.T) {
	e := newEnv(t)
	e.next.failOn(room, fmt.Errorf("403 kicked: %w", chat.ErrChatGone))
	_, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, EditMessageID: 9, Text: "box3 released"})
	if !errors.Is(err, chat.ErrChatGone) {
		t.Fatalf("err = %v, want ErrChatGone", err)
	}
	if r := e.room(); r != 0 {
		t.Errorf("room = %d, want unbound", r)
	}
	for _, m := range e.next.sent {
		if m.EditMessageID != 0 || strings.Contains(m.Text, "box3 released") {
			t.Errorf("the edit went out as %+v", m)
		}
	}
	if a, c := e.told(); a != 1 || c != 1 {
		t.Errorf("alice told %d times, carol %d; want once each", a, c)
	}
}

// TestSender_NotARoom: a group that is no team's room, and failures that
// are neither a migration nor a lost group, are returned unchanged, and
// nothing else is sent or changed.
func TestSender_NotARoom(t *testing.T) {
	e := newEnv(t)
	const stranger = int64(-5005)
	gone := fmt.Errorf("403 kicked: %w", chat.ErrChatGone)
	e.next.failOn(stranger, gone)
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: stranger, Text: "x"}); err != gone {
		t.Fatalf("err = %v, want the transport's error itself", err)
	}
	limited := errors.New("429 too many requests")
	e.next.failOn(room, limited)
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "x"}); err != limited {
		t.Fatalf("err = %v, want the transport's error itself", err)
	}
	private := fmt.Errorf("403: %w", chat.ErrNoPrivateChat)
	e.next.failOn(alice, private)
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: alice, Text: "x"}); err != private {
		t.Fatalf("err = %v, want the transport's error itself", err)
	}
	if n := e.next.callCount(); n != 3 {
		t.Errorf("%d sends, want 3 (one each, nothing else)", n)
	}
	if r := e.room(); r != room {
		t.Errorf("room = %d, want it kept", r)
	}
	for _, o := range []int64{alice, carol} {
		if has, err := e.db.HasNotice(e.ctx, teamroom.GoneKey(e.team.ID, room, o)); err != nil || has {
			t.Errorf("owner %d's room-gone notice recorded: %v %v", o, has, err)
		}
	}
}

// TestSender_NoticeFailedIsRetried: an owner's notice that could not be
// sent is not recorded as told, so the next loss of the room tells them.
func TestSender_NoticeFailedIsRetried(t *testing.T) {
	e := newEnv(t)
	e.next.failOn(room, chat.ErrChatGone)
	e.next.failOn(carol, chat.ErrNoPrivateChat)
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "one"}); err != nil {
		t.Fatal(err)
	}
	if has, err := e.db.HasNotice(e.ctx, teamroom.GoneKey(e.team.ID, room, carol)); err != nil || has {
		t.Fatalf("carol's notice recorded though it failed: %v %v", has, err)
	}
	e.next.failOn(carol, nil)
	if _, err := e.db.BindRoom(e.ctx, ledger.Action{UserID: e.team.Ledger(), By: alice, At: t0}, e.team.ID, room, "Lab"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.snd.Send(e.ctx, chat.Outgoing{ChatID: room, Text: "two"}); err != nil {
		t.Fatal(err)
	}
	if a, c := e.told(); a != 1 || c != 1 {
		t.Errorf("alice told %d times, carol %d; want once each", a, c)
	}
}

// TestGoneKey: the once-only key is the one the scheduler stored before
// the Sender had it, so an upgraded server does not tell an owner twice.
func TestGoneKey(t *testing.T) {
	if got, want := teamroom.GoneKey(3, -4001, 101), "team_room_gone:3:-4001:101"; got != want {
		t.Errorf("GoneKey = %q, want %q", got, want)
	}
}

// TestWrap_NothingToFollow: without teams, or without a sender, Wrap
// gives the sender back as it is; a following sender is not wrapped twice.
func TestWrap_NothingToFollow(t *testing.T) {
	f := &fakeSender{}
	if got := teamroom.Wrap(f, teamroom.Config{}); got != chat.Sender(f) {
		t.Errorf("Wrap without a store = %T, want the sender itself", got)
	}
	e := newEnv(t)
	if got := teamroom.Wrap(nil, teamroom.Config{Teams: e.db, Store: e.db}); got != nil {
		t.Errorf("Wrap(nil) = %v, want nil", got)
	}
	if got := teamroom.Wrap(e.snd, teamroom.Config{Teams: e.db, Store: e.db}); got != e.snd {
		t.Errorf("Wrap of a Sender = %p, want the same %p", got, e.snd)
	}
}
