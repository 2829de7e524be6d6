package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// sent is what a recording sender received.
type sent struct {
	Out      bot.Outgoing
	Callback string // AnswerCallback text, for callback answers
	IsAnswer bool
}

// recorder is a Sender that keeps what the core sends, for tests that
// drive the core directly (the conversation tests use the real Telegram
// transport instead).
type recorder struct {
	mu   sync.Mutex
	msgs []sent
	next int
}

func (r *recorder) Send(_ context.Context, m bot.Outgoing) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, sent{Out: m})
	if m.EditMessageID != 0 {
		return m.EditMessageID, nil
	}
	r.next++
	return r.next, nil
}

func (r *recorder) AnswerCallback(_ context.Context, id, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, sent{Callback: text, IsAnswer: true})
	return nil
}

// take returns and forgets what was sent since the last take.
func (r *recorder) take() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.msgs
	r.msgs = nil
	return out
}

// env is a core over a real SQLite file, a settable clock and a recorder.
type env struct {
	t    *testing.T
	db   *sqlite.DB
	core *bot.Core
	rec  *recorder
	now  time.Time
	seq  int
	logs *strings.Builder
}

var t0 = time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC) // 10:00 in Shanghai

func openStore(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newEnv(t *testing.T, cfg bot.Config) *env {
	t.Helper()
	e := &env{t: t, rec: &recorder{}, now: t0, logs: &strings.Builder{}}
	if cfg.Store == nil {
		e.db = openStore(t)
		cfg.Store = e.db
	} else {
		e.db = cfg.Store.(*sqlite.DB)
	}
	e.db.Now = func() time.Time { return e.now }
	cfg.Now = func() time.Time { return e.now }
	if cfg.TZ == "" {
		cfg.TZ = "Asia/Shanghai"
	}
	cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{b: e.logs}, nil))
	core, err := bot.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.core = core
	return e
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// update returns a private text update from user with a fresh key.
func (e *env) update(user int64, text string) bot.Update {
	e.seq++
	return bot.Update{Key: fmt.Sprintf("test:%d", e.seq), Kind: bot.KindText, UserID: user, ChatID: user,
		ChatType: bot.ChatPrivate, Text: text}
}

// handle runs u and returns the texts sent.
func (e *env) handle(u bot.Update) []sent {
	e.t.Helper()
	if err := e.core.Handle(context.Background(), u, e.rec); err != nil {
		e.t.Fatalf("Handle(%q): %v", u.Text, err)
	}
	return e.rec.take()
}

// say sends text as user in a private chat and returns the single reply.
func (e *env) say(user int64, text string) string {
	e.t.Helper()
	out := e.handle(e.update(user, text))
	if len(out) != 1 {
		e.t.Fatalf("%q: want 1 reply, got %d: %+v", text, len(out), out)
	}
	return out[0].Out.Text
}

func (e *env) book(user int64) *ledger.Book {
	e.t.Helper()
	b, err := e.db.Book(context.Background(), user)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("reply %q does not contain %q", got, w)
		}
	}
}

const alice, bob, mallory = 1001, 1002, 6666

func TestCore_RentLifecycle(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	got := e.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, got, "✓", "box1", "started 10:00", "¥1.88/h", "per-second", "autodl")
	b := e.book(alice)
	if len(b.Rentals) != 1 || b.Rentals[0].Currency != ledger.CNY || b.Rentals[0].Mode != ledger.PerSecond || !b.Rentals[0].Priced {
		t.Fatalf("rental = %+v", b.Rentals)
	}

	e.now = t0.Add(2*time.Hour + 5*time.Minute)
	got = e.say(alice, "/stop box1")
	contains(t, got, "box1", "stopped", "2h05m", "¥3.92")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Stopped {
		t.Fatalf("state = %s", st)
	}

	e.now = e.now.Add(time.Hour)
	contains(t, e.say(alice, "/resume box1"), "resumed")
	e.now = e.now.Add(time.Hour)
	contains(t, e.say(alice, "/status"), "box1", "running", "¥1.88/h")
	contains(t, e.say(alice, "/release box1"), "released", "3h05m", "¥5.80")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Released {
		t.Fatalf("state = %s", st)
	}
	contains(t, e.say(alice, "/undo"), "undone", "release", "box1")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Fatalf("after undo state = %s", st)
	}
	// Bob sees none of it, and cannot touch it.
	contains(t, e.say(bob, "/status"), "No rentals")
	contains(t, e.say(bob, "/stop box1"), "✗")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Fatalf("bob changed alice's rental: %s", st)
	}
}
