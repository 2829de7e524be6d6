// Package withcore_test runs the Telegram transport with the real
// conversation core on a real SQLite file, against the fake Bot API
// server. It lives apart from package telegram's tests so that those do
// not depend on the core and the store compiling.
package withcore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// crashAfterCommit hands each update to the core and then, the first time
// it sees a key, reports a failure, as if the process had died after the
// core's transaction committed but before the offset was stored. The
// transport must deliver the update again and the core must not apply it
// twice.
type crashAfterCommit struct {
	core *bot.Core
	mu   sync.Mutex
	seen map[string]int
}

func (h *crashAfterCommit) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	if err := h.core.Handle(ctx, u, s); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[u.Key]++
	if h.seen[u.Key] == 1 {
		return errors.New("simulated crash after commit")
	}
	return nil
}

// TestTransport_WithCoreAndSQLite runs the real core on a real SQLite file
// behind the transport and the fake server: a redelivered /rent creates
// one rental, and the offset is kept in the ledger's meta table.
func TestTransport_WithCoreAndSQLite(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: []int64{42}, TZ: "Asia/Shanghai", Logger: quiet, BotName: tgfake.BotUsername})
	if err != nil {
		t.Fatal(err)
	}
	fake := tgfake.New(t, "42:TEST")
	h := &crashAfterCommit{core: core, seen: map[string]int{}}
	tr, err := telegram.New(telegram.Config{
		Token: fake.Token(), Endpoint: fake.Endpoint(), Handler: h, Store: db, Logger: quiet,
		PollTimeout:  time.Second,
		Backoff:      telegram.Backoff{Min: 5 * time.Millisecond, Max: 40 * time.Millisecond},
		RetryBackoff: telegram.Backoff{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		Pacing:       telegram.Pacing{Chat: time.Millisecond, Group: time.Millisecond, Global: time.Millisecond, ChatBurst: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tr.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	rent := fake.SendText(42, 42, "/rent box1 autodl 4090 1.88/h")
	stranger := fake.SendText(7, 7, "/status")
	waitFor(t, "both handled twice", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.seen[telegram.UpdateKey(rent)] == 2 && h.seen[telegram.UpdateKey(stranger)] == 2
	})
	book, err := db.Book(ctx, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(book.Rentals) != 1 || book.Rentals[0].Name != "box1" {
		t.Fatalf("rentals after a redelivered /rent: %d, want exactly box1", len(book.Rentals))
	}
	waitFor(t, "stored offset", func() bool {
		v, ok, _ := db.Meta(ctx, telegram.OffsetKey)
		return ok && v == strconv.Itoa(stranger+1)
	})
	// Answers are sent by the chat's outbox after the entry is marked
	// handled, so they may trail the offset.
	waitFor(t, "the answer to /rent", func() bool { return len(fake.Messages(42)) > 0 })
	msgs := fake.Messages(42)
	if !strings.Contains(msgs[0].Text, "box1") {
		t.Errorf("reply to /rent: %+v", msgs)
	}
	for _, m := range msgs {
		if strings.Contains(strings.ToLower(m.Text), "in use") {
			t.Errorf("the redelivery was applied again: %q", m.Text)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
