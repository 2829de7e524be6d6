//go:build unix

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// modeSpy is a Backuper that records the mode of the copy the moment
// the store's Backup returns, before the nightly's own checks and chmod.
type modeSpy struct {
	sqlite.Backuper
	mode os.FileMode
}

func (s *modeSpy) Backup(ctx context.Context, path string) error {
	if err := s.Backuper.Backup(ctx, path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	s.mode = fi.Mode().Perm()
	return nil
}

// TestNightly_OwnerOnlyWhileWriting checks that a nightly backup is
// owner-only from its creation, whatever the umask: not only once it is
// complete (a copy written with the umask's 0644 could be read by anyone
// on the machine while it was being written and checked).
func TestNightly_OwnerOnlyWhileWriting(t *testing.T) {
	for _, mask := range []int{0, 0o022} {
		old := syscall.Umask(mask)
		spy := &modeSpy{Backuper: backupLedger(t, filepath.Join(t.TempDir(), "live.db"))}
		dir := filepath.Join(t.TempDir(), "backups")
		now := func() time.Time { return time.Date(2026, 11, 2, 3, 30, 0, 0, time.UTC) }
		n, err := sqlite.NewNightly(spy, sqlite.NightlyOptions{Dir: dir, Keep: 3, At: "03:30", Loc: time.UTC, Now: now}, discardLog())
		if err != nil {
			syscall.Umask(old)
			t.Fatal(err)
		}
		path, err := n.Once(context.Background())
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if spy.mode != 0o600 {
			t.Errorf("umask %#o: the copy had mode %#o while it was written, want 0600", mask, spy.mode)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("umask %#o: the finished backup: %v, %v", mask, fi.Mode(), err)
		}
	}
}
