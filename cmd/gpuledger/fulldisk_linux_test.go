package main_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestCLI_ExportBackupFullDisk runs the real export and backup commands
// on a ledger whose disk is completely full, as when the server has
// stopped writing: both only read, so both work, and the backup goes to
// another disk, owner-only. Once with the server's store closed (no -wal
// or -shm left, none can be created at full size), once with it still
// open and its last writes only in the write-ahead log.
func TestCLI_ExportBackupFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		closeServer bool
	}{{"Closed", true}, {"ServerRunning", false}} {
		t.Run(tc.name, func(t *testing.T) {
			disk := testkit.SmallDisk(t, 8<<20)
			dbPath := filepath.Join(disk, "gpuledger.db")
			db, err := sqlite.Open(ctx, dbPath, sqlite.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.EnsureUser(ctx, ledger.User{ID: 7, TZ: "UTC"}); err != nil {
				t.Fatal(err)
			}
			start := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
			if _, err := db.CreateRental(ctx, ledger.Action{UserID: 7, At: start}, ledger.Rental{
				Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
				Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
				Currency: ledger.CNY,
				Events:   []ledger.Event{{Kind: ledger.EventStart, At: start}},
			}); err != nil {
				t.Fatal(err)
			}
			if tc.closeServer {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			testkit.FillDisk(t, disk, "filler")

			env := []string{"GPULEDGER_DB=" + dbPath}
			code, out, errs := runBin(t, bin, t.TempDir(), env, "", "export", "--format", "csv", "--as-of", "2026-11-02 10:00")
			if code != 0 || !strings.Contains(out, "box1") {
				t.Errorf("export on a full disk: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			copyPath := filepath.Join(t.TempDir(), "copy.db")
			code, out, errs = runBin(t, bin, t.TempDir(), env, "", "backup", copyPath)
			if code != 0 || !strings.Contains(out, "backup written") {
				t.Fatalf("backup on a full disk to another disk: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			fi, err := os.Stat(copyPath)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("the backup has mode %#o, want 0600", fi.Mode().Perm())
			}
			c, err := sqlite.OpenReadOnly(ctx, copyPath)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if b, err := c.Book(ctx, 7); err != nil || len(b.Rentals) != 1 {
				t.Errorf("the backup's ledger: %v, %v", b.Rentals, err)
			}
		})
	}
}
