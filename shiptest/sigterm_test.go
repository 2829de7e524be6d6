//go:build ship

package shiptest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestServe_SIGTERMDuringBurst sends SIGTERM to the real server while it
// works through a burst of chat updates (as `docker stop` does). The
// server must exit 0 within a few seconds, every answer it sent must
// stand for an applied charge, and a restart must apply the rest (those
// confirmed to Telegram come from the server's inbox: Telegram will not
// send them again), each exactly once, and answer every one.
func TestServe_SIGTERMDuringBurst(t *testing.T) {
	bin := build(t, "./cmd/gpuledger")
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "gpuledger.db")
	fake := tgfake.New(t, "4242:sigterm-test-token")

	const users, perUser = 25, 40
	var ids []string
	for u := range users {
		ids = append(ids, fmt.Sprint(2001+u))
	}
	env := []string{
		"GPULEDGER_DB=" + dbPath,
		"TELEGRAM_BOT_TOKEN=" + fake.Token(),
		"TELEGRAM_API_ENDPOINT=" + fake.Endpoint(),
		"GPULEDGER_ALLOWED_USERS=" + strings.Join(ids, ","),
	}
	noteOf := map[int]string{} // update ID -> the charge's note
	for i := range perUser {
		for u := range users {
			uid := int64(2001 + u)
			note := fmt.Sprintf("u%d-n%d", uid, i)
			noteOf[fake.SendText(uid, uid, "/charge autodl 0.01 "+note)] = note
		}
	}
	total := len(noteOf)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := startServer(t, bin, dir, env)
	replies := func() int {
		n := 0
		for _, id := range ids {
			var chat int64
			fmt.Sscan(id, &chat)
			n += len(fake.Messages(chat))
		}
		return n
	}
	if err := waitFor(ctx, func() bool { return replies() >= 1 }); err != nil {
		t.Fatalf("no progress before the signal: %v\n%s", err, readFile(srv.log))
	}
	sent := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the server did not exit within 10 s of SIGTERM:\n%s", readFile(srv.log))
	}
	took := time.Since(sent)
	if srv.err != nil { // an *exec.ExitError for a non-zero status
		t.Fatalf("exit after SIGTERM: %v; want status 0\n%s", srv.err, readFile(srv.log))
	}
	confirmed := fake.Confirmed()
	applied := charges(t, ctx, dbPath, ids)
	t.Logf("SIGTERM after %d replies: exit 0 in %s; %d of %d applied, updates below %d confirmed",
		replies(), took.Round(time.Millisecond), len(applied), total, confirmed)
	if took > 5*time.Second {
		t.Errorf("shutdown took %s; want a few seconds", took)
	}
	if len(applied) >= total {
		t.Fatalf("the whole burst was applied before the signal: the test proves nothing")
	}
	// A reply is an acknowledgement the user sees: every charge it names
	// is applied, once.
	for _, note := range answered(fake, ids, noteOf) {
		if applied[note] != 1 {
			t.Errorf("%s was answered but applied %d times", note, applied[note])
		}
	}
	log := readFile(srv.log)
	if strings.Contains(log, fake.Token()) {
		t.Error("the server log holds the Telegram token")
	}
	if strings.Contains(log, "cancelling them") {
		t.Errorf("updates in flight were cancelled at shutdown:\n%s", log)
	}

	// The rest arrive after a restart, each once.
	srv = startServer(t, bin, dir, env)
	if err := waitFor(ctx, func() bool { return len(charges(t, ctx, dbPath, ids)) >= total }); err != nil {
		t.Fatalf("after the restart only %d of %d applied\n%s", len(charges(t, ctx, dbPath, ids)), total, readFile(srv.log))
	}
	time.Sleep(500 * time.Millisecond) // room for a duplicate to appear
	srv.cmd.Process.Signal(syscall.SIGTERM)
	<-srv.done
	if srv.err != nil {
		t.Errorf("second exit: %v", srv.err)
	}
	for note, n := range charges(t, ctx, dbPath, ids) {
		if n != 1 {
			t.Errorf("%s applied %d times", note, n)
		}
	}
	if got := answered(fake, ids, noteOf); len(got) != total {
		t.Errorf("%d of %d charges answered after the restart", len(got), total)
	}
}

// answered returns the notes of noteOf that appear in the bot's messages
// to the users in ids (answers may be merged several to a message).
func answered(fake *tgfake.Server, ids []string, noteOf map[int]string) []string {
	var text strings.Builder
	for _, id := range ids {
		var chat int64
		fmt.Sscan(id, &chat)
		for _, m := range fake.Messages(chat) {
			text.WriteString(m.Text)
			text.WriteString("\n")
		}
	}
	all := text.String()
	var out []string
	for _, note := range noteOf {
		if strings.Contains(all, note+"\n") || strings.Contains(all, note+" ") {
			out = append(out, note)
		}
	}
	return out
}

// charges counts each charge note in the ledgers of the users in ids.
func charges(t *testing.T, ctx context.Context, dbPath string, ids []string) map[string]int {
	t.Helper()
	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := map[string]int{}
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
	return seen
}
