package sqlite_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// randomText returns n bytes of hex that no page compresses or shares.
func randomText(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestDB_DiskFull fills a real file system (a small tmpfs) under a
// running store: the write that meets the full disk fails with EFULL and
// a clear message, and once a few megabytes are freed, writes go on
// without reopening the store, even many more of them than the freed
// space would hold if the write-ahead log kept growing toward its
// checkpoint (which needs room of its own).
func TestDB_DiskFull(t *testing.T) {
	ctx := context.Background()
	dir := testkit.SmallDisk(t, 16<<20)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUser(t, db, 1)
	filler := testkit.FillDisk(t, dir, "filler")
	testkit.FreeDisk(t, filler, 300<<10)

	var ferr error
	for i := 0; i < 1000 && ferr == nil; i++ {
		ferr = db.SetMeta(ctx, fmt.Sprintf("ballast:%d", i%5), randomText(40<<10))
	}
	wantCode(t, ferr, ledger.EFULL)
	if msg := userText(ferr); !strings.Contains(msg, "disk") || !strings.Contains(msg, "full") {
		t.Errorf("the full disk's message %q does not say the disk is full", msg)
	}

	testkit.FreeDisk(t, filler, 2600<<10)
	// Each write replaces one of five values: the ledger does not grow,
	// but 300 writes put about 12 MB through the write-ahead log, far
	// more than the 2.6 MB freed.
	for i := range 300 {
		if err := db.SetMeta(ctx, fmt.Sprintf("ballast:%d", i%5), randomText(40<<10)); err != nil {
			t.Fatalf("write %d after freeing 2.6 MB (%d KB free now): %v", i, testkit.DiskFree(t, dir)>>10, err)
		}
	}
	if got, _, err := db.Meta(ctx, "ballast:0"); err != nil || len(got) != 40<<10 {
		t.Fatalf("Meta after the writes: %d bytes, %v", len(got), err)
	}
	if fi, err := os.Stat(db.Path() + "-wal"); err == nil && fi.Size() > 4<<20 {
		t.Errorf("the write-ahead log is %d KB after its checkpoints, want it kept small", fi.Size()>>10)
	}
}

// TestOpenReadOnly_DiskFull opens a ledger on a completely full disk for
// reading, as export and backup do, and takes a backup of it to another
// disk: after the server closed it cleanly (no -wal or -shm left, and
// none can be created at full size), and while the server still has it
// open with recent writes only in its write-ahead log.
func TestOpenReadOnly_DiskFull(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		closeWriter bool
	}{{"Closed", true}, {"ServerRunning", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testkit.SmallDisk(t, 8<<20)
			path := filepath.Join(dir, "ledger.db")
			w, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			mustUser(t, w, 1)
			for i := range 200 {
				if err := w.SetMeta(ctx, fmt.Sprintf("k%d", i%20), randomText(2000)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.SetMeta(ctx, "last", "the latest write"); err != nil {
				t.Fatal(err)
			}
			if tc.closeWriter {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			testkit.FillDisk(t, dir, "filler")
			if err := w.SetMeta(ctx, "more", randomText(64<<10)); !tc.closeWriter && err == nil {
				t.Fatal("a write on the full disk succeeded")
			}

			ro, err := sqlite.OpenReadOnly(ctx, path, sqlite.WithLogger(quiet))
			if err != nil {
				t.Fatalf("OpenReadOnly on a full disk: %v", err)
			}
			defer ro.Close()
			if users, err := ro.Users(ctx); err != nil || len(users) != 1 {
				t.Fatalf("Users: %v, %v", users, err)
			}
			if v, _, err := ro.Meta(ctx, "last"); err != nil || v != "the latest write" {
				t.Fatalf("Meta(last) = %q, %v: want the latest write", v, err)
			}
			copyPath := filepath.Join(t.TempDir(), "copy.db")
			if err := ro.Backup(ctx, copyPath); err != nil {
				t.Fatalf("Backup to another disk: %v", err)
			}
			c, err := sqlite.OpenReadOnly(ctx, copyPath, sqlite.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if v, _, err := c.Meta(ctx, "last"); err != nil || v != "the latest write" {
				t.Fatalf("the backup's Meta(last) = %q, %v", v, err)
			}
		})
	}
}
