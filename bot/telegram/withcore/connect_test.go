package withcore_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// runpodConns connects RunPod accounts as connsync does: the real client
// checks the key against the fake RunPod, the real vault seals it and the
// real store keeps it.
type runpodConns struct {
	db    *sqlite.DB
	vault *vault.Vault
	fake  *runpodfake.Server
}

func (c *runpodConns) Connect(ctx context.Context, userID int64, platform, key string) (ledger.Connector, error) {
	if platform != "runpod" {
		return ledger.Connector{}, ledger.Errorf(ledger.EINVALID, "connect: %q is not connected in this test", platform)
	}
	cl, err := runpod.New(runpod.Config{APIKey: key, BaseURL: c.fake.RESTURL(), GraphQLURL: c.fake.GraphQLURL(), HTTPClient: &http.Client{Timeout: 5 * time.Second}})
	if err != nil {
		return ledger.Connector{}, ledger.Errorf(ledger.EINVALID, "connect: %v", err)
	}
	if err := cl.Check(ctx); err != nil {
		return ledger.Connector{}, err
	}
	enc, err := c.vault.Seal([]byte(key), vault.ConnectorAD(userID, platform))
	if err != nil {
		return ledger.Connector{}, err
	}
	conn := ledger.Connector{UserID: userID, Platform: platform, KeyEnc: enc, Hint: vault.Hint(key)}
	return conn, c.db.SaveConnector(ctx, conn)
}

func (c *runpodConns) Connectors(ctx context.Context, userID int64) ([]ledger.Connector, error) {
	return c.db.Connectors(ctx, userID)
}
func (c *runpodConns) Disconnect(ctx context.Context, userID int64, platform string) error {
	return c.db.DeleteConnector(ctx, userID, platform)
}
func (c *runpodConns) Reconcile(context.Context, int64, time.Time, time.Time) ([]ledger.Reconciliation, error) {
	return nil, nil
}
func (c *runpodConns) Live(context.Context, *ledger.Rental) (string, bool) { return "", false }
func (c *runpodConns) Platforms() connector.Registry                       { return connector.Registry{runpod.Spec} }

// TestConnect_KeyLeavesNoTrace sends /connect with a RunPod key through
// the real transport, core and store: the key's message is deleted on
// Telegram, the key is stored sealed, and afterwards no byte sequence of
// the key is in the database file, its write-ahead log, or any log line
// (the transport's durable inbox stored the update's text before it was
// handled).
func TestConnect_KeyLeavesNoTrace(t *testing.T) {
	connectLeavesNoTrace(t, 0)
}

// TestConnect_KeyLeavesNoTraceMarkFailed is the same with the store
// refusing the first three writes that mark the update handled (a full or
// locked disk, for a moment): the key's stored text is still dropped and
// wiped while the server runs, once a write goes through, rather than
// kept until the next start.
func TestConnect_KeyLeavesNoTraceMarkFailed(t *testing.T) {
	connectLeavesNoTrace(t, 3)
}

// markFails is the real store whose InboxHandled fails while left is
// above zero; calls counts every call.
type markFails struct {
	*sqlite.DB
	left, calls atomic.Int32
}

func (m *markFails) InboxHandled(ctx context.Context, id int64, reply string) error {
	m.calls.Add(1)
	if m.left.Add(-1) >= 0 {
		return ledger.Errorf(ledger.EFULL, "sqlite: mark update %d handled: database or disk is full", id)
	}
	return m.DB.InboxHandled(ctx, id, reply)
}

func connectLeavesNoTrace(t *testing.T, failMarks int32) {
	const key = "rpa_Z9Y8X7W6V5U4T3S2R1Q0ponmlkjiHGFE"
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "ledger.db")
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db, err := sqlite.Open(ctx, dbPath, sqlite.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(strings.Repeat("5a", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	rp := runpodfake.New(key)
	t.Cleanup(rp.Close)
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: []int64{42}, TZ: "UTC", Logger: logger, BotName: tgfake.BotUsername,
		Connections: &runpodConns{db: db, vault: v, fake: rp}})
	if err != nil {
		t.Fatal(err)
	}
	fake := tgfake.New(t, "42:TEST")
	store := &markFails{DB: db}
	tr, err := telegram.New(telegram.Config{
		Token: fake.Token(), Endpoint: fake.Endpoint(), Handler: core, Store: store, Logger: logger, Allowed: core.Allowed,
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
	stopped := false
	stop := func() {
		if !stopped {
			cancel()
			<-done
			db.Close()
			stopped = true
		}
	}
	t.Cleanup(stop)

	fake.SendText(42, 42, "/start")
	waitFor(t, "the welcome", func() bool { return len(fake.Messages(42)) == 1 })
	store.left.Store(failMarks) // /start's entry was marked before its answer went
	up := fake.SendText(42, 42, "/connect runpod "+key)
	waitFor(t, "the reply to /connect", func() bool { return len(fake.Messages(42)) == 2 })
	waitFor(t, "the update answered and its entry gone", func() bool { return fake.Confirmed() > up && tr.Idle() })

	// /start's entry had nothing to keep, /connect's was marked (each a
	// call), and each failure made one more.
	if got, want := store.calls.Load(), 2+failMarks; got != want {
		t.Errorf("InboxHandled called %d times, want %d", got, want)
	}
	reply := fake.Messages(42)[1].Text
	for _, w := range []string{"✓", "RunPod", "…HGFE", "deleted your message"} {
		if !strings.Contains(reply, w) {
			t.Errorf("reply %q lacks %q", reply, w)
		}
	}
	// The user's message was the chat's third (welcome is the second).
	if d := fake.Deleted(42); len(d) != 1 || d[0] != 3 {
		t.Errorf("deleted messages %v, want [3] (the /connect)", d)
	}
	cs, err := db.Connectors(ctx, 42)
	if err != nil || len(cs) != 1 || cs[0].Hint != "HGFE" {
		t.Fatalf("connectors %+v, %v", cs, err)
	}
	secret := []byte(key[:len(key)-4]) // the part of the key never shown
	onDisk := func(when string) {
		t.Helper()
		for _, name := range []string{"ledger.db", "ledger.db-wal", "ledger.db-journal"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, secret) {
				t.Errorf("%s: %s holds the API key", when, name)
			}
		}
	}
	// While the server runs (a crash now leaves the files as they are),
	// and after it closed the store.
	onDisk("after /connect was handled")
	stop()
	onDisk("after the store was closed")
	if strings.Contains(logs.String(), string(secret)) {
		t.Errorf("a log line holds the API key:\n%s", logs.String())
	}
	for _, m := range fake.Messages(42) {
		if strings.Contains(m.Text, string(secret)) {
			t.Errorf("a reply shows the key: %q", m.Text)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the loggers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
