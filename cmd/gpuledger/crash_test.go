package main_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// buildServer compiles cmd/gpuledger into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: this test builds the real binary; put Go on PATH to run it")
	}
	bin := filepath.Join(t.TempDir(), "gpuledger")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestCrash_UpdatesAppliedExactlyOnce runs the real server against a fake
// Bot API, kills it with SIGKILL twice in the middle of a stream of
// updates, restarts it, and checks that every update was applied exactly
// once: none lost (Telegram keeps unconfirmed updates and redelivers them)
// and none applied twice (the update's key is stored in the transaction
// that applies it).
func TestCrash_UpdatesAppliedExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server binary several times; run without -short")
	}
	bin := buildServer(t)
	fake := tgfake.New(t, "4242:crash-test-token")
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "gpuledger.db")

	const users, perUser = 30, 40
	var ids []string
	for u := range users {
		ids = append(ids, fmt.Sprint(1001+u))
	}
	env := append(os.Environ(),
		"GPULEDGER_DB="+dbPath,
		"TELEGRAM_BOT_TOKEN="+fake.Token(),
		"TELEGRAM_API_ENDPOINT="+fake.Endpoint(),
		"GPULEDGER_ALLOWED_USERS="+strings.Join(ids, ","),
		"GPULEDGER_LISTEN=127.0.0.1:0",
		"GPULEDGER_LOG_FORMAT=json",
		"GPULEDGER_TZ=UTC",
	)
	start := func() *exec.Cmd { return startServe(t, bin, dir, env) }
	kill := func(cmd *exec.Cmd) {
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatalf("kill: %v", err)
		}
		cmd.Wait()
	}

	// The whole stream is queued at once; the server works through it
	// while it is killed and restarted.
	notes := make(map[string]int64)
	for i := range perUser {
		for u := range users {
			uid := int64(1001 + u)
			note := fmt.Sprintf("u%d-n%d", uid, i)
			notes[note] = uid
			fake.SendText(uid, uid, fmt.Sprintf("/charge autodl 0.01 %s", note))
		}
	}
	total := users * perUser

	srv := start()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// A plain connection counts the charges while the server writes
	// (opening the store for each look would be too slow to stop midway).
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	applied := 0
	for range 2 {
		// Kill once a quarter of what is left has been applied since the
		// last start (answers lag behind: they are paced per chat and
		// merged). Relative to the last kill, so a restart that works fast
		// through the backlog is still caught midway.
		want := applied + (total-applied)/4
		if err := fake.WaitFor(ctx, func() bool { return fake.Confirmed() > 0 }); err != nil {
			t.Fatalf("no update fetched: %v (log in %s)", err, dir)
		}
		for {
			var n int
			if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM charges`).Scan(&n); err == nil && n >= want {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("waiting for progress before the kill: %v (log in %s)", ctx.Err(), dir)
			}
			time.Sleep(5 * time.Millisecond)
		}
		kill(srv)
		applied, _ = countApplied(ctx, dbPath, ids)
		t.Logf("SIGKILL with %d of %d updates applied, %d confirmed to Telegram", applied, total, fake.Confirmed())
		if applied >= total {
			t.Fatalf("the stream was already fully applied at the kill: the test would prove nothing")
		}
		srv = start()
	}
	// Wait until every charge is in the ledger, then a little longer so
	// that a duplicate, if any, would have time to appear.
	count := func() (map[string]int, error) {
		db, err := sqlite.Open(ctx, dbPath)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		seen := make(map[string]int)
		for _, id := range ids {
			var uid int64
			fmt.Sscan(id, &uid)
			b, err := db.Book(ctx, uid)
			if err != nil {
				continue // the user may not exist yet
			}
			for _, c := range b.Charges {
				seen[c.Note]++
			}
		}
		return seen, nil
	}
	var seen map[string]int
	for {
		var err error
		seen, err = count()
		if err != nil {
			t.Fatalf("reading the ledger: %v", err)
		}
		if len(seen) >= total {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("only %d of %d charges applied after restarts (log in %s)", len(seen), total, dir)
		case <-time.After(200 * time.Millisecond):
		}
	}
	time.Sleep(time.Second)
	seen, _ = count()
	for note := range notes {
		if seen[note] != 1 {
			t.Errorf("charge %s applied %d times, want exactly 1", note, seen[note])
		}
	}
	if len(seen) != total {
		t.Errorf("ledger holds %d distinct charges, want %d", len(seen), total)
	}
	// Every charge is answered, including those applied just before a
	// kill: the answer is kept with the stored update, or rebuilt from
	// the ledger when the kill came between the change and the answer.
	unanswered := func() []string {
		var missing []string
		for note, uid := range notes {
			found := false
			for _, m := range fake.Messages(uid) {
				if strings.Contains(m.Text, note) {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, note)
			}
		}
		return missing
	}
	for len(unanswered()) > 0 && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
	}
	if missing := unanswered(); len(missing) > 0 {
		t.Errorf("%d charges never answered after the restarts: %v", len(missing), missing)
	}
	kill(srv)

	check, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	var msg string
	if err := check.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&msg); err != nil || msg != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", msg, err)
	}
}

// countApplied counts the charges in the ledger of the users in ids.
func countApplied(ctx context.Context, dbPath string, ids []string) (int, error) {
	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	n := 0
	for _, id := range ids {
		var uid int64
		fmt.Sscan(id, &uid)
		if b, err := db.Book(ctx, uid); err == nil {
			n += len(b.Charges)
		}
	}
	return n, nil
}

// startServe starts `bin serve` in dir with env, its output appended to
// dir/server.log (which survives the kills of a crash test), and kills it
// when the test ends if it still runs.
func startServe(t *testing.T, bin, dir string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env, cmd.Dir = env, dir
	logf, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}
