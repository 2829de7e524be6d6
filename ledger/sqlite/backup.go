package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Backup writes a consistent, compacted copy of the database to path
// (VACUUM INTO), safe while the server runs. path must not exist yet: it
// is created first, empty and owner-only (VACUUM INTO fills an empty file
// and keeps its mode), so the copy is never readable by others, not even
// while it is being written, and an existing file is never overwritten.
// It runs on the writer connection (the query_only readers may not create
// files), so writes wait for the copy: milliseconds per megabyte.
func (db *DB) Backup(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("sqlite: backup: %s already exists: a backup never overwrites, choose a new name", path)
		}
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	err = f.Chmod(fileMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_, err = db.writer.ExecContext(ctx, `VACUUM INTO ?`, path)
	}
	if err != nil {
		os.Remove(path)
		return storeError(fmt.Errorf("sqlite: backup to %s: %w", path, err))
	}
	return nil
}

// VerifyBackup opens the copy at path read-only and runs PRAGMA
// integrity_check: an error says the file is not a whole, readable
// database. It checks the file, not the ledger (no schema check, no
// migration), so it works on a copy of any version.
func VerifyBackup(ctx context.Context, path string) error {
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("backup: verify %s: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("backup: verify %s: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("backup: verify %s: %w", path, err)
		}
		problems = append(problems, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("backup: verify %s: %w", path, err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("backup: %s failed integrity_check: %s", path, strings.Join(problems, "; "))
	}
	return nil
}

// Defaults of the nightly backup (docs/config.md).
const (
	DefaultBackupKeep = 7
	DefaultBackupAt   = "03:30"
)

// backupPrefix and backupSuffix frame the names of nightly backups:
// gpuledger-20261102-033000.db. Only files named so are ever pruned.
const (
	backupPrefix = "gpuledger-"
	backupSuffix = ".db"
	backupLayout = "20060102-150405"
)

// NightlyOptions configures nightly backups (GPULEDGER_BACKUP_DIR, _KEEP,
// _AT and GPULEDGER_TZ, read by the command).
type NightlyOptions struct {
	Dir  string         // where backups go; empty: no nightly backup
	Keep int            // backups kept, the newest; default 7
	At   string         // local time of day HH:MM; default 03:30
	Loc  *time.Location // the zone of At; default time.Local
	// Now is the clock; nil: time.Now. Tests set it to name backups.
	Now func() time.Time
}

// ParseTimeOfDay parses HH:MM, the form of NightlyOptions.At.
func ParseTimeOfDay(s string) (h, m int, err error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, 0, fmt.Errorf("%q is not a time of day HH:MM (e.g. 03:30)", s)
	}
	return t.Hour(), t.Minute(), nil
}

// Backuper is what nightly backups need of the database: *DB's Backup.
// Tests wrap it to damage or inspect the copy.
type Backuper interface {
	// Backup writes a consistent copy of the live database to path,
	// which must not exist.
	Backup(ctx context.Context, path string) error
}

// Nightly takes a backup every day at a fixed local time, keeping the
// newest Keep. Each copy is written to a temporary name, checked with
// VerifyBackup, synced, and only then renamed into place, so a file
// named like a backup is always a complete, verified one. It keeps its
// own timer rather than a cron entry: cron never runs a slot missed while
// the server was down, and Run catches up on one.
type Nightly struct {
	opts NightlyOptions
	db   Backuper
	log  *slog.Logger
}

// StartNightly starts nightly backups of db into opts.Dir (nothing when
// opts.Dir is empty) on a goroutine of its own. It checks the directory
// is writable first, so a bad setting fails at start rather than at
// 03:30. The returned stop function cancels the loop and waits for a
// backup in progress to finish or cancel; call it before closing db.
func StartNightly(ctx context.Context, db Backuper, opts NightlyOptions, log *slog.Logger) (stop func(), err error) {
	if opts.Dir == "" {
		return func() {}, nil
	}
	n, err := NewNightly(db, opts, log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.Run(ctx)
	}()
	log.Info("nightly backups on", "dir", n.opts.Dir, "at", n.opts.At, "zone", n.opts.Loc.String(), "keep", n.opts.Keep)
	return func() { cancel(); wg.Wait() }, nil
}

// NewNightly checks opts (filling in the defaults), creates opts.Dir
// owner-only if it is missing and checks it is writable.
func NewNightly(db Backuper, opts NightlyOptions, log *slog.Logger) (*Nightly, error) {
	if opts.Keep < 1 {
		opts.Keep = DefaultBackupKeep
	}
	if opts.At == "" {
		opts.At = DefaultBackupAt
	}
	if opts.Loc == nil {
		opts.Loc = time.Local
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	if _, _, err := ParseTimeOfDay(opts.At); err != nil {
		return nil, fmt.Errorf("backup time: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("backup directory: %w", err)
	}
	probe, err := os.CreateTemp(opts.Dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("backup directory: %s is not writable: %w", opts.Dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return &Nightly{opts: opts, db: db, log: log}, nil
}

// Next returns the first backup time strictly after t. In an hour that
// daylight saving skips, time.Date's normalisation moves the slot, and
// the backup still runs that night, once.
func (n *Nightly) Next(t time.Time) time.Time {
	h, m, _ := ParseTimeOfDay(n.opts.At)
	loc := n.opts.Loc
	if loc == nil {
		loc = time.Local
	}
	lt := t.In(loc)
	at := time.Date(lt.Year(), lt.Month(), lt.Day(), h, m, 0, 0, loc)
	if !at.After(t) {
		at = time.Date(lt.Year(), lt.Month(), lt.Day()+1, h, m, 0, 0, loc)
	}
	return at
}

// Run takes a backup at once when the newest is more than a day old (one
// missed while the server was down), then every day at opts.At, until ctx
// ends. Failures are logged and retried at the next slot.
func (n *Nightly) Run(ctx context.Context) {
	n.removeTemps()
	if newest, ok := n.newest(); !ok || n.opts.Now().Sub(newest) > 25*time.Hour {
		n.backupLogged(ctx)
	}
	for {
		wait := n.Next(n.opts.Now()).Sub(n.opts.Now())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		n.backupLogged(ctx)
	}
}

func (n *Nightly) backupLogged(ctx context.Context) {
	start := time.Now()
	path, err := n.Once(ctx)
	if err != nil {
		if ctx.Err() == nil {
			n.log.Error("nightly backup failed", "dir", n.opts.Dir, "err", err)
		}
		return
	}
	n.log.Info("nightly backup written", "path", path, "duration_ms", time.Since(start).Milliseconds())
}

// Once writes one verified backup named by the clock and prunes old
// ones. It returns the backup's path.
func (n *Nightly) Once(ctx context.Context) (string, error) {
	name := backupPrefix + n.opts.Now().In(n.opts.Loc).Format(backupLayout) + backupSuffix
	final := filepath.Join(n.opts.Dir, name)
	if _, err := os.Stat(final); err == nil {
		return "", fmt.Errorf("backup %s already exists", final)
	}
	tmp := filepath.Join(n.opts.Dir, "."+name+".tmp")
	os.Remove(tmp) // a leftover of a crash; VACUUM INTO wants no file
	if err := writeVerifiedBackup(ctx, n.db, tmp); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("backup: %w", err)
	}
	syncDir(n.opts.Dir)
	n.prune()
	return final, nil
}

// writeVerifiedBackup copies db into path (which must not exist), checks
// the copy and syncs it to disk, with owner-only permissions.
func writeVerifiedBackup(ctx context.Context, db Backuper, path string) error {
	if err := db.Backup(ctx, path); err != nil {
		return err
	}
	if err := os.Chmod(path, fileMode); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := VerifyBackup(ctx, path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("backup: sync %s: %w", path, err)
	}
	return nil
}

// Backups returns the names of the finished backups in the directory,
// oldest first (the names sort by time). Other files are not listed.
func (n *Nightly) Backups() []string {
	entries, err := os.ReadDir(n.opts.Dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		stamp, ok := strings.CutPrefix(name, backupPrefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		stamp, ok = strings.CutSuffix(stamp, backupSuffix)
		if _, err := time.Parse(backupLayout, stamp); !ok || err != nil {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// newest returns the time of the newest backup, by its name.
func (n *Nightly) newest() (time.Time, bool) {
	names := n.Backups()
	if len(names) == 0 {
		return time.Time{}, false
	}
	stamp := strings.TrimSuffix(strings.TrimPrefix(names[len(names)-1], backupPrefix), backupSuffix)
	t, err := time.ParseInLocation(backupLayout, stamp, n.opts.Loc)
	return t, err == nil
}

// prune removes all but the newest Keep backups.
func (n *Nightly) prune() {
	names := n.Backups()
	for len(names) > n.opts.Keep {
		p := filepath.Join(n.opts.Dir, names[0])
		if err := os.Remove(p); err != nil {
			n.log.Warn("could not remove an old backup", "path", p, "err", err)
		}
		names = names[1:]
	}
}

// removeTemps removes temporary copies left by a crash mid-backup.
func (n *Nightly) removeTemps() {
	matches, _ := filepath.Glob(filepath.Join(n.opts.Dir, "."+backupPrefix+"*"+backupSuffix+".tmp"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// syncDir makes a rename in dir durable; errors are ignored (some
// filesystems cannot sync a directory, and the file itself is synced).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
