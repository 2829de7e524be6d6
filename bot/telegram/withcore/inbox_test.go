package withcore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// server is the real core and transport on a SQLite file, talking to a
// fake Bot API.
type server struct {
	db     *sqlite.DB
	core   *bot.Core
	tr     *telegram.Transport
	cancel context.CancelFunc
	done   chan error
}

// handlerWrap lets a test see or alter what reaches the core.
type handlerWrap func(ctx context.Context, u chat.Update, s chat.Sender, core *bot.Core) error

func startServer(t *testing.T, fake *tgfake.Server, dbPath string, users []int64, wrap handlerWrap, edit func(*telegram.Config)) *server {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(ctx, dbPath, sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: users, TZ: "UTC", Logger: quiet, BotName: tgfake.BotUsername})
	if err != nil {
		t.Fatal(err)
	}
	var h chat.Handler = core
	if wrap != nil {
		h = wrapHandler{core: core, f: wrap}
	}
	cfg := telegram.Config{
		Token: fake.Token(), Endpoint: fake.Endpoint(), Handler: h, Store: db, Logger: quiet,
		Allowed:       core.Allowed,
		PollTimeout:   time.Second,
		Backoff:       telegram.Backoff{Min: 5 * time.Millisecond, Max: 40 * time.Millisecond},
		RetryBackoff:  telegram.Backoff{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond},
		Pacing:        telegram.Pacing{Chat: 100 * time.Millisecond, Group: 100 * time.Millisecond, Global: time.Millisecond, ChatBurst: 1},
		ShutdownGrace: 200 * time.Millisecond,
	}
	if edit != nil {
		edit(&cfg)
	}
	tr, err := telegram.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	s := &server{db: db, core: core, tr: tr, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- tr.Run(runCtx) }()
	t.Cleanup(s.stop)
	return s
}

// stop ends Run and closes the store; it may be called twice.
func (s *server) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.db.Close()
	s.cancel = nil
}

type wrapHandler struct {
	core *bot.Core
	f    handlerWrap
}

func (w wrapHandler) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	return w.f(ctx, u, s, w.core)
}

func allText(msgs []tgfake.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// TestInbox_FloodOfChargesAllRecorded sends 100 /charge messages at once
// from an allowed user: every one must be recorded (1+2+...+100 = 5050),
// and the answers, which cannot all be sent at Telegram's per-chat rate,
// are merged into fewer messages that still confirm every charge.
func TestInbox_FloodOfChargesAllRecorded(t *testing.T) {
	fake := tgfake.New(t, "42:TEST")
	// Two seconds per message to a chat (Telegram allows about one a
	// second): even a loaded machine under -race records charges faster
	// than that, so the answers queue and must be merged.
	s := startServer(t, fake, filepath.Join(t.TempDir(), "ledger.db"), []int64{42}, nil, func(c *telegram.Config) {
		c.Pacing.Chat = 2 * time.Second
	})
	fake.SendText(42, 42, "/rent box1 autodl 4090 1.88/h")
	waitFor(t, "the rental", func() bool { return len(fake.Messages(42)) == 1 })
	for i := 1; i <= 100; i++ {
		fake.SendText(42, 42, fmt.Sprintf("/charge box1 %d.00 item%d", i, i))
	}
	// The wait is bounded by progress, not by a total: on a loaded machine
	// 100 charges under -race can take longer than any fixed deadline, but
	// a stall of 30 s with charges still missing is a loss.
	var sum *big.Rat
	n, last := 0, -1
	for stall := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		book, err := s.db.Book(context.Background(), 42)
		if err != nil {
			t.Fatal(err)
		}
		sum, n = new(big.Rat), len(book.Charges)
		for _, c := range book.Charges {
			sum.Add(sum, c.Amount.Rat())
		}
		if n > last {
			last, stall = n, time.Now().Add(30*time.Second)
		}
		if n >= 100 || time.Now().After(stall) {
			break
		}
	}
	if n != 100 || sum.Cmp(big.NewRat(5050, 1)) != 0 {
		t.Fatalf("recorded %d charges summing to %s, want 100 summing to 5050.00", n, sum.FloatString(2))
	}
	waitForLong(t, 3*time.Minute, "every charge confirmed", func() bool {
		return strings.Count(allText(fake.Messages(42)), "recorded") >= 100
	})
	msgs := fake.Messages(42)
	text := allText(msgs)
	for i := 1; i <= 100; i++ {
		if !strings.Contains(text, fmt.Sprintf("item%d\n", i)) && !strings.HasSuffix(strings.TrimSpace(text), fmt.Sprintf("item%d", i)) {
			t.Errorf("charge %d not confirmed", i)
		}
	}
	if c := strings.Count(text, "recorded"); c != 100 {
		t.Errorf("%d confirmations, want 100", c)
	}
	if len(msgs) >= 60 {
		t.Errorf("%d messages for 101 answers: answers were not merged", len(msgs))
	}
	for _, m := range msgs {
		if len([]rune(m.Text)) > 4096 {
			t.Errorf("a merged message of %d characters", len([]rune(m.Text)))
		}
	}
}

// TestInbox_BacklogDoesNotDelayOthers gives one allowed user a backlog of
// 600 updates, each slowed down, and checks that another user's /status
// sent after them is answered while most of the backlog is still waiting.
func TestInbox_BacklogDoesNotDelayOthers(t *testing.T) {
	fake := tgfake.New(t, "42:TEST")
	var handledA atomic.Int64
	wrap := func(ctx context.Context, u chat.Update, s chat.Sender, core *bot.Core) error {
		if u.UserID == 42 {
			time.Sleep(2 * time.Millisecond)
			defer handledA.Add(1)
		}
		return core.Handle(ctx, u, s)
	}
	// No flood limit for anyone: this is about fetching and scheduling.
	startServer(t, fake, filepath.Join(t.TempDir(), "ledger.db"), []int64{42, 43}, wrap, func(c *telegram.Config) { c.FloodBurst = 1 << 20 })
	const backlog = 600
	for i := range backlog {
		fake.SendText(42, 42, fmt.Sprintf("/spend today %d", i))
	}
	fake.SendText(43, 43, "/status")
	waitForLong(t, 60*time.Second, "user 43 answered", func() bool { return len(fake.Messages(43)) > 0 })
	if done := handledA.Load(); done > backlog/3 {
		t.Errorf("user 43's /status was answered only after %d of user 42's %d updates", done, backlog)
	}
	waitForLong(t, 120*time.Second, "the backlog handled", func() bool { return handledA.Load() >= backlog })
}

// TestInbox_AnsweredAfterCrash applies a change and then dies before its
// answer is kept (the handler blocks after the core's commit until the
// process is stopped, and nothing after it runs). After a restart on the
// same file, the user gets an answer, exactly one, and the change is not
// applied twice.
func TestInbox_AnsweredAfterCrash(t *testing.T) {
	fake := tgfake.New(t, "42:TEST")
	path := filepath.Join(t.TempDir(), "ledger.db")
	committed := make(chan struct{})
	var once sync.Once
	crash := func(ctx context.Context, u chat.Update, s chat.Sender, core *bot.Core) error {
		if !strings.HasPrefix(u.Text, "/charge") {
			return core.Handle(ctx, u, s)
		}
		// The answer is only recorded: the process died before it could send.
		if err := core.Handle(ctx, u, &testkit.Sender{}); err != nil {
			return err
		}
		once.Do(func() { close(committed) })
		<-ctx.Done() // dead: nothing after the commit happens
		return ctx.Err()
	}
	s1 := startServer(t, fake, path, []int64{42}, crash, nil)
	fake.SendText(42, 42, "/rent box1 autodl 4090 1.88/h")
	waitFor(t, "the rental", func() bool { return len(fake.Messages(42)) == 1 })
	fake.SendText(42, 42, "/charge box1 12.50 disk")
	<-committed
	s1.stop()
	if n := len(fake.Messages(42)); n != 1 {
		t.Fatalf("%d messages before the restart, want only the rental's", n)
	}

	s2 := startServer(t, fake, path, []int64{42}, nil, nil)
	waitFor(t, "the answer after the restart", func() bool { return len(fake.Messages(42)) >= 2 })
	time.Sleep(300 * time.Millisecond) // a second answer would come now
	msgs := fake.Messages(42)
	if len(msgs) != 2 {
		t.Fatalf("%d answers after the restart, want exactly 1: %q", len(msgs)-1, allText(msgs[1:]))
	}
	if !strings.Contains(msgs[1].Text, "/charge box1 12.50 disk") {
		t.Errorf("answer after the restart = %q, want it to name the charge", msgs[1].Text)
	}
	book, err := s2.db.Book(context.Background(), 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(book.Charges) != 1 {
		t.Errorf("%d charges, want 1", len(book.Charges))
	}
}

// TestInbox_StoredAnswerSentAfterRestart keeps Telegram failing every send
// while a change is applied and its answer stored, stops the server, and
// checks that the next start sends the stored answer once.
func TestInbox_StoredAnswerSentAfterRestart(t *testing.T) {
	fake := tgfake.New(t, "42:TEST")
	path := filepath.Join(t.TempDir(), "ledger.db")
	s1 := startServer(t, fake, path, []int64{42}, nil, nil)
	fake.FailMethod("sendMessage", 1000, 502, 0)
	fake.SendText(42, 42, "/rent box1 autodl 4090 1.88/h")
	waitFor(t, "the rental applied", func() bool {
		b, err := s1.db.Book(context.Background(), 42)
		return err == nil && len(b.Rentals) == 1
	})
	time.Sleep(100 * time.Millisecond)
	s1.stop()
	fake.ClearFailures()
	startServer(t, fake, path, []int64{42}, nil, nil)
	waitFor(t, "the stored answer", func() bool { return len(fake.Messages(42)) >= 1 })
	time.Sleep(300 * time.Millisecond)
	if msgs := fake.Messages(42); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "box1</b> started") {
		t.Errorf("after the restart: %q, want the rental's answer once", allText(msgs))
	}
}

// TestInbox_MultiLineMessage pastes five commands in one message, the
// third of which fails: the other four apply, once each even when the
// message is delivered again, and one answer says which line failed.
func TestInbox_MultiLineMessage(t *testing.T) {
	fake := tgfake.New(t, "42:TEST")
	s := startServer(t, fake, filepath.Join(t.TempDir(), "ledger.db"), []int64{42}, nil, nil)
	fake.SendText(42, 42, "/rent box1 autodl 4090 1.88/h\n/charge box1 1 a\n/stop nosuch\n\n/charge box1 2 b\n/charge box1 3 c")
	waitFor(t, "the answer", func() bool { return len(fake.Messages(42)) >= 1 })
	time.Sleep(300 * time.Millisecond)
	msgs := fake.Messages(42)
	if len(msgs) != 1 {
		t.Fatalf("%d answers to one message, want 1: %q", len(msgs), allText(msgs))
	}
	for _, want := range []string{"failed: line 3", "box1</b> started", "no rental named nosuch", "recorded: a", "recorded: b", "recorded: c"} {
		if !strings.Contains(msgs[0].Text, want) {
			t.Errorf("answer lacks %q:\n%s", want, msgs[0].Text)
		}
	}
	book, err := s.db.Book(context.Background(), 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(book.Rentals) != 1 || len(book.Charges) != 3 {
		t.Errorf("%d rentals, %d charges; want 1 and 3", len(book.Rentals), len(book.Charges))
	}
}

// TestInbox_DiskFull puts the database on a small tmpfs, fills it, and
// sends /stop: the update must be kept (not skipped), the user told once
// that the disk is full, and when space is freed the stop applies, stamped
// with the time the message was sent, not the time it was handled.
func TestInbox_DiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; run the tests as root to fill a real file system")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=3m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): run as root with CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })

	fake := tgfake.New(t, "42:TEST")
	s := startServer(t, fake, filepath.Join(dir, "ledger.db"), []int64{42}, nil, func(c *telegram.Config) {
		c.RetryBackoff = telegram.Backoff{Min: 20 * time.Millisecond, Max: 200 * time.Millisecond}
	})
	fake.SendText(42, 42, "/rent box1 autodl 4090 1.88/h at -1h")
	waitFor(t, "the rental", func() bool { return len(fake.Messages(42)) == 1 })

	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)
	// Fill what is left of the database's own files too, so that no write
	// can reuse space.
	ctx := context.Background()
	for i := 0; ; i++ {
		err := s.db.SetMeta(ctx, fmt.Sprintf("ballast:%d", i), strings.Repeat("x", 2000))
		if err != nil {
			if ledger.ErrorCode(err) != ledger.EFULL {
				t.Fatalf("filling the database: %v, want ledger.EFULL", err)
			}
			break
		}
	}

	before := time.Now().Truncate(time.Second)
	fake.SendText(42, 42, "/stop box1")
	after := time.Now()
	waitFor(t, "the disk-full notice", func() bool { return len(fake.Messages(42)) >= 2 })
	time.Sleep(3 * time.Second) // well past five retries, and past lateAfter
	if b, err := s.db.Book(ctx, 42); err != nil || b.Rentals[0].Events[len(b.Rentals[0].Events)-1].Kind == ledger.EventStop {
		t.Fatalf("stop applied on a full disk? err %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitForLong(t, 20*time.Second, "the stop applied", func() bool {
		b, err := s.db.Book(ctx, 42)
		if err != nil {
			return false
		}
		evs := b.Rentals[0].Events
		return evs[len(evs)-1].Kind == ledger.EventStop
	})
	b, _ := s.db.Book(ctx, 42)
	evs := b.Rentals[0].Events
	stopAt := evs[len(evs)-1].At
	if stopAt.Before(before) || stopAt.After(after) {
		t.Errorf("stop recorded at %v, want the time it was sent (%v-%v)", stopAt, before, after)
	}
	waitFor(t, "the stop's answer", func() bool { return strings.Contains(allText(fake.Messages(42)), "stopped") })
	msgs := fake.Messages(42)
	if n := strings.Count(allText(msgs), "disk is full"); n != 1 {
		t.Errorf("told %d times that the disk is full, want once:\n%s", n, allText(msgs))
	}
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	for {
		if _, err := f.Write(buf[:512]); err != nil {
			break
		}
	}
}

func waitForLong(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recordingStore is the SQLite store with a record of whose updates were
// written to the inbox.
type recordingStore struct {
	*sqlite.DB
	mu    sync.Mutex
	users map[int64]int
}

func (s *recordingStore) InboxAdd(ctx context.Context, es []ledger.InboxEntry, key, offset string) error {
	s.mu.Lock()
	for _, e := range es {
		s.users[e.UserID]++
	}
	s.mu.Unlock()
	return s.DB.InboxAdd(ctx, es, key, offset)
}

// TestInbox_StrangersNotStored floods the bot from a stranger beside an
// allowed user: the stranger gets one refusal, nothing of theirs is
// written to the inbox, and the allowed user's updates all are.
func TestInbox_StrangersNotStored(t *testing.T) {
	fake := tgfake.New(t, "42:TEST")
	var rec *recordingStore
	startServer(t, fake, filepath.Join(t.TempDir(), "ledger.db"), []int64{42}, nil, func(c *telegram.Config) {
		rec = &recordingStore{DB: c.Store.(*sqlite.DB), users: map[int64]int{}}
		c.Store = rec
	})
	for i := range 50 {
		fake.SendText(666, 666, fmt.Sprintf("/status %d", i))
		fake.SendText(42, 42, fmt.Sprintf("/spend today %d", i))
	}
	waitForLong(t, 30*time.Second, "the allowed user's answers", func() bool {
		return strings.Count(allText(fake.Messages(42)), "today") >= 50
	})
	time.Sleep(200 * time.Millisecond)
	if n := len(fake.Messages(666)); n != 1 {
		t.Errorf("the stranger got %d messages, want one refusal", n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.users[666] != 0 || rec.users[42] != 50 {
		t.Errorf("stored updates per user: %v, want 42:50 and none of 666", rec.users)
	}
}
