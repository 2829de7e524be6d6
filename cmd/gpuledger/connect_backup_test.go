package main_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
)

// TestServe_ConnectKeyNotInBackup runs the real server against the fake
// Bot API and a RunPod that holds every call until the test lets it go.
// While the check of a /connect's key is held (the update is stored in the
// inbox by then), `gpuledger backup` is run as an operator would: the
// backup, the database file and its write-ahead log hold no byte of the
// key. The server is then killed mid-check (SIGKILL) and started again:
// the /connect finishes from its sealed text, and still no file holds the
// key.
func TestServe_ConnectKeyNotInBackup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server binary; run without -short")
	}
	const key = "rpa_BACKUPDURINGCHECK0123456789QRST"
	bin := buildServer(t)
	fake := tgfake.New(t, "4343:backup-test-token")
	rp := runpodfake.New(key)
	t.Cleanup(rp.Close)
	held := make(chan struct{}, 16)
	gate := make(chan struct{})
	target, _ := url.Parse(rp.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case held <- struct{}{}:
		default:
		}
		select {
		case <-gate:
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()

	dir := t.TempDir()
	dbPath := filepath.Join(dir, "gpuledger.db")
	env := append(os.Environ(),
		"GPULEDGER_DB="+dbPath,
		"GPULEDGER_SECRET=",
		"TELEGRAM_BOT_TOKEN="+fake.Token(),
		"TELEGRAM_API_ENDPOINT="+fake.Endpoint(),
		"GPULEDGER_ALLOWED_USERS=42",
		"GPULEDGER_LISTEN=127.0.0.1:0",
		"GPULEDGER_LOG_FORMAT=json",
		"GPULEDGER_LOG_LEVEL=debug",
		"GPULEDGER_TZ=UTC",
		"GPULEDGER_RUNPOD_URL="+slow.URL+"/v1",
		"GPULEDGER_RUNPOD_GRAPHQL_URL="+slow.URL+"/graphql",
	)
	logPath := filepath.Join(dir, "server.log")
	start := func() *exec.Cmd { return startServe(t, bin, dir, env) }
	secret := []byte(key[:len(key)-4]) // the part never shown
	noKey := func(when string) {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if bytes.Contains(b, secret) {
				t.Errorf("%s: %s holds the API key", when, e.Name())
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	waitHeld := func() {
		t.Helper()
		select {
		case <-held:
		case <-ctx.Done():
			t.Fatalf("the key's check never reached the platform (log in %s)", logPath)
		}
	}

	srv := start()
	fake.SendText(42, 42, "/connect runpod "+key)
	waitHeld()
	cmd := exec.CommandContext(ctx, bin, "backup", filepath.Join(dir, "during-check.db"))
	cmd.Env, cmd.Dir = env, dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gpuledger backup: %v\n%s", err, out)
	}
	noKey("while the check is held")

	// A crash mid-check, then a start with the same secret (the key file).
	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	noKey("after the crash")
	close(gate)
	start()
	if err := fake.WaitFor(ctx, func() bool {
		for _, m := range fake.Messages(42) {
			if strings.Contains(m.Text, "…QRST") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("the /connect was not finished after the restart: %v; messages %+v (log in %s)", err, fake.Messages(42), logPath)
	}
	noKey("after the restart")
}
