//go:build unix

package sqlite_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// withUmask sets the process umask for the test. The umask is the
// process's: the test must not run in parallel with others.
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Error(err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %#o, want %#o", filepath.Base(path), got, want)
	}
}

// TestOpen_OwnerOnly checks that the database file, its -wal and -shm,
// and a backup are created readable by their owner only, whatever the
// umask, and that an existing file with a looser mode is tightened at
// open, with one warning.
func TestOpen_OwnerOnly(t *testing.T) {
	ctx := context.Background()
	for _, mask := range []int{0, 0o022} {
		t.Run("umask"+map[int]string{0: "0", 0o022: "022"}[mask], func(t *testing.T) {
			withUmask(t, mask)
			dir := t.TempDir()
			path := filepath.Join(dir, "ledger.db")
			db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustUser(t, db, 1)
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				wantMode(t, p, 0o600)
			}
			backup := filepath.Join(dir, "backup.db")
			if err := db.Backup(ctx, backup); err != nil {
				t.Fatal(err)
			}
			wantMode(t, backup, 0o600)
			if err := db.Backup(ctx, backup); err == nil {
				t.Error("a second backup to the same file succeeded; want it refused")
			}
		})
	}
	t.Run("LooseTightened", func(t *testing.T) {
		withUmask(t, 0o022)
		path := filepath.Join(t.TempDir(), "ledger.db")
		db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		mustUser(t, db, 1)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		if err := os.Chmod(path, 0o664); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		db, err = sqlite.Open(ctx, path, sqlite.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		wantMode(t, path, 0o600)
		for _, p := range []string{path + "-wal", path + "-shm"} {
			if _, err := os.Stat(p); err == nil {
				wantMode(t, p, 0o600)
			}
		}
		if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "0664") {
			t.Errorf("want one warning naming the old mode 0664, got %d:\n%s", n, logs.String())
		}
	})
}
