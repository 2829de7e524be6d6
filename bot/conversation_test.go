package bot_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// convo drives the core through the real Telegram transport, which talks
// HTTP to the fake Bot API on loopback: what a user sees is what the fake
// server received.
type convo struct {
	t    *testing.T
	ctx  context.Context
	fake *tgfake.Server
	db   *sqlite.DB
	core *bot.Core
	tr   *telegram.Transport

	mu  sync.Mutex
	now time.Time
}

// clock is the core's and the store's clock; advance moves it.
func (c *convo) clock() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *convo) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newChat(t *testing.T, cfg bot.Config) *convo {
	t.Helper()
	return newChatWith(t, func(c *bot.Config, _ *convo) { *c = cfg })
}

// newChatWith is newChat with the core's configuration made by config,
// which may use the store and the clock (to build a hub on them).
func newChatWith(t *testing.T, config func(*bot.Config, *convo)) *convo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fake := tgfake.New(t, "123:TOKEN")
	db := openStore(t)
	c := &convo{t: t, ctx: ctx, fake: fake, db: db, now: t0}
	var cfg bot.Config
	config(&cfg, c)
	cfg.Store = db
	wireOptional(&cfg, db)
	db.Now = c.clock
	cfg.Now = c.clock
	cfg.BotName = tgfake.BotUsername
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	core, err := bot.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := telegram.New(telegram.Config{
		Token:         fake.Token(),
		Endpoint:      fake.Endpoint(),
		Handler:       core,
		Store:         db,
		Allowed:       core.Allowed,
		Logger:        cfg.Logger,
		PollTimeout:   time.Second,
		Pacing:        telegram.Pacing{Chat: time.Millisecond, Group: time.Millisecond, Global: time.Microsecond, ChatBurst: 100},
		FloodInterval: time.Millisecond,
		FloodBurst:    1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("transport: %v", err)
		}
	})
	c.core, c.tr = core, tr
	return c
}

// settle waits until the transport has handled update id (the fake has
// been asked for the updates after it).
func (c *convo) settle(id int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	if err := c.fake.WaitFor(ctx, func() bool { return c.fake.Confirmed() > id }); err != nil {
		c.t.Fatalf("update %d not handled: %v", id, err)
	}
	// Confirmed means stored and handed to a worker; wait for it to be
	// handled and answered.
	for !c.tr.Idle() {
		if ctx.Err() != nil {
			c.t.Fatalf("update %d not answered", id)
		}
		time.Sleep(time.Millisecond)
	}
}

// send delivers one update made by fn and returns the chat's messages that
// are new or changed afterwards.
func (c *convo) send(chatID int64, fn func() int) []tgfake.Message {
	c.t.Helper()
	before := c.fake.Messages(chatID)
	c.settle(fn())
	after := c.fake.Messages(chatID)
	var out []tgfake.Message
	for i, m := range after {
		if i >= len(before) || m.Text != before[i].Text || len(m.Buttons) != len(before[i].Buttons) {
			out = append(out, m)
		}
	}
	return out
}

// say sends text from user in their private chat and returns the one reply.
func (c *convo) say(user int64, text string) tgfake.Message {
	c.t.Helper()
	out := c.send(user, func() int { return c.fake.SendText(user, user, text) })
	if len(out) != 1 {
		c.t.Fatalf("%q: want 1 reply, got %d: %+v", text, len(out), out)
	}
	return out[0]
}

func (c *convo) silent(chatID int64, what string, fn func() int) {
	c.t.Helper()
	if out := c.send(chatID, fn); len(out) != 0 {
		c.t.Fatalf("%s: want no reply, got %+v", what, out)
	}
}

func (c *convo) book(user int64) *ledger.Book {
	c.t.Helper()
	b, err := c.db.Book(c.ctx, user)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

func (c *convo) state(user int64, name string) ledger.State {
	c.t.Helper()
	r := c.book(user).Rental(name)
	if r == nil {
		return ""
	}
	return r.State()
}

func TestConversation_Telegram(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}, TZ: "Asia/Shanghai"})
	c.fake.SetUser(bob, "bob", "zh-CN")

	// English: log, stop, resume, storage, spend, undo.
	m := c.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, m.Text, "✓", "box1", "¥1.88/h", "per-second")
	if m.ParseMode != "HTML" {
		t.Errorf("parse mode %q", m.ParseMode)
	}
	if c.state(alice, "box1") != ledger.Running {
		t.Fatal("box1 not running")
	}
	c.advance(time.Hour)
	contains(t, c.say(alice, "/stop box1").Text, "stopped", "1h", "¥1.88")
	if c.state(alice, "box1") != ledger.Stopped {
		t.Fatal("box1 not stopped")
	}
	c.advance(time.Hour)
	contains(t, c.say(alice, "/resume box1").Text, "resumed")
	contains(t, c.say(alice, "/storage data1 200GB 0.0066/GB/day free=50GB rental=box1").Text, "data1")
	if b := c.book(alice); len(b.Volumes) != 1 || b.Volumes[0].RentalID != b.Rentals[0].ID {
		t.Fatalf("volume not attached: %+v", b.Volumes)
	}
	c.advance(time.Hour)
	contains(t, c.say(alice, "/spend today").Text, "compute", "storage", "by rental: box1")
	// An hour old: /undo asks first, and [Undo it] undoes it.
	q := c.undoAsk(alice, "/undo")
	contains(t, q.Text, "volume", "data1", "1h ago")
	if out := c.undoPress(alice, q, 0); len(out) != 1 {
		t.Fatalf("[Undo it]: %+v", out)
	} else {
		contains(t, out[0].Text, "↩ undone", "volume", "data1")
	}
	if n := len(c.book(alice).Volumes); n != 0 {
		t.Fatalf("%d volumes after undo", n)
	}
	contains(t, c.say(alice, "/release box1").Text, "released")
	if c.state(alice, "box1") != ledger.Released {
		t.Fatal("box1 not released")
	}

	// Chinese, from the client's language.
	contains(t, c.say(bob, "/rent 甲 autodl 3090 1.2元/小时").Text, "已开始计费")
	contains(t, c.say(bob, "/status").Text, "运行中", "甲")

	// Forwarded commands are not executed.
	contains(t, c.say(bob, "/help").Text, "/rent")
	out := c.send(bob, func() int { return c.fake.SendForwarded(bob, bob, "/release 甲") })
	if len(out) != 1 || !strings.Contains(out[0].Text, "转发") {
		t.Fatalf("forwarded: %+v", out)
	}
	if c.state(bob, "甲") != ledger.Running {
		t.Fatal("a forwarded /release released")
	}

	// Stickers: a hint in private; edited messages and channel posts: nothing.
	out = c.send(alice, func() int { return c.fake.SendSticker(alice, alice) })
	if len(out) != 1 || !strings.Contains(out[0].Text, "text only") {
		t.Fatalf("sticker: %+v", out)
	}
	c.silent(bob, "edited", func() int { return c.fake.SendEdited(bob, bob, 1, "/release 甲") })
	c.silent(-100, "channel post", func() int { return c.fake.SendChannelPost(-100, "/release 甲") })
	if c.state(bob, "甲") != ledger.Running {
		t.Fatal("an edit or a channel post released")
	}

	// 10,000 characters, emoji and right-to-left text: an answer, nothing written.
	contains(t, c.say(alice, "/rent "+strings.Repeat("é", 5000)).Text, "too long")
	contains(t, c.say(alice, "🙂 مرحبا שלום /status").Text, "didn't understand")
	contains(t, c.say(alice, "/stop \u202ebox1").Text, "✗")
	if b := c.book(alice); len(b.Rentals) != 1 || len(b.Volumes) != 0 {
		t.Fatalf("bad input wrote: %d rentals, %d volumes", len(b.Rentals), len(b.Volumes))
	}
}

func TestConversation_StrangersAndClaim(t *testing.T) {
	c := newChat(t, bot.Config{})
	code := c.core.ClaimCode()
	if code == "" {
		t.Fatal("no claim code")
	}
	contains(t, c.say(mallory, "/start notthecode").Text, "wrong")
	contains(t, c.say(mallory, "/status").Text, "/start CODE")
	c.silent(mallory, "second refusal", func() int { return c.fake.SendText(mallory, mallory, "/status") })
	c.silent(mallory, "third refusal", func() int { return c.fake.SendText(mallory, mallory, "/rent a autodl 4090 1") })
	// A stranger's API key is not run, and not left in the chat either.
	if d := c.fake.Deleted(mallory); len(d) != 0 {
		t.Fatalf("deleted before any /connect: %v", d)
	}
	c.silent(mallory, "a stranger's /connect", func() int {
		return c.fake.SendText(mallory, mallory, "/connect runpod rpa_STRANGERKEY0123456789")
	})
	if d := c.fake.Deleted(mallory); len(d) != 1 {
		t.Fatalf("deleted after a stranger's /connect: %v; want that message", d)
	}
	// The code claims nothing in a group, where others read it.
	c.send(-700, func() int { return c.fake.SendText(alice, -700, "/start "+code) })
	if !c.core.WaitingForClaim() {
		t.Fatal("the bot was claimed from a group")
	}
	contains(t, c.say(alice, "/start "+code).Text, "owner")
	contains(t, c.say(alice, "/rent box1 autodl 4090 1.88").Text, "✓")
	c.silent(mallory, "code reused", func() int { return c.fake.SendText(mallory, mallory, "/start "+code) })
	if _, err := c.db.User(c.ctx, mallory); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("mallory registered: %v", err)
	}
}

func TestConversation_Buttons(t *testing.T) {
	const group = -500
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	m := c.say(alice, "rented 2x4090 on vast at $0.70/h")
	if len(m.Buttons) != 1 || len(m.Buttons[0]) != 3 {
		t.Fatalf("proposal buttons: %+v", m.Buttons)
	}
	confirm := m.Buttons[0][0].Data

	// Altered data and a press by someone else change nothing.
	forged := confirm[:len(confirm)-1] + string("AB"[0]^confirm[len(confirm)-1]&1)
	if forged == confirm {
		forged = confirm[:len(confirm)-1] + "Z"
	}
	c.settle(c.fake.PressButton(alice, alice, m.ID, forged))
	c.settle(c.fake.PressButton(bob, alice, m.ID, confirm))
	if n := len(c.book(alice).Rentals) + len(c.book(bob).Rentals); n != 0 {
		t.Fatalf("%d rentals after rejected presses", n)
	}
	answers := c.fake.Answers()
	if len(answers) != 2 || !strings.Contains(answers[1].Text, "not yours") {
		t.Fatalf("answers: %+v", answers)
	}

	// Confirm: the card is edited in place and the rental exists.
	c.settle(c.fake.PressButton(alice, alice, m.ID, confirm))
	msgs := c.fake.Messages(alice)
	card := msgs[len(msgs)-1]
	if card.ID != m.ID || len(card.Buttons) != 0 || !strings.Contains(card.Text, "✓") {
		t.Fatalf("card after confirm: %+v", card)
	}
	b := c.book(alice)
	if len(b.Rentals) != 1 || b.Rentals[0].GPUCount != 2 || b.Rentals[0].Platform != "vast" {
		t.Fatalf("rentals: %+v", b.Rentals)
	}

	// In a group, a command that writes is not run (it is sent privately;
	// group_test.go has the rest); chatter is ignored.
	out := c.send(group, func() int { return c.fake.SendText(bob, group, "/rent gbox runpod 4090 0.4/h") })
	if len(out) != 1 || !strings.Contains(out[0].Text, "private chat") {
		t.Fatalf("group command: %+v", out)
	}
	if c.book(bob).Rental("gbox") != nil || c.book(alice).Rental("gbox") != nil {
		t.Fatal("a /rent sent in a group was recorded")
	}
	c.silent(group, "group chatter", func() int { return c.fake.SendText(alice, group, "anyone rented a 4090 on vast at $0.3/h?") })
	c.silent(group, "group sticker", func() int { return c.fake.SendSticker(alice, group) })
	contains(t, c.say(alice, "/export").Text, "ledger")
	if docs := c.fake.Messages(alice); docs[len(docs)-1].Document == nil {
		t.Fatal("export sent no document")
	}
}
