package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// seeded returns the path of a closed database file with some rentals and
// charges in it, its WAL checkpointed into the file.
func seeded(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	mustUser(t, db, 1)
	for i := range 200 {
		mustRent(t, db, 1, fmt.Sprintf("box%d", i), t0)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatalf("%s-wal left after Close: the file may not hold every page", path)
	}
	return path
}

// immutable makes path unwritable even for root: chattr +i where the
// tests run as root (chmod does not stop root), chmod 0444 otherwise. It
// skips the test when neither is possible.
func immutable(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		mode := os.FileMode(0o444)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			mode = 0o555
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("running as root, where chmod does not stop writes, and chattr +i failed (%v: %s): "+
			"run as a normal user, or on a file system with the immutable attribute and CAP_LINUX_IMMUTABLE", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

func wantUnusable(t *testing.T, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Open succeeded, want a refusal")
	}
	t.Logf("refused: %v", err)
	if !errors.Is(err, sqlite.ErrUnusable) {
		t.Errorf("error %v does not wrap ErrUnusable", err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func TestOpen_RefusesUnusableFile(t *testing.T) {
	ctx := context.Background()
	t.Run("ErrEmptyFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		wantUnusable(t, err, "empty file (0 bytes)", "restore the latest backup", "docs/deploy.md")
		if fi, _ := os.Stat(path); fi.Size() != 0 {
			t.Errorf("the refused file grew to %d bytes", fi.Size())
		}
	})
	t.Run("OKMissingFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatalf("a missing file is a new ledger: %v", err)
		}
		db.Close()
	})
	t.Run("ErrCorruptPage", func(t *testing.T) {
		path := seeded(t)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		// Garbage over a page in the second half of the file (page size
		// 4096): a table's leaf or interior page.
		garbage := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
		if _, err := f.WriteAt(garbage, (fi.Size()/4096/2)*4096); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		wantUnusable(t, err, "is damaged", "restore the latest backup")
	})
	t.Run("ErrGarbageHeader", func(t *testing.T) {
		path := seeded(t)
		f, _ := os.OpenFile(path, os.O_RDWR, 0)
		f.WriteAt([]byte(strings.Repeat("garbage!", 16)), 0)
		f.Close()
		_, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		wantUnusable(t, err, "not a gpuledger database", "restore the latest backup")
	})
	t.Run("ErrReadOnlyFile", func(t *testing.T) {
		path := seeded(t)
		immutable(t, path)
		_, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		wantUnusable(t, err, "cannot be written", "permissions")
	})
	t.Run("ErrReadOnlyDirectory", func(t *testing.T) {
		// The file can be written, but the -wal and -shm files beside it
		// cannot be created.
		path := seeded(t)
		immutable(t, filepath.Dir(path))
		_, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		wantUnusable(t, err, "directory", "permissions")
	})
	t.Run("OKAfterRefusals", func(t *testing.T) {
		// A refused start changes nothing: the good file opens with its rentals.
		path := seeded(t)
		db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rs, err := db.LiveRentals(ctx)
		if err != nil || len(rs) != 200 {
			t.Fatalf("LiveRentals = %d, %v", len(rs), err)
		}
		_ = ledger.Running
	})
}
