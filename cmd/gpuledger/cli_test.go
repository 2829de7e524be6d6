package main_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// runBin runs the built server with args in dir and returns its exit
// status, standard output and standard error.
func runBin(t *testing.T, bin, dir string, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runBinEnv(t, bin, dir, append(os.Environ(), env...), stdin, args...)
}

// TestCLI_Help checks that --help names every subcommand with an example
// and exits 0, that each subcommand's --help exits 0, and that a usage
// error exits 2 and points to --help.
func TestCLI_Help(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errs := runBin(t, bin, dir, nil, "", args...)
		if code != 0 {
			t.Errorf("%v: exit %d, want 0; stderr %q", args, code, errs)
		}
		for _, want := range []string{"serve", "export", "backup", "healthcheck", "version", "e.g.", "gpuledger backup /backups/ledger.db --db"} {
			if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
				t.Errorf("%v: the help does not mention %q:\n%s", args, want, out)
			}
		}
	}
	for _, sub := range []string{"serve", "export", "backup", "healthcheck"} {
		if code, _, errs := runBin(t, bin, dir, nil, "", sub, "--help"); code != 0 {
			t.Errorf("%s --help: exit %d, want 0; stderr %q", sub, code, errs)
		}
	}
	for _, args := range [][]string{{"frobnicate"}, {"backup"}, {"backup", "--nosuch"}, {"export", "--nosuch"}, {"--nosuch"}} {
		code, _, errs := runBin(t, bin, dir, []string{"GPULEDGER_DB=" + filepath.Join(dir, "none.db")}, "", args...)
		if code != 2 || !strings.Contains(errs, "--help") {
			t.Errorf("%v: exit %d, want 2 and a pointer to --help; stderr %q", args, code, errs)
		}
	}
}

// TestCLI_FlagsAfterArguments runs backup with its flag after the file
// name, and export with flags in either order.
func TestCLI_FlagsAfterArguments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "ledger.db")
	db, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureUser(context.Background(), ledger.User{ID: 7, TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// GPULEDGER_DB points elsewhere: only the flag names the database.
	env := []string{"GPULEDGER_DB=" + filepath.Join(dir, "absent.db")}
	for i, args := range [][]string{
		{"backup", "copy1.db", "--db", dbPath},
		{"backup", "--db", dbPath, "copy2.db"},
		{"backup", "--db=" + dbPath, "copy3.db"},
	} {
		code, out, errs := runBin(t, bin, dir, env, "", args...)
		want := filepath.Join(dir, "copy"+string(rune('1'+i))+".db")
		if code != 0 || !strings.Contains(out, "backup written") {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
			continue
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	code, out, errs := runBin(t, bin, dir, env, "", "export", "--format", "csv", "--db", dbPath)
	if code != 0 {
		t.Errorf("export with flags: exit %d stderr %q", code, errs)
	}
	if code, _, errs := runBin(t, bin, dir, env, "", "backup", "a.db", "b.db", "--db", dbPath); code != 2 || !strings.Contains(errs, "one backup file") {
		t.Errorf("two files: exit %d stderr %q, want 2 and one file asked for", code, errs)
	}
	_ = out
}

// TestConsole_AgentSummaryFiles runs the terminal console on a server
// with no agent binary to hand out: /agent must say so in the chat, with
// how to fix it, and still issue the token; /summary must be followed by
// its 14-day chart, as the nightly one is; the chart and an /export must
// be written outside the current directory, at a path the chat names.
func TestConsole_AgentSummaryFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	data, cwd := t.TempDir(), t.TempDir()
	env := []string{"GPULEDGER_DB=" + filepath.Join(data, "ledger.db"), "GPULEDGER_LISTEN=127.0.0.1:0",
		"GPULEDGER_AGENT_BINARY=" + filepath.Join(data, "no-agent-here"), "GPULEDGER_TZ=UTC"}
	in := "/rent box1 autodl 4090 1.88/h\n/agent box1\n/summary\n/export\n/settings lang=zh\n/agent box1\n"
	code, out, errs := runBin(t, bin, cwd, env, in)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if strings.Contains(out, "127.0.0.1:0/") {
		t.Errorf("the install command names port 0, not the hub's real port:\n%s", out)
	}
	for _, want := range []string{
		"install.sh?token=",      // the token is still issued
		"no agent binary",        // English warning
		"no-agent-here",          // where the server looks
		"GPULEDGER_AGENT_BINARY", // how to fix it
		"scripts/agent-build-portable.sh",
		"Docker image",
		"没有可下载的代理程序", // Chinese warning
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the console's output lacks %q:\n%s", want, out)
		}
	}
	var saved []string
	for _, line := range strings.Split(out, "\n") {
		if _, path, ok := strings.Cut(line, " saved: "); ok {
			saved = append(saved, strings.TrimSuffix(path, "]"))
		}
	}
	var photo, doc bool
	for _, p := range saved {
		photo = photo || strings.HasSuffix(p, ".png")
		doc = doc || strings.HasSuffix(p, ".csv")
		if !filepath.IsAbs(p) || strings.HasPrefix(p, cwd+string(filepath.Separator)) {
			t.Errorf("a file was saved at %q, in the current directory %s or not at an absolute path", p, cwd)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("saved file: %v", err)
		}
	}
	if !photo || !doc {
		t.Errorf("want the summary's chart (.png) and the export (.csv) saved, got %q:\n%s", saved, out)
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("the console wrote into the current directory: %v", ents)
	}
}

// TestConsole_UndoShowsInstance: /undo of an /adopt in the terminal
// console, served as serve wires the core and the scheduler, says the
// instance waits again and shows its card with its buttons anew.
func TestConsole_UndoShowsInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dbPath := filepath.Join(data, "ledger.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1, TZ: "UTC", CreatedAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	tok, _, err := db.IssueEnrolToken(ctx, 1, sha256.Sum256([]byte("enrol-test")), now)
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := db.Announce(ctx, ledger.Instance{UserID: 1, TokenID: tok.ID, Key: "runpod:abc123", Platform: "runpod", PlatformID: "abc123",
		Hostname: "pod-host", GPUModel: "A40", GPUCount: 1, BootAt: now.Add(-5 * time.Minute), LastSeen: now})
	if err != nil {
		t.Fatal(err)
	}
	// Its card was sent when it was announced.
	if err := db.SetInstanceCard(ctx, 1, in.ID, 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := []string{"GPULEDGER_DB=" + dbPath, "GPULEDGER_LISTEN=127.0.0.1:0", "GPULEDGER_TZ=UTC"}
	id := strconv.FormatInt(in.ID, 10)
	code, out, errs := runBin(t, bin, data, env, "/adopt "+id+" $0.50\n/undo\n")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	_, after, ok := strings.Cut(out, "undone: instance logged runpod-abc123")
	if !ok || !strings.Contains(after, "Instance "+id+" waits for an answer again: its card is below") ||
		!strings.Contains(after, "New instance on RunPod (ID abc123): 1× A40") || !strings.Contains(after, "Not mine") {
		t.Errorf("the console's output after /undo lacks the instance's card:\n%s", out)
	}
}
