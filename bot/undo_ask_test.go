package bot_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// undoAsked sends /undo (or its Chinese word) and returns the question it
// must be answered with: a message with two buttons, [Undo it] first.
func (e *env) undoAsked(user int64, text string) chat.Outgoing {
	e.t.Helper()
	out := e.handle(e.update(user, text))
	if len(out) != 1 {
		e.t.Fatalf("%s: want 1 reply, got %+v", text, out)
	}
	m := out[0].Out
	if len(m.Buttons) != 1 || len(m.Buttons[0]) != 2 {
		e.t.Fatalf("%s: want a question with [Undo it] [Keep it], got %q with buttons %+v", text, m.Text, m.Buttons)
	}
	return m
}

// pressUndo presses button i of the question m (sent as message msgID)
// and returns the text the question was edited to, and the toast.
func (e *env) pressUndo(user int64, m chat.Outgoing, i, msgID int) (edit, toast string) {
	e.t.Helper()
	for _, s := range press(e, user, user, msgID, m.Buttons[0][i].Data) {
		if s.IsAnswer {
			toast = s.Out.Text
			continue
		}
		if s.Out.EditMessageID != msgID || s.Out.Buttons != nil {
			e.t.Fatalf("press %d on %q: want the question edited without buttons, got %+v", i, m.Text, s.Out)
		}
		edit = s.Out.Text
	}
	return edit, toast
}

// undoConfirmed sends /undo (or its Chinese word), which must ask, and
// presses [Undo it]: the text the question became.
func (e *env) undoConfirmed(user int64, text string) string {
	e.t.Helper()
	edit, _ := e.pressUndo(user, e.undoAsked(user, text), 0, 99)
	return edit
}

func (e *env) state(user int64, name string) ledger.State {
	e.t.Helper()
	x := e.book(user).Rental(name)
	if x == nil {
		return ""
	}
	return x.State()
}

// TestCore_UndoAfterRefusal is the reproduction: a stop, ten minutes, a
// refused command, then /undo. The stop is not undone at once: the reply
// names it and asks; [Undo it] undoes exactly it, and a second press of
// the same button undoes nothing more.
func TestCore_UndoAfterRefusal(t *testing.T) {
	for _, c := range []struct {
		lang, refused, undo string
		ask, done, now      []string
	}{
		{"en", "/stop t1", "/undo", []string{"stop", "t1", "10:05", "10 min ago", "refused"}, []string{"↩ undone", "stop", "t1", "10:05"}, []string{"t1 is running", "¥1.88/h"}},
		{"en", "/rnet t2 autodl 4090 1.88/h", "/undo", []string{"stop", "t1", "10:05", "refused"}, []string{"↩ undone", "stop"}, []string{"t1 is running"}},
		{"en", "/price t1 abc", "/undo", []string{"stop", "t1", "refused"}, []string{"↩ undone", "stop"}, []string{"t1 is running"}},
		{"zh", "/stop t1", "/撤销", []string{"关机", "t1", "10:05", "10分钟前", "拒绝"}, []string{"↩ 已撤销", "关机", "t1"}, []string{"t1 运行中", "¥1.88/小时"}},
	} {
		t.Run(c.lang+" "+c.refused, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			e.say(alice, "/settings lang="+c.lang)
			e.say(alice, "/rent t1 autodl 4090 1.88/h")
			e.now = t0.Add(5 * time.Minute)
			e.say(alice, "/stop t1")
			e.now = t0.Add(15 * time.Minute)
			if got := e.say(alice, c.refused); strings.Contains(got, "✓") {
				t.Fatalf("%s was not refused: %q", c.refused, got)
			}
			e.now = e.now.Add(10 * time.Second)
			q := e.undoAsked(alice, c.undo)
			contains(t, q.Text, c.ask...)
			if st := e.state(alice, "t1"); st != ledger.Stopped {
				t.Fatalf("after /undo that asks, t1 is %s: the stop was undone without asking", st)
			}
			edit, _ := e.pressUndo(alice, q, 0, 41)
			contains(t, edit, c.done...)
			contains(t, edit, c.now...)
			if st := e.state(alice, "t1"); st != ledger.Running {
				t.Fatalf("after [Undo it], t1 is %s", st)
			}
			// The same button again: the stop is undone already, and
			// nothing else (the rent beneath it) goes.
			edit, toast := e.pressUndo(alice, q, 0, 41)
			if st := e.state(alice, "t1"); st != ledger.Running {
				t.Fatalf("a second press changed t1: %s", st)
			}
			if !strings.Contains(edit+toast, "stop t1 is undone already") && !strings.Contains(edit+toast, "关机 t1已经撤销过了") {
				t.Fatalf("a second press said %q / %q, want that the stop is undone already", edit, toast)
			}
		})
	}
}

// TestCore_UndoAsks_Keep: [Keep it] changes nothing and says so.
func TestCore_UndoAsks_Keep(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/settings lang=en")
	e.say(alice, "/rent t1 autodl 4090 1.88/h")
	e.say(alice, "/stop t1")
	e.say(alice, "/stop t1")
	q := e.undoAsked(alice, "/undo")
	edit, _ := e.pressUndo(alice, q, 1, 42)
	contains(t, edit, "kept", "stop", "t1")
	if st := e.state(alice, "t1"); st != ledger.Stopped {
		t.Fatalf("[Keep it] changed t1: %s", st)
	}
}

// TestCore_UndoAtOnce_SaysWhat: right after the user's own command,
// /undo undoes at once and says what, when, and what is now true.
func TestCore_UndoAtOnce_SaysWhat(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent t1 autodl 4090 1.88/h")
	e.now = t0.Add(2 * time.Minute)
	e.say(alice, "/stop t1")
	e.now = t0.Add(3 * time.Minute)
	contains(t, e.say(alice, "/status"), "t1") // a question between changes nothing
	got := e.say(alice, "/undo")
	contains(t, got, "↩ undone", "stop", "t1", "10:02", "1 min ago", "t1 is running", "¥1.88/h")
	if st := e.state(alice, "t1"); st != ledger.Running {
		t.Fatalf("t1 is %s", st)
	}
	// Twice in a row: the rent beneath it, at once too.
	got = e.say(alice, "/undo")
	contains(t, got, "↩ undone", "t1", "10:00", "no longer in the ledger")
	if n := len(e.book(alice).Rentals); n != 0 {
		t.Fatalf("%d rentals after two /undo", n)
	}
	// Nothing left: said plainly.
	contains(t, e.say(alice, "/undo"), "✗", "nothing to undo")
	contains(t, e.say(alice, "/撤销"), "✗", "nothing to undo")
}

// TestCore_UndoAsks_Old: a change older than bot.UndoAskAfter is asked
// about, though it was the user's last command.
func TestCore_UndoAsks_Old(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/settings lang=en")
	e.say(alice, "/rent t1 autodl 4090 1.88/h")
	e.say(alice, "/stop t1")
	e.now = t0.Add(bot.UndoAskAfter + time.Second)
	q := e.undoAsked(alice, "/undo")
	contains(t, q.Text, "stop", "t1", "10:00", "min ago")
	if st := e.state(alice, "t1"); st != ledger.Stopped {
		t.Fatalf("t1 is %s", st)
	}
	// Just under the bound: at once.
	e2 := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e2.say(alice, "/rent t1 autodl 4090 1.88/h")
	e2.say(alice, "/stop t1")
	e2.now = t0.Add(bot.UndoAskAfter - time.Second)
	contains(t, e2.say(alice, "/undo"), "↩ undone", "stop")
}

// TestCore_UndoAsks_NotLastCommand: a change that did not come from the
// user's last accepted command is asked about: one a later command that
// cannot be undone followed, one made by a button, one the platform sync
// made.
func TestCore_UndoAsks_NotLastCommand(t *testing.T) {
	t.Run("later /autorelease", func(t *testing.T) {
		e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
		e.say(alice, "/settings lang=en")
		e.say(alice, "/rent t1 autodl 4090 1.88/h")
		e.say(alice, "/stop t1")
		contains(t, e.say(alice, "/autorelease t1 release after 1h"), "t1")
		q := e.undoAsked(alice, "/undo")
		contains(t, q.Text, "stop", "t1", "not your last")
		if st := e.state(alice, "t1"); st != ledger.Stopped {
			t.Fatalf("t1 is %s", st)
		}
	})
	t.Run("button", func(t *testing.T) {
		e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
		e.say(alice, "/settings lang=en")
		out := e.handle(e.update(alice, "rented a 4090 on autodl at 1.88/h"))
		if len(out) != 1 || len(out[0].Out.Buttons) == 0 {
			t.Fatalf("proposal: %+v", out)
		}
		e.pressedProposal(alice, out[0].Out, 0, 7)
		if n := len(e.book(alice).Rentals); n != 1 {
			t.Fatalf("%d rentals after Confirm", n)
		}
		q := e.undoAsked(alice, "/undo")
		contains(t, q.Text, "rent", "button")
		edit, _ := e.pressUndo(alice, q, 0, 43)
		contains(t, edit, "↩ undone", "no longer in the ledger")
		if n := len(e.book(alice).Rentals); n != 0 {
			t.Fatalf("%d rentals after [Undo it]", n)
		}
	})
	t.Run("sync", func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
		e.say(alice, "/settings lang=zh")
		in := ledger.PlatformInstance{UserID: alice, Platform: "runpod", PlatformID: "pod-abc", Status: ledger.PlatformAsked,
			GPU: "RTX 4090", GPUCount: 1, State: "running", StateAt: e.now}
		r := ledger.Rental{Name: "pod-abc", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
			Price: ledger.Price{Amount: ledger.MustDecimal("0.69"), Unit: ledger.UnitHour}, Currency: ledger.USD,
			Events: []ledger.Event{{Kind: ledger.EventStart, At: e.now}}}
		if _, _, err := e.db.AddSyncedRental(ctx, ledger.Action{UserID: alice, At: e.now}, in, r); err != nil {
			t.Fatal(err)
		}
		q := e.undoAsked(alice, "/undo")
		contains(t, q.Text, "根据平台实例列表创建的租用", "pod-abc", "同步")
		if n := len(e.book(alice).Rentals); n != 1 {
			t.Fatalf("the synced rental went without asking: %d rentals", n)
		}
	})
}

// TestCore_UndoStaleButton: a question's [Undo it] pressed after another
// change undoes nothing and says so.
func TestCore_UndoStaleButton(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/settings lang=en")
	e.say(alice, "/rent t1 autodl 4090 1.88/h")
	e.say(alice, "/stop t1")
	e.say(alice, "/stop t1") // refused
	q := e.undoAsked(alice, "/undo")
	e.say(alice, "/rent t2 autodl 4090 1.88/h")
	edit, _ := e.pressUndo(alice, q, 0, 44)
	contains(t, edit, "nothing was undone", "stop t1", "/undo")
	if st := e.state(alice, "t1"); st != ledger.Stopped {
		t.Fatalf("a stale [Undo it] changed t1: %s", st)
	}
	if st := e.state(alice, "t2"); st != ledger.Running {
		t.Fatalf("a stale [Undo it] changed t2: %s", st)
	}
}

// TestCore_UndoRefusalSurvivesRestart: the refusal just before /undo is
// remembered by the store, so a restart between them still asks.
func TestCore_UndoRefusalSurvivesRestart(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/settings lang=en")
	e.say(alice, "/rent t1 autodl 4090 1.88/h")
	e.say(alice, "/stop t1")
	e.say(alice, "/stop t1") // refused
	restarted := newEnv(t, bot.Config{AllowedUsers: []int64{alice}, Store: e.db})
	q := restarted.undoAsked(alice, "/undo")
	contains(t, q.Text, "stop", "t1", "refused")
	if st := restarted.state(alice, "t1"); st != ledger.Stopped {
		t.Fatalf("t1 is %s", st)
	}
}

// undoAsk sends /undo through Telegram; it must ask, with [Undo it]
// [Keep it] under the question.
func (c *convo) undoAsk(user int64, text string) tgfake.Message {
	c.t.Helper()
	q := c.say(user, text)
	if len(q.Buttons) != 1 || len(q.Buttons[0]) != 2 || q.Buttons[0][0].Text != "Undo it" && q.Buttons[0][0].Text != "撤销" {
		c.t.Fatalf("%s: want a question with [Undo it] [Keep it], got %q with buttons %+v", text, q.Text, q.Buttons)
	}
	return q
}

// undoPress presses button i under the question q and returns the
// messages new or changed after it.
func (c *convo) undoPress(user int64, q tgfake.Message, i int) []tgfake.Message {
	c.t.Helper()
	return c.send(user, func() int { return c.fake.PressButton(user, user, q.ID, q.Buttons[0][i].Data) })
}

// TestConversation_UndoAfterRefusal is the reproduction through the real
// Telegram library and the fake Bot API: stop, ten minutes, a refused
// command, /undo. The stop stays until [Undo it], which undoes exactly
// it and edits the question; pressing it again undoes nothing more.
func TestConversation_UndoAfterRefusal(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice}, TZ: "Asia/Shanghai"})
	c.say(alice, "/rent t1 autodl 4090 1.88/h")
	c.advance(2 * time.Minute)
	c.say(alice, "/stop t1")
	c.advance(10 * time.Minute)
	contains(t, c.say(alice, "/stop t1").Text, "✗")
	q := c.undoAsk(alice, "/undo")
	contains(t, q.Text, "stop t1", "10:02", "10 min ago", "refused")
	if st := c.state(alice, "t1"); st != ledger.Stopped {
		t.Fatalf("t1 is %s after /undo asked", st)
	}
	out := c.undoPress(alice, q, 0)
	if len(out) != 1 || out[0].ID != q.ID || len(out[0].Buttons) != 0 {
		t.Fatalf("[Undo it]: want the question edited without buttons, got %+v", out)
	}
	contains(t, out[0].Text, "↩ undone: stop t1, recorded 10:02", "Now t1 is running, billing ¥1.88/h.")
	if st := c.state(alice, "t1"); st != ledger.Running {
		t.Fatalf("t1 is %s after [Undo it]", st)
	}
	c.fake.PressButton(alice, alice, q.ID, q.Buttons[0][0].Data)
	c.settle(c.fake.PressButton(alice, alice, q.ID, q.Buttons[0][0].Data))
	if n := len(c.book(alice).Rentals); n != 1 || c.state(alice, "t1") != ledger.Running {
		t.Fatalf("more presses of [Undo it] changed the ledger: %d rentals, t1 %s", n, c.state(alice, "t1"))
	}
}

// TestConsole_UndoAfterRefusal is the reproduction in the terminal: the
// question's buttons are numbers, and typing [Undo it]'s undoes the stop.
func TestConsole_UndoAfterRefusal(t *testing.T) {
	db := openStore(t)
	now := t0
	db.Now = func() time.Time { return now }
	core, err := bot.New(context.Background(), bot.Config{Store: db, Owner: 1, TZ: "Asia/Shanghai", Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// Each line moves the clock by its step first: the stop at 10:02,
	// the refused stop ten minutes on.
	steps, n := []time.Duration{0, 2 * time.Minute, 10 * time.Minute}, 0
	h := handlerFunc(func(ctx context.Context, u chat.Update, s chat.Sender) error {
		if n < len(steps) {
			now = now.Add(steps[n])
		}
		n++
		return core.Handle(ctx, u, s)
	})
	var out strings.Builder
	in := "/rent t1 autodl 4090 1.88/h\n/stop t1\n/stop t1\n/undo\n1\n1\n"
	con, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: h, Dir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := con.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	ask := strings.Index(got, "Undo the stop t1, recorded 10:02 (10 min ago)?")
	done := strings.Index(got, "↩ undone: stop t1, recorded 10:02")
	if ask < 0 || done < ask || !strings.Contains(got[ask:done], "[1] Undo it") || !strings.Contains(got[ask:done], "[2] Keep it") {
		t.Fatalf("the terminal did not ask, then undo on [1]:\n%s", got)
	}
	contains(t, got[done:], "Now t1 is running, billing ¥1.88/h.", "[1] no longer works")
	b, err := db.Book(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rentals) != 1 || b.Rentals[0].State() != ledger.Running {
		t.Fatalf("after the terminal's [1] twice: %+v", b.Rentals)
	}
}

// handlerFunc is a chat.Handler made of a function.
type handlerFunc func(ctx context.Context, u chat.Update, s chat.Sender) error

func (f handlerFunc) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	return f(ctx, u, s)
}
