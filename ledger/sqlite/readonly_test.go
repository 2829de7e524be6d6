package sqlite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestOpenReadOnly checks the store export and backup open: it reads
// and backs up a ledger without changing a byte of its file, refuses
// writes with an error, and refuses a file that is missing, empty, or
// not a gpuledger database, changing nothing.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ledger.db")
		w, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		mustUser(t, w, 1)
		if err := w.SetMeta(ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
		w.Close()
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ro, err := sqlite.OpenReadOnly(ctx, path, sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		if v, _, err := ro.Meta(ctx, "k"); err != nil || v != "v" {
			t.Errorf("Meta(k) = %q, %v", v, err)
		}
		if err := ro.SetMeta(ctx, "k", "changed"); err == nil {
			t.Error("SetMeta on a read-only store succeeded")
		}
		if err := ro.Backup(ctx, filepath.Join(dir, "copy.db")); err != nil {
			t.Errorf("Backup: %v", err)
		}
		if err := ro.Close(); err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Error("opening read-only, reading and backing up changed the database file")
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		dir := t.TempDir()
		empty := filepath.Join(dir, "empty.db")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		plain := filepath.Join(dir, "plain.db")
		// A SQLite file that is not a gpuledger ledger: no migrations.
		w, err := sqlite.Open(ctx, filepath.Join(dir, "real.db"), sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		if err := os.WriteFile(plain, []byte("not a database at all, just text that is long enough to be read as a header......................................................."), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ path, want string }{
			{filepath.Join(dir, "missing.db"), "does not exist"},
			{empty, "empty"},
			{plain, "not a gpuledger database"},
		} {
			_, err := sqlite.OpenReadOnly(ctx, c.path, sqlite.WithLogger(quiet))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("OpenReadOnly(%s) = %v, want an error saying %q", filepath.Base(c.path), err, c.want)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
			t.Error("OpenReadOnly created the missing file")
		}
	})
}
