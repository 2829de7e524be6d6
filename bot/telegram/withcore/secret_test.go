package withcore_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// slowConns is runpodConns behind a platform that holds each check until
// the test lets it go: entered says a check is held.
type slowConns struct {
	*runpodConns
	entered chan struct{}
	gate    chan struct{}
}

func (c *slowConns) Connect(ctx context.Context, userID int64, platform, key string) (ledger.Connector, error) {
	select {
	case c.entered <- struct{}{}:
	default:
	}
	select {
	case <-c.gate:
	case <-ctx.Done():
		return ledger.Connector{}, ctx.Err()
	}
	return c.runpodConns.Connect(ctx, userID, platform, key)
}

// secretWorld is the real store, core and transport against the fake Bot
// API, with a RunPod whose checks wait for the test.
type secretWorld struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	dbPath string
	db     *sqlite.DB
	fake   *tgfake.Server
	conns  *slowConns
	logs   *syncBuffer
	tr     *telegram.Transport
	stop   func()
}

const secretKey = "rpa_SLOWCHECK0123456789abcdefWXYZ"

// start opens the store at w.dbPath and runs a transport on it; sealer
// seals the held updates (nil: none).
func (w *secretWorld) start(sealer telegram.Sealer) {
	t := w.t
	logger := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db, err := sqlite.Open(w.ctx, w.dbPath, sqlite.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	w.db = db
	w.conns.runpodConns.db = db
	core, err := bot.New(w.ctx, bot.Config{Store: db, AllowedUsers: []int64{42}, TZ: "UTC", Logger: logger, BotName: tgfake.BotUsername,
		Connections: w.conns})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := telegram.New(telegram.Config{
		Token: w.fake.Token(), Endpoint: w.fake.Endpoint(), Handler: core, Store: db, Logger: logger, Allowed: core.Allowed,
		Sealer:        sealer,
		PollTimeout:   time.Second,
		ShutdownGrace: 50 * time.Millisecond,
		Backoff:       telegram.Backoff{Min: 5 * time.Millisecond, Max: 40 * time.Millisecond},
		RetryBackoff:  telegram.Backoff{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		Pacing:        telegram.Pacing{Chat: time.Millisecond, Group: time.Millisecond, Global: time.Millisecond, ChatBurst: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.tr = tr
	runCtx, cancel := context.WithCancel(w.ctx)
	done := make(chan error, 1)
	go func() { done <- tr.Run(runCtx) }()
	stopped := false
	w.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			db.Close()
		}
	}
	t.Cleanup(w.stop)
}

func newSecretWorld(t *testing.T) *secretWorld {
	dir := t.TempDir()
	v, err := vault.Open(strings.Repeat("5a", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	rp := runpodfake.New(secretKey)
	t.Cleanup(rp.Close)
	return &secretWorld{t: t, ctx: context.Background(), dir: dir, dbPath: filepath.Join(dir, "ledger.db"),
		fake: tgfake.New(t, "42:TEST"), logs: &syncBuffer{},
		conns: &slowConns{runpodConns: &runpodConns{vault: v, fake: rp}, entered: make(chan struct{}, 1), gate: make(chan struct{})}}
}

// noKeyIn fails if a file in the world's directory (the database, its
// log, a backup) holds the part of the key never shown.
func (w *secretWorld) noKeyIn(when string) {
	w.t.Helper()
	secret := []byte(secretKey[:len(secretKey)-4])
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(w.dir, e.Name()))
		if err != nil {
			continue // removed meanwhile (the -shm at close)
		}
		if bytes.Contains(b, secret) {
			w.t.Errorf("%s: %s holds the API key", when, e.Name())
		}
	}
}

// TestConnect_BackupDuringSlowCheck: while a slow platform holds the
// check of /connect's key, the update is stored in the inbox. A backup
// taken then (the store's Backup, which the nightly backups and
// `gpuledger backup` use), the database file and its write-ahead log
// hold no byte of the key; once the check ends the key is stored (sealed)
// and the answer is the usual one.
func TestConnect_BackupDuringSlowCheck(t *testing.T) {
	for name, sealed := range map[string]bool{"memory": false, "sealed": true} {
		t.Run(name, func(t *testing.T) {
			w := newSecretWorld(t)
			var sealer telegram.Sealer
			if sealed {
				sealer = w.conns.vault
			}
			w.start(sealer)
			w.fake.SendText(42, 42, "/start")
			waitFor(t, "the welcome", func() bool { return len(w.fake.Messages(42)) == 1 })
			w.fake.SendText(42, 42, "/connect runpod "+secretKey)
			select {
			case <-w.conns.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the check never began")
			}
			if err := w.db.Backup(w.ctx, filepath.Join(w.dir, "backup.db")); err != nil {
				t.Fatal(err)
			}
			w.noKeyIn("while the check is held")
			close(w.conns.gate)
			waitFor(t, "the reply to /connect", func() bool { return len(w.fake.Messages(42)) == 2 })
			if reply := w.fake.Messages(42)[1].Text; !strings.Contains(reply, "✓") || !strings.Contains(reply, "…WXYZ") {
				t.Errorf("reply %q, want the key stored", reply)
			}
			if cs, err := w.db.Connectors(w.ctx, 42); err != nil || len(cs) != 1 {
				t.Fatalf("connectors %+v, %v", cs, err)
			}
			w.stop()
			w.noKeyIn("after the server stopped")
			if strings.Contains(w.logs.String(), secretKey[:len(secretKey)-4]) {
				t.Errorf("a log line holds the API key:\n%s", w.logs.String())
			}
		})
	}
}

// TestConnect_CrashDuringCheck: the server stops (its handling cut off,
// as a crash would) while the platform holds the check, and starts again
// on the same database. With the text sealed (the server's wiring), the
// next start finishes the /connect: the key is checked and stored and the
// user need not send it again. Without a sealer, nothing of the key was
// stored: the next start tells the user to send it again, and no key is
// stored. So it is when the next start has another secret, which does not
// open the sealed text.
func TestConnect_CrashDuringCheck(t *testing.T) {
	other, err := vault.Open(strings.Repeat("c3", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                string
		sealed, otherSecret bool
	}{{"memory", false, false}, {"sealed", true, false}, {"sealed, another secret at the restart", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			w := newSecretWorld(t)
			var sealer telegram.Sealer
			if c.sealed {
				sealer = w.conns.vault
			}
			w.start(sealer)
			w.fake.SendText(42, 42, "/start")
			waitFor(t, "the welcome", func() bool { return len(w.fake.Messages(42)) == 1 })
			w.fake.SendText(42, 42, "/connect runpod "+secretKey)
			select {
			case <-w.conns.entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the check never began")
			}
			w.stop()
			w.noKeyIn("after the cut")
			if n := len(w.fake.Messages(42)); n != 1 {
				t.Fatalf("%d messages before the restart, want the welcome only", n)
			}

			close(w.conns.gate)
			if c.otherSecret {
				sealer = other
			}
			w.start(sealer)
			waitFor(t, "the answer after the restart", func() bool { return len(w.fake.Messages(42)) == 2 })
			reply := w.fake.Messages(42)[1].Text
			cs, err := w.db.Connectors(w.ctx, 42)
			if err != nil {
				t.Fatal(err)
			}
			if c.sealed && !c.otherSecret {
				if !strings.Contains(reply, "…WXYZ") || len(cs) != 1 {
					t.Errorf("reply %q, connectors %+v: want the /connect finished", reply, cs)
				}
			} else {
				if !strings.Contains(reply, "send") || len(cs) != 0 {
					t.Errorf("reply %q, connectors %+v: want the user asked to send it again, nothing stored", reply, cs)
				}
			}
			w.stop()
			w.noKeyIn("after the restart")
		})
	}
}

// TestConnect_Caption: /connect sent as the caption of a photo or a
// document is handled as the same text would be: the key is checked and
// stored, the message that shows it is deleted from the chat, and nothing
// of it is in the database files. A photo whose caption is not a command
// still gets the hint that the bot reads text, and is left alone.
func TestConnect_Caption(t *testing.T) {
	w := newSecretWorld(t)
	close(w.conns.gate)
	w.start(nil)
	w.fake.SendText(42, 42, "/start")
	waitFor(t, "the welcome", func() bool { return len(w.fake.Messages(42)) == 1 })

	w.fake.SendPhoto(42, 42, "my rig")
	waitFor(t, "the answer to a photo", func() bool { return len(w.fake.Messages(42)) == 2 })
	if d := w.fake.Deleted(42); len(d) != 0 {
		t.Errorf("a photo captioned %q was deleted: %v", "my rig", d)
	}

	for i, send := range []func() int{
		func() int { return w.fake.SendPhoto(42, 42, "/connect runpod "+secretKey) },
		func() int {
			return w.fake.SendDocument(42, 42, "key.txt", "/connect@"+tgfake.BotUsername+" runpod "+secretKey)
		},
	} {
		before := len(w.fake.Messages(42))
		send()
		waitFor(t, "the reply to /connect in a caption", func() bool { return len(w.fake.Messages(42)) == before+1 })
		reply := w.fake.Messages(42)[before].Text
		if !strings.Contains(reply, "✓") || !strings.Contains(reply, "…WXYZ") || !strings.Contains(reply, "deleted your message") {
			t.Errorf("caption %d: reply %q, want the key stored and the message deleted", i, reply)
		}
		if d := w.fake.Deleted(42); len(d) != i+1 {
			t.Errorf("caption %d: deleted %v, want the captioned message deleted", i, d)
		}
	}
	if cs, err := w.db.Connectors(w.ctx, 42); err != nil || len(cs) != 1 {
		t.Fatalf("connectors %+v, %v", cs, err)
	}
	w.noKeyIn("after the captions")
	w.stop()
	w.noKeyIn("after the server stopped")
}

// TestConnect_CaptionNotACommand: a key in a caption that is not itself a
// command ("key: /connect runpod KEY") is not run, but its message is
// deleted all the same and nothing of it reaches the database files.
func TestConnect_CaptionNotACommand(t *testing.T) {
	w := newSecretWorld(t)
	close(w.conns.gate)
	w.start(nil)
	w.fake.SendText(42, 42, "/start")
	waitFor(t, "the welcome", func() bool { return len(w.fake.Messages(42)) == 1 })
	w.fake.SendPhoto(42, 42, "key: /connect runpod "+secretKey)
	waitFor(t, "the answer to the photo", func() bool { return len(w.fake.Messages(42)) == 2 })
	if d := w.fake.Deleted(42); len(d) != 1 {
		t.Errorf("deleted %v, want the photo whose caption holds a key", d)
	}
	if cs, err := w.db.Connectors(w.ctx, 42); err != nil || len(cs) != 0 {
		t.Errorf("connectors %+v, %v: want none (not a command)", cs, err)
	}
	w.noKeyIn("after the photo")
}
