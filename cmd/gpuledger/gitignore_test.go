package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitignore_ServerFilesInCheckout runs the server as the README says,
// in a checkout (a git work tree holding the repository's .gitignore),
// with the defaults: the database, its log, the vault's key file and the
// console's files all land in the working directory. None of them may be
// one `git add .` away from a commit: the key file opens every platform
// key in the database, and the rest is the user's ledger.
func TestGitignore_ServerFilesInCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH")
	}
	ignore, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildServer(t)
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), ignore, 0o600); err != nil {
		t.Fatal(err)
	}
	// The README's defaults: no GPULEDGER_DB, no GPULEDGER_SECRET.
	env := []string{"GPULEDGER_DB=", "GPULEDGER_SECRET=", "TELEGRAM_BOT_TOKEN=", "GPULEDGER_LISTEN=127.0.0.1:0",
		"GPULEDGER_AGENT_BINARY=" + filepath.Join(dir, "no-agent-here"), "GPULEDGER_TZ=UTC"}
	code, out, errs := runBin(t, bin, dir, env, "/rent box1 autodl 4090 1.88/h\n/summary\n/export\n")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "gpuledger.key")); err != nil {
		t.Fatalf("the server wrote no key file beside the database in its working directory: %v", err)
	}
	var written []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(path, string(filepath.Separator)+".git"+string(filepath.Separator)) {
			rel, _ := filepath.Rel(dir, path)
			written = append(written, rel)
		}
		return nil
	})
	if got := strings.TrimSpace(git("status", "--porcelain", "--untracked-files=all")); got != "?? .gitignore" {
		t.Errorf("after a run, `git add .` would commit more than .gitignore:\n%s\n(the files in the working directory: %q)", got, written)
	}
}
