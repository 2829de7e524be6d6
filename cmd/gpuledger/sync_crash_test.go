package main_test

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestCrash_SyncNoticeAfterRestart runs the real server with a fake
// Lambda and a fake Bot API. An instance appears while Telegram is down: the
// sync writes the rental, its "logged as" line cannot go out, and the
// server is killed with SIGKILL. The next server, with Telegram back,
// sends the line once: it was written with the rental (the outbox), not
// held in the memory of the process that died.
func TestCrash_SyncNoticeAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server binary twice; run without -short")
	}
	const (
		user   = int64(1001)
		lamKey = "secret_crashtest_0123456789abcdefABCDEF"
	)
	bin := buildServer(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "gpuledger.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureUser(ctx, ledger.User{ID: user, Lang: "en", TZ: "UTC", Settings: ledger.DefaultSettings()}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	lf := lambdafake.New(lamKey)
	t.Cleanup(lf.Close)
	fake := tgfake.New(t, "4242:sync-crash-token")
	env := append(os.Environ(), "GPULEDGER_DB="+dbPath, "TELEGRAM_BOT_TOKEN="+fake.Token(),
		"TELEGRAM_API_ENDPOINT="+fake.Endpoint(), "GPULEDGER_ALLOWED_USERS=1001", "GPULEDGER_LISTEN=127.0.0.1:0",
		"GPULEDGER_LOG_FORMAT=json", "GPULEDGER_TZ=UTC", "GPULEDGER_SYNC=10s",
		"GPULEDGER_LAMBDA_URL="+lf.URL)
	start := func() *exec.Cmd { return startServe(t, bin, dir, env) }
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if ok() {
				return
			}
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		t.Fatalf("no %s within %s; server log:\n%s", what, d, log[max(0, len(log)-4000):])
	}
	count := func(frag string) int {
		n := 0
		for _, m := range fake.Messages(user) {
			if strings.Contains(m.Text, frag) {
				n++
			}
		}
		return n
	}

	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	srv := start()
	fake.SendText(user, user, "/connect lambda "+lamKey)
	waitFor("reply to /connect", 30*time.Second, func() bool { return count("Connected") > 0 })
	waitFor("first sync round", 30*time.Second, func() bool {
		var n int
		raw.QueryRow(`SELECT count(*) FROM connectors WHERE last_sync_at IS NOT NULL`).Scan(&n)
		return n == 1
	})

	// Telegram goes down; the instance appears; the sync logs it.
	fake.SetDown(true)
	lf.SetInstances(lambdafake.Instance{ID: "crashinst1", Name: "trainer", Status: "active", Region: "us-east-1",
		TypeName: "gpu_1x_h100_pcie", Description: "1x H100 (80 GB PCIe)", GPUDescription: "H100 (80 GB PCIe)", Price: 249, GPUs: 1})
	waitFor("rental of the instance", 40*time.Second, func() bool {
		var n int
		raw.QueryRow(`SELECT count(*) FROM rentals WHERE platform_id = 'crashinst1'`).Scan(&n)
		return n == 1
	})
	srv.Process.Kill() // SIGKILL, the line not sent
	srv.Wait()
	if n := count("logged as"); n != 0 {
		t.Fatalf("the line went out while Telegram was down (%d)", n)
	}

	fake.SetDown(false)
	start()
	waitFor(`"logged as" line after the restart`, 40*time.Second, func() bool { return count("logged as <b>trainer</b>") > 0 })
	time.Sleep(12 * time.Second) // another round: it is not sent again
	if n := count("logged as <b>trainer</b>"); n != 1 {
		t.Fatalf(`the "logged as" line was sent %d times, want once`, n)
	}
}
