package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openLedger opens a real database with one user and one rental.
func openLedger(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1, TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	if _, err := db.CreateRental(ctx, ledger.Action{UserID: 1, At: start}, ledger.Rental{
		Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: start}},
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

func addCharge(ctx context.Context, db *sqlite.DB, i int) error {
	_, err := db.AddCharge(ctx, ledger.Action{UserID: 1, At: time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC)}, "box1",
		ledger.Charge{Amount: ledger.MustDecimal("0.01"), Note: fmt.Sprintf("c%06d", i)})
	return err
}

func TestBackupOptionsFromEnv(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		tz      string
		keep    int
		at      string
		wantErr string
	}{
		{"Defaults", nil, "", 7, "03:30", ""},
		{"Set", map[string]string{"GPULEDGER_BACKUP_KEEP": "30", "GPULEDGER_BACKUP_AT": "23:05"}, "Asia/Shanghai", 30, "23:05", ""},
		{"ErrKeep", map[string]string{"GPULEDGER_BACKUP_KEEP": "0"}, "", 0, "", "GPULEDGER_BACKUP_KEEP"},
		{"ErrKeepText", map[string]string{"GPULEDGER_BACKUP_KEEP": "seven"}, "", 0, "", "GPULEDGER_BACKUP_KEEP"},
		{"ErrAt", map[string]string{"GPULEDGER_BACKUP_AT": "3am"}, "", 0, "", "GPULEDGER_BACKUP_AT: \"3am\" is not a time of day HH:MM (e.g. 03:30)"},
		{"ErrAt25", map[string]string{"GPULEDGER_BACKUP_AT": "25:00"}, "", 0, "", "GPULEDGER_BACKUP_AT"},
		{"ErrTZ", nil, "Mars/Olympus", 0, "", "GPULEDGER_TZ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := backupOptionsFromEnv("/b", c.tz, func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil || o.Keep != c.keep || o.At != c.at || o.Dir != "/b" {
				t.Fatalf("got %+v, %v", o, err)
			}
			if c.tz != "" && o.Loc.String() != c.tz {
				t.Errorf("Loc = %s, want %s", o.Loc, c.tz)
			}
		})
	}
}

// chargesIn returns the notes of the charges in a backup file, opened as
// a restored database would be.
func chargesIn(t *testing.T, path string) []string {
	t.Helper()
	restored := filepath.Join(t.TempDir(), "restored.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(restored, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), restored)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	book, err := db.Book(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, c := range book.Charges {
		notes = append(notes, c.Note)
	}
	slices.Sort(notes)
	return notes
}

// TestBackup_RestoreUnderWrites backs up while charges are being written,
// checks each copy is a consistent prefix of the writes, then restores
// the last copy by the documented procedure (stop, copy over
// GPULEDGER_DB, remove -wal and -shm, start) and compares the export of
// the restored database with the export taken before the stop.
func TestBackup_RestoreUnderWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	live := filepath.Join(dir, "gpuledger.db")
	db := openLedger(t, live)
	var tick atomic.Int64
	base := time.Date(2026, 11, 2, 3, 30, 0, 0, time.UTC)
	now := func() time.Time { return base.Add(time.Duration(tick.Add(1)) * time.Second) }
	n, err := sqlite.NewNightly(db, sqlite.NightlyOptions{Dir: filepath.Join(dir, "backups"), Keep: 100, Loc: time.UTC, Now: now}, discard())
	if err != nil {
		t.Fatal(err)
	}

	var written atomic.Int64
	stopWrites := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stopWrites:
				return
			default:
			}
			if err := addCharge(ctx, db, i); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			written.Store(int64(i + 1))
		}
	}()
	var mid []string
	for len(mid) < 3 {
		before := written.Load()
		p, err := n.Once(ctx)
		if err != nil {
			t.Fatal(err)
		}
		after := written.Load()
		notes := chargesIn(t, p)
		// A consistent snapshot holds c000000..c(k-1) and nothing else,
		// with k between the writes done before and after the copy.
		for i, note := range notes {
			if note != fmt.Sprintf("c%06d", i) {
				t.Fatalf("%s: charge %d is %s: the copy is not a consistent snapshot", p, i, note)
			}
		}
		if k := int64(len(notes)); k < before || k > after+1 {
			t.Fatalf("%s holds %d charges; %d were written before the copy and %d after", p, k, before, after)
		}
		if len(notes) > 0 {
			mid = append(mid, p)
		}
	}
	close(stopWrites)
	wg.Wait()
	t.Logf("%d charges written during the test; %d backups taken under writes", written.Load(), len(mid))

	final, err := n.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asOf := "2026-11-03T00:00:00Z"
	export := func() string {
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == "GPULEDGER_DB" {
				return live
			}
			return ""
		}
		if code := run(ctx, []string{"export", "--as-of", asOf}, nil, &out, &errb, getenv); code != 0 {
			t.Fatalf("export: exit %d: %s", code, errb.String())
		}
		return out.String()
	}
	before := export()

	// Restore: stop the server, copy the backup over GPULEDGER_DB, remove
	// the -wal and -shm files, start.
	db.Close()
	b, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	// Something happened after the backup (a write the backup cannot
	// have): it must be gone after the restore.
	db2, err := sqlite.Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if err := addCharge(ctx, db2, 999999); err != nil {
		t.Fatal(err)
	}
	if export() == before {
		t.Fatal("the extra charge did not change the export: the comparison would prove nothing")
	}
	db2.Close()
	if err := os.WriteFile(live, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(live + "-wal")
	os.Remove(live + "-shm")
	after := export()
	if after != before {
		t.Fatalf("export after restore differs from the export before:\nbefore: %s\nafter:  %s", before, after)
	}
	if !strings.Contains(after, `"total"`) {
		t.Fatalf("export looks empty: %s", after)
	}
}
