package telegram_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// token is distinctive so that a leak into the log is easy to find.
const token = "987654:LEAKME-token-aaaaaaaaaaaaaaa"

// memStore is an in-memory Store (meta and inbox) for the transport's
// mechanics; the ledger's SQLite store is used in withcore's tests.
type memStore struct {
	mu    sync.Mutex
	m     map[string]string
	inbox map[int64]ledger.InboxEntry
	fail  bool
}

func newMemStore() *memStore {
	return &memStore{m: map[string]string{}, inbox: map[int64]ledger.InboxEntry{}}
}

func (s *memStore) Meta(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *memStore) InboxAdd(_ context.Context, es []ledger.InboxEntry, key, offset string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("disk full")
	}
	for _, e := range es {
		if _, ok := s.inbox[e.ID]; !ok {
			s.inbox[e.ID] = e
		}
	}
	s.m[key] = offset
	return nil
}

func (s *memStore) sorted(keep func(ledger.InboxEntry) bool) []ledger.InboxEntry {
	var out []ledger.InboxEntry
	for _, e := range s.inbox {
		if keep(e) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b ledger.InboxEntry) int { return int(a.ID - b.ID) })
	return out
}

func (s *memStore) InboxUsers(context.Context) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, e := range s.sorted(func(e ledger.InboxEntry) bool { return !e.Handled }) {
		if !slices.Contains(out, e.UserID) {
			out = append(out, e.UserID)
		}
	}
	return out, nil
}

func (s *memStore) InboxNext(_ context.Context, user, after int64, limit int) ([]ledger.InboxEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sorted(func(e ledger.InboxEntry) bool { return !e.Handled && e.UserID == user && e.ID > after })
	return out[:min(limit, len(out))], nil
}

func (s *memStore) InboxUnsent(context.Context) ([]ledger.InboxEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sorted(func(e ledger.InboxEntry) bool { return e.Handled }), nil
}

func (s *memStore) InboxHandled(_ context.Context, id int64, reply string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reply == "" {
		delete(s.inbox, id)
		return nil
	}
	e := s.inbox[id]
	e.Handled, e.Reply = true, reply
	s.inbox[id] = e
	return nil
}

func (s *memStore) InboxDelete(_ context.Context, ids []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.inbox, id)
	}
	return nil
}

func (s *memStore) offset() int {
	v, _, _ := s.Meta(context.Background(), telegram.OffsetKey)
	n, _ := strconv.Atoi(v)
	return n
}

// handlerFunc adapts a function to chat.Handler.
type handlerFunc func(ctx context.Context, u chat.Update, s chat.Sender) error

func (f handlerFunc) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	return f(ctx, u, s)
}

// recorder is a handler that records every update it handled successfully
// and calls an optional hook first.
type recorder struct {
	mu   sync.Mutex
	got  []chat.Update
	hook func(ctx context.Context, u chat.Update, s chat.Sender) error
}

func (r *recorder) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	if r.hook != nil {
		if err := r.hook(ctx, u, s); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.got = append(r.got, u)
	r.mu.Unlock()
	return nil
}

func (r *recorder) updates() []chat.Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]chat.Update(nil), r.got...)
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type env struct {
	t      *testing.T
	fake   *tgfake.Server
	logs   *syncBuffer
	tr     *telegram.Transport
	cancel context.CancelFunc
	done   chan error
}

// fastConfig is a Config with the waits shortened for tests.
func fastConfig(fake *tgfake.Server, h chat.Handler, store telegram.Store, logs *syncBuffer) telegram.Config {
	return telegram.Config{
		Token:         fake.Token(),
		Endpoint:      fake.Endpoint(),
		Handler:       h,
		Store:         store,
		Logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PollTimeout:   time.Second,
		Backoff:       telegram.Backoff{Min: 5 * time.Millisecond, Max: 40 * time.Millisecond},
		RetryBackoff:  telegram.Backoff{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		Pacing:        telegram.Pacing{Chat: time.Millisecond, Group: time.Millisecond, Global: time.Millisecond, ChatBurst: 100},
		ShutdownGrace: 5 * time.Second,
	}
}

// start runs a transport against fake until the test ends; edit adjusts
// the config first.
func start(t *testing.T, fake *tgfake.Server, h chat.Handler, store telegram.Store, edit func(*telegram.Config)) *env {
	t.Helper()
	e := &env{t: t, fake: fake, logs: &syncBuffer{}, done: make(chan error, 1)}
	cfg := fastConfig(fake, h, store, e.logs)
	if edit != nil {
		edit(&cfg)
	}
	tr, err := telegram.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.tr = tr
	debugLogs = e.logs
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- tr.Run(ctx) }()
	t.Cleanup(func() { e.stop() })
	return e
}

// stop cancels Run and waits for it, checking that the token never
// reached the log.
func (e *env) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	e.cancel = nil
	select {
	case err := <-e.done:
		if err != nil {
			e.t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		e.t.Error("Run did not return after cancel")
	}
	if strings.Contains(e.logs.String(), token) || strings.Contains(e.logs.String(), "LEAKME") {
		e.t.Errorf("the token is in the log:\n%s", e.logs.String())
	}
}

var debugLogs *syncBuffer

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, debugLogs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTransport_DeliversInOrder(t *testing.T) {
	fake := tgfake.New(t, token)
	fake.SetUser(1, "ann", "zh-hans")
	h := &recorder{}
	store := newMemStore()
	e := start(t, fake, h, store, nil)

	ids := []int{fake.SendText(1, 1, "/status"), fake.SendText(1, 1, "/spend week"), fake.SendText(1, 1, "rented 2x4090")}
	waitFor(t, "three updates", func() bool { return len(h.updates()) == 3 })
	for i, u := range h.updates() {
		if u.Key != telegram.UpdateKey(ids[i]) || u.Kind != chat.KindText || u.UserID != 1 || u.ChatID != 1 ||
			u.ChatType != chat.ChatPrivate || u.Username != "ann" || u.LangCode != "zh-hans" {
			t.Errorf("update %d = %+v", i, u)
		}
	}
	if got := h.updates()[1].Text; got != "/spend week" {
		t.Errorf("second text = %q", got)
	}
	waitFor(t, "stored offset", func() bool { return store.offset() == ids[2]+1 })
	waitFor(t, "Telegram confirmation", func() bool { return fake.Confirmed() == ids[2]+1 })
	e.stop()
}

func TestTransport_RetriesFailingHandle(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	var mu sync.Mutex
	attempts := 0
	var offsetsSeen []int
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		mu.Lock()
		defer mu.Unlock()
		if u.Text != "flaky" {
			return nil
		}
		attempts++
		offsetsSeen = append(offsetsSeen, store.offset())
		if attempts < 3 {
			return errors.New("database is locked")
		}
		return nil
	}}
	e := start(t, fake, h, store, nil)
	first := fake.SendText(1, 1, "first")
	waitFor(t, "first update", func() bool { return len(h.updates()) == 1 })
	flaky := fake.SendText(1, 1, "flaky")
	waitFor(t, "flaky handled", func() bool { return len(h.updates()) == 2 })
	waitFor(t, "offset past flaky", func() bool { return store.offset() == flaky+1 })
	mu.Lock()
	defer mu.Unlock()
	if attempts != 3 {
		t.Errorf("flaky update tried %d times, want 3", attempts)
	}
	// The update is stored before it is handled, so the offset is past
	// it while it is retried: Telegram may forget it, the inbox has it.
	for i, off := range offsetsSeen {
		if off != flaky+1 {
			t.Errorf("attempt %d: stored offset %d, want %d (past the stored update)", i+1, off, flaky+1)
		}
	}
	_ = first
	if !strings.Contains(e.logs.String(), "will retry") {
		t.Error("retries not logged")
	}
}

func TestTransport_SkipsPoisonUpdate(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	var mu sync.Mutex
	tries := 0
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		if u.Text == "poison" {
			mu.Lock()
			tries++
			mu.Unlock()
			panic("bug")
		}
		return nil
	}}
	e := start(t, fake, h, store, func(c *telegram.Config) { c.MaxAttempts = 3 })
	fake.SendText(1, 1, "poison")
	next := fake.SendText(1, 1, "after")
	waitFor(t, "the update after the poison one", func() bool { return len(h.updates()) == 1 })
	waitFor(t, "offset past both", func() bool { return store.offset() == next+1 })
	mu.Lock()
	if tries != 3 {
		t.Errorf("poison tried %d times, want 3", tries)
	}
	mu.Unlock()
	if !strings.Contains(e.logs.String(), "update dropped after repeated failures") {
		t.Errorf("skip not logged:\n%s", e.logs.String())
	}
	waitFor(t, "failure notice", func() bool { return len(fake.Messages(1)) == 1 })
	if m := fake.Messages(1)[0].Text; !strings.Contains(m, "failed to handle") {
		t.Errorf("failure notice = %q", m)
	}
}

// TestTransport_TransientErrorNeverSkipped fails an update with a
// transient error (as SQLite's SQLITE_FULL is) far more often than
// MaxAttempts: it must be retried until it succeeds, never dropped.
func TestTransport_TransientErrorNeverSkipped(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	var mu sync.Mutex
	tries := 0
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		mu.Lock()
		defer mu.Unlock()
		tries++
		if tries <= 12 {
			return fmt.Errorf("bot: handle: %w", ledger.Errorc(ledger.EFULL, "disk_full"))
		}
		return nil
	}}
	start(t, fake, h, store, func(c *telegram.Config) { c.MaxAttempts = 3 })
	fake.SendText(1, 1, "/charge box1 10 x")
	waitFor(t, "the update applied after the disk had room", func() bool { return len(h.updates()) == 1 })
	msgs := fake.Messages(1)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "disk is full") {
		t.Errorf("want one disk-full notice, got %+v", msgs)
	}
}

// TestTransport_RedeliversAfterRestart stops a transport while an update
// fails, and checks that a new transport on the same store gets exactly
// the unfinished update again, under the same key.
func TestTransport_RedeliversAfterRestart(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	failing := make(chan string, 10)
	h1 := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		if u.Text == "second" {
			select {
			case failing <- u.Key:
			default:
			}
			return errors.New("store unavailable")
		}
		return nil
	}}
	e1 := start(t, fake, h1, store, func(c *telegram.Config) {
		c.MaxAttempts = 1000
		c.RetryBackoff = telegram.Backoff{Min: 50 * time.Millisecond, Max: 50 * time.Millisecond}
	})
	first := fake.SendText(1, 1, "first")
	second := fake.SendText(1, 1, "second")
	key := <-failing
	waitFor(t, "both stored", func() bool { return store.offset() == second+1 })
	e1.stop()
	if store.offset() != second+1 {
		t.Fatalf("offset after stop = %d, want %d", store.offset(), second+1)
	}
	_ = first

	h2 := &recorder{}
	start(t, fake, h2, store, nil)
	third := fake.SendText(1, 1, "third")
	waitFor(t, "redelivery", func() bool { return len(h2.updates()) == 2 })
	got := h2.updates()
	if got[0].Key != key || got[0].Text != "second" || !got[0].Redelivered || got[1].Key != telegram.UpdateKey(third) || got[1].Redelivered {
		t.Errorf("after restart: %+v", got)
	}
	waitFor(t, "offset", func() bool { return store.offset() == third+1 })
}

func TestTransport_GracefulShutdownFinishesInFlight(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	entered := make(chan struct{})
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		close(entered)
		time.Sleep(200 * time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_, err := s.Send(ctx, chat.Outgoing{ChatID: u.ChatID, Text: "done"})
		return err
	}}
	e := start(t, fake, h, store, nil)
	id := fake.SendText(1, 1, "slow")
	<-entered
	e.stop()
	if len(h.updates()) != 1 || store.offset() != id+1 {
		t.Errorf("in-flight update not finished at shutdown: handled %d, offset %d", len(h.updates()), store.offset())
	}
	if msgs := fake.Messages(1); len(msgs) != 1 {
		t.Errorf("reply of the in-flight update not sent: %+v", msgs)
	}
}

func TestTransport_Callbacks(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		if u.CallbackData == "confirm" {
			return s.AnswerCallback(ctx, u.CallbackID, "Done")
		}
		return nil
	}}
	e := start(t, fake, h, store, nil)
	ctx := context.Background()
	card, err := e.tr.Send(ctx, chat.Outgoing{ChatID: -100, Text: "Rent <b>box1</b>?", Buttons: [][]chat.Button{{{Text: "Confirm", Data: "confirm"}, {Text: "Cancel", Data: "cancel"}}}})
	if err != nil {
		t.Fatal(err)
	}
	fake.PressButton(42, -100, card, "confirm")
	fake.PressButton(43, -100, card, "cancel")
	waitFor(t, "two presses", func() bool { return len(h.updates()) == 2 })
	got := h.updates() // two users: handled concurrently, in any order
	slices.SortFunc(got, func(a, b chat.Update) int { return int(a.UserID - b.UserID) })
	for i, u := range got {
		if u.Kind != chat.KindCallback || u.UserID != int64(42+i) || u.ChatID != -100 || u.ChatType != chat.ChatGroup || u.MessageID != card || u.CallbackID == "" {
			t.Errorf("press %d = %+v", i, u)
		}
	}
	waitFor(t, "answers", func() bool { return len(fake.Answers()) == 2 })
	answers := fake.Answers()
	slices.SortFunc(answers, func(a, b tgfake.CallbackAnswer) int { return strings.Compare(a.CallbackID, b.CallbackID) })
	if answers[0].Text != "Done" || answers[1].Text != "" {
		t.Errorf("answers = %+v; want the handler's toast once, then an automatic empty answer", answers)
	}
}

func TestTransport_SlowCallbackAnsweredEarly(t *testing.T) {
	fake := tgfake.New(t, token)
	release := make(chan struct{})
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		<-release
		return s.AnswerCallback(ctx, u.CallbackID, "too late for a toast")
	}}
	start(t, fake, h, newMemStore(), func(c *telegram.Config) { c.CallbackGrace = 30 * time.Millisecond })
	fake.PressButton(1, 1, 1, "export")
	waitFor(t, "an answer while the handler is still busy", func() bool { return len(fake.Answers()) == 1 })
	close(release)
	waitFor(t, "handled", func() bool { return len(h.updates()) == 1 })
	if a := fake.Answers(); len(a) != 1 || a[0].Text != "" {
		t.Errorf("answers = %+v; want one early empty answer", a)
	}
}

func TestTransport_OtherUpdates(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	h := &recorder{}
	start(t, fake, h, store, nil)
	fake.SendSticker(1, 1)
	fake.SendEdited(1, 1, 1, "edited text")
	channel := fake.SendChannelPost(-1001234567890, "news")
	fwd := fake.SendForwarded(1, 1, "rented 4090 at 1.88/h")
	waitFor(t, "three handled", func() bool { return len(h.updates()) == 3 })
	waitFor(t, "offset", func() bool { return store.offset() == fwd+1 })
	got := h.updates()
	if got[0].Kind != chat.KindOther || got[0].Edited {
		t.Errorf("sticker = %+v", got[0])
	}
	if got[1].Kind != chat.KindOther || !got[1].Edited || got[1].Text != "edited text" {
		t.Errorf("edit = %+v", got[1])
	}
	if got[2].Kind != chat.KindText || !got[2].Forwarded {
		t.Errorf("forward = %+v", got[2])
	}
	for _, u := range got {
		if u.Key == telegram.UpdateKey(channel) {
			t.Errorf("channel post reached the handler: %+v", u)
		}
	}
}

func TestTransport_SetsCommandsInBothLanguages(t *testing.T) {
	fake := tgfake.New(t, token)
	start(t, fake, &recorder{}, newMemStore(), func(c *telegram.Config) {
		c.Commands = map[string][]telegram.Command{
			"":   {{Command: "status", Description: "Running rentals"}, {Command: "help", Description: "How to use"}},
			"zh": {{Command: "status", Description: "运行中的租用"}, {Command: "help", Description: "帮助"}},
		}
	})
	waitFor(t, "commands", func() bool { return len(fake.Commands("zh")) == 2 && len(fake.Commands("")) == 2 })
	if got := fake.Commands("zh")[0]; got.Description != "运行中的租用" {
		t.Errorf("zh = %+v", got)
	}
	if got := fake.Commands("")[1]; got.Command != "help" {
		t.Errorf("default = %+v", got)
	}
	if fake.Calls("deleteWebhook") != 1 {
		t.Error("webhook not deleted at start")
	}
}

func TestTransport_OutageLoggedOnce(t *testing.T) {
	fake := tgfake.New(t, token)
	h := &recorder{}
	e := start(t, fake, h, newMemStore(), nil)
	waitFor(t, "connected", func() bool { return strings.Contains(e.logs.String(), "telegram connected") })
	fake.SetDown(true)
	waitFor(t, "several failed attempts", func() bool { return strings.Count(e.logs.String(), "telegram still unreachable") >= 5 })
	fake.SetDown(false)
	waitFor(t, "recovery", func() bool { return strings.Contains(e.logs.String(), "telegram reachable again") })
	fake.SendText(1, 1, "/status")
	waitFor(t, "update after the outage", func() bool { return len(h.updates()) == 1 })
	logs := e.logs.String()
	if n := strings.Count(logs, "level=WARN msg=\"telegram unreachable\""); n != 1 {
		t.Errorf("'telegram unreachable' logged %d times, want once:\n%s", n, logs)
	}
	if n := strings.Count(logs, "telegram reachable again"); n != 1 {
		t.Errorf("'telegram reachable again' logged %d times, want once", n)
	}
	e.stop() // checks the log for the token
}

func TestTransport_StartsWhileTelegramDown(t *testing.T) {
	fake := tgfake.New(t, token)
	fake.SetDown(true)
	h := &recorder{}
	e := start(t, fake, h, newMemStore(), nil)
	waitFor(t, "unreachable", func() bool { return strings.Contains(e.logs.String(), "telegram unreachable") })
	fake.SetDown(false)
	fake.SendText(1, 1, "hello")
	waitFor(t, "update", func() bool { return len(h.updates()) == 1 })
}

func TestTransport_RejectedToken(t *testing.T) {
	fake := tgfake.New(t, token)
	logs := &syncBuffer{}
	cfg := fastConfig(fake, &recorder{}, newMemStore(), logs)
	cfg.Token = "111:wrong"
	tr, err := telegram.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "token was rejected") {
		t.Errorf("Run = %v, want a rejected-token error", err)
	}
}

func TestNew_Errors(t *testing.T) {
	good := telegram.Config{Token: "1:x", Handler: &recorder{}, Store: newMemStore()}
	tests := []struct {
		name string
		edit func(*telegram.Config)
		want string
	}{
		{"no token", func(c *telegram.Config) { c.Token = "" }, "Token"},
		{"no handler", func(c *telegram.Config) { c.Handler = nil }, "Handler"},
		{"no store", func(c *telegram.Config) { c.Store = nil }, "Store"},
		{"bad endpoint", func(c *telegram.Config) { c.Endpoint = "http://x/bot" }, "%s twice"},
		{"client timeout below poll", func(c *telegram.Config) { c.Client = &http.Client{Timeout: 10 * time.Second} }, "must exceed PollTimeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			if _, err := telegram.New(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTransport_FloodDoesNotBlockOthers floods the bot from one allowed
// user whose handler is stuck, and checks that another user is served
// meanwhile, that none of the flood is dropped, and that a flooding
// stranger is still limited (their excess dropped, nothing stored).
func TestTransport_FloodDoesNotBlockOthers(t *testing.T) {
	fake := tgfake.New(t, token)
	store := newMemStore()
	release := make(chan struct{})
	h := &recorder{hook: func(ctx context.Context, u chat.Update, s chat.Sender) error {
		if u.UserID == 1 {
			<-release
		}
		return nil
	}}
	start(t, fake, h, store, func(c *telegram.Config) {
		c.FloodBurst = 3
		c.FloodInterval = time.Hour
		c.Allowed = func(id int64) bool { return id != 666 }
	})
	for i := range 10 {
		fake.SendText(1, 1, fmt.Sprint("spam ", i))
	}
	for i := range 10 {
		fake.SendText(666, 666, fmt.Sprint("stranger ", i))
	}
	other := fake.SendText(2, 2, "/status")
	waitFor(t, "user 2 and the stranger's burst served while user 1 is stuck", func() bool {
		n := 0
		for _, u := range h.updates() {
			if u.Key == telegram.UpdateKey(other) || u.UserID == 666 {
				n++
			}
		}
		return n == 4
	})
	close(release)
	waitFor(t, "all of user 1's flood handled", func() bool { return len(h.updates()) == 14 })
	waitFor(t, "offset past the flood", func() bool { return store.offset() == other+1 })
	time.Sleep(50 * time.Millisecond)
	if n := len(h.updates()); n != 14 {
		t.Errorf("%d updates handled, want 14 (10 of the flood, 3 of the stranger's, user 2)", n)
	}
	for _, e := range store.sorted(func(ledger.InboxEntry) bool { return true }) {
		t.Errorf("entry left in the inbox: %+v", e)
	}
}
