package sqlite_test

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
	"testing"
	"testing/synctest"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// backupLedger opens a real database at path with one user and one
// rental, for the nightly backups to copy.
func backupLedger(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db := openPath(t, path)
	mustUser(t, db, 1)
	mustRent(t, db, 1, "box1", t0)
	return db
}

func backupCharge(ctx context.Context, db *sqlite.DB, i int) error {
	_, err := db.AddCharge(ctx, act(1), "box1", ledger.Charge{Amount: ledger.MustDecimal("0.01"), Note: fmt.Sprintf("c%06d", i)})
	return err
}

// chargesInBackup returns the notes of the charges in a backup file,
// opened as a restored database would be.
func chargesInBackup(t *testing.T, path string) []string {
	t.Helper()
	restored := filepath.Join(t.TempDir(), "restored.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(restored, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, c := range mustBook(t, openPath(t, restored), 1).Charges {
		notes = append(notes, c.Note)
	}
	slices.Sort(notes)
	return notes
}

// damage overwrites the second page of a database file (a b-tree page)
// with garbage, as a failing disk would.
func damage(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096), 4096)
	return err
}

// corruptingStore writes a backup and then damages it.
type corruptingStore struct{ db *sqlite.DB }

func (c corruptingStore) Backup(ctx context.Context, path string) error {
	if err := c.db.Backup(ctx, path); err != nil {
		return err
	}
	return damage(path)
}

func TestVerifyBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := backupLedger(t, filepath.Join(dir, "live.db"))
	good := filepath.Join(dir, "good.db")
	if err := db.Backup(ctx, good); err != nil {
		t.Fatal(err)
	}
	if err := sqlite.VerifyBackup(ctx, good); err != nil {
		t.Fatalf("a fresh copy: %v", err)
	}
	bad := filepath.Join(dir, "bad.db")
	if err := (corruptingStore{db}).Backup(ctx, bad); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(bad)
	if err := sqlite.VerifyBackup(ctx, bad); err == nil || !strings.Contains(err.Error(), "bad.db") {
		t.Fatalf("a damaged copy: err = %v, want one naming the file", err)
	}
	if after, _ := os.ReadFile(bad); !bytes.Equal(before, after) {
		t.Error("VerifyBackup changed the file it checked")
	}
	if err := sqlite.VerifyBackup(ctx, filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a missing file verified")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("VerifyBackup created the missing file")
	}
}

func TestNightly_Next(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	ny, _ := time.LoadLocation("America/New_York")
	for _, c := range []struct {
		name string
		at   string
		loc  *time.Location
		now  time.Time
		want time.Time
	}{
		{"LaterToday", "03:30", sh, time.Date(2026, 11, 2, 1, 0, 0, 0, sh), time.Date(2026, 11, 2, 3, 30, 0, 0, sh)},
		{"Tomorrow", "03:30", sh, time.Date(2026, 11, 2, 3, 30, 0, 0, sh), time.Date(2026, 11, 3, 3, 30, 0, 0, sh)},
		{"UTCInput", "03:30", sh, time.Date(2026, 11, 1, 18, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 3, 30, 0, 0, sh)},
		{"UTCInputPast", "03:30", sh, time.Date(2026, 11, 1, 20, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 3, 30, 0, 0, sh)},
		{"MonthEnd", "00:00", sh, time.Date(2026, 12, 31, 12, 0, 0, 0, sh), time.Date(2027, 1, 1, 0, 0, 0, 0, sh)},
		// 02:30 does not exist on 8 March 2026 in New York: time.Date
		// applies the offset after the gap (EDT), which gives 01:30 EST;
		// the backup still runs that night, once.
		{"DSTGap", "02:30", ny, time.Date(2026, 3, 8, 1, 0, 0, 0, ny), time.Date(2026, 3, 8, 1, 30, 0, 0, ny)},
		{"DSTGapPassed", "02:30", ny, time.Date(2026, 3, 8, 4, 0, 0, 0, ny), time.Date(2026, 3, 9, 2, 30, 0, 0, ny)},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := sqlite.NewNightly(nil, sqlite.NightlyOptions{Dir: t.TempDir(), At: c.at, Loc: c.loc}, discardLog())
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Next(c.now); !got.Equal(c.want) {
				t.Errorf("Next(%s) = %s, want %s", c.now, got, c.want)
			}
		})
	}
}

func TestNightly_OnceAndPrune(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := backupLedger(t, filepath.Join(dir, "live.db"))
	backups := filepath.Join(dir, "backups")
	clock := time.Date(2026, 11, 1, 3, 30, 0, 0, time.UTC)
	opts := sqlite.NightlyOptions{Dir: backups, Keep: 3, Loc: time.UTC, Now: func() time.Time { return clock }}
	n, err := sqlite.NewNightly(db, opts, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(backups); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("backup directory: %v, %v; want it created 0700", st, err)
	}
	// Files that are not backups are never pruned.
	os.WriteFile(filepath.Join(backups, "notes.txt"), []byte("mine"), 0o600)
	os.WriteFile(filepath.Join(backups, "gpuledger-manual.db"), []byte("mine"), 0o600)
	var paths []string
	for i := range 5 {
		if err := backupCharge(ctx, db, i); err != nil {
			t.Fatal(err)
		}
		p, err := n.Once(ctx)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		clock = clock.Add(24 * time.Hour)
	}
	if filepath.Base(paths[0]) != "gpuledger-20261101-033000.db" {
		t.Errorf("first backup named %s", filepath.Base(paths[0]))
	}
	entries, _ := os.ReadDir(backups)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"gpuledger-20261103-033000.db", "gpuledger-20261104-033000.db", "gpuledger-20261105-033000.db", "gpuledger-manual.db", "notes.txt"}
	if !slices.Equal(names, want) {
		t.Fatalf("backup dir holds %v, want %v", names, want)
	}
	st, err := os.Stat(paths[4])
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600 (it holds the whole ledger)", st.Mode().Perm())
	}
	// Each backup holds what was written before it.
	for i, p := range paths[2:] {
		if got := chargesInBackup(t, p); len(got) != i+3 {
			t.Errorf("%s holds %d charges, want %d", filepath.Base(p), len(got), i+3)
		}
	}

	t.Run("ErrSameName", func(t *testing.T) {
		clock = clock.Add(-24 * time.Hour) // the last backup's time again
		if _, err := n.Once(ctx); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("err = %v, want already exists", err)
		}
		if m, _ := filepath.Glob(filepath.Join(backups, ".*.tmp")); len(m) != 0 {
			t.Errorf("temporary files left: %v", m)
		}
	})
	t.Run("ErrCorruptCopyNeverNamedAsBackup", func(t *testing.T) {
		clock = clock.Add(48 * time.Hour)
		n2, err := sqlite.NewNightly(corruptingStore{db}, opts, discardLog())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n2.Once(ctx); err == nil || !strings.Contains(err.Error(), "backup") {
			t.Fatalf("err = %v, want a failed verification", err)
		}
		if got := n.Backups(); len(got) != 3 || got[2] != "gpuledger-20261105-033000.db" {
			t.Errorf("backups after a failed one: %v", got)
		}
		if m, _ := filepath.Glob(filepath.Join(backups, ".*.tmp")); len(m) != 0 {
			t.Errorf("temporary files left: %v", m)
		}
	})
}

func TestNewNightly_ErrDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	os.WriteFile(file, nil, 0o600)
	if _, err := sqlite.NewNightly(nil, sqlite.NightlyOptions{Dir: filepath.Join(file, "sub")}, discardLog()); err == nil || !strings.Contains(err.Error(), "backup directory") {
		t.Fatalf("err = %v, want one naming the backup directory", err)
	}
	if _, err := sqlite.NewNightly(nil, sqlite.NightlyOptions{Dir: t.TempDir(), At: "3am"}, discardLog()); err == nil || !strings.Contains(err.Error(), `"3am" is not a time of day`) {
		t.Fatalf("err = %v, want one naming the time", err)
	}
	if stop, err := sqlite.StartNightly(context.Background(), nil, sqlite.NightlyOptions{}, discardLog()); err != nil || stop == nil {
		t.Fatalf("no directory: %v; want no backups and no error", err)
	} else {
		stop()
	}
}

// TestNightly_Run runs the loop on a fake clock: a catch-up backup at
// start (there is none yet), then one a day at 03:30, the oldest pruned.
func TestNightly_Run(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		// synctest's clock starts at 2000-01-01 00:00 UTC.
		db := backupLedger(t, filepath.Join(dir, "live.db"))
		backups := filepath.Join(dir, "backups")
		opts := sqlite.NightlyOptions{Dir: backups, Keep: 3, At: "03:30", Loc: time.UTC}
		stop, err := sqlite.StartNightly(t.Context(), db, opts, discardLog())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3*24*time.Hour + 4*time.Hour) // to 2000-01-04 04:00
		synctest.Wait()
		stop()
		n, err := sqlite.NewNightly(nil, opts, discardLog())
		if err != nil {
			t.Fatal(err)
		}
		got := n.Backups()
		want := []string{"gpuledger-20000102-033000.db", "gpuledger-20000103-033000.db", "gpuledger-20000104-033000.db"}
		if !slices.Equal(got, want) {
			t.Fatalf("backups %v, want %v", got, want)
		}
	})
}
