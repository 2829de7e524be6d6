package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the driver, to verify a backup read-only
)

// Defaults of the nightly backup.
const (
	defaultBackupKeep = 7
	defaultBackupAt   = "03:30"
)

// backupPrefix and backupSuffix frame the names of nightly backups:
// gpuledger-20261102-033000.db. Only files named so are ever pruned.
const (
	backupPrefix = "gpuledger-"
	backupSuffix = ".db"
	backupLayout = "20060102-150405"
)

// BackupOptions configures nightly backups (docs/config.md).
type BackupOptions struct {
	Dir  string         // GPULEDGER_BACKUP_DIR; empty: no nightly backup
	Keep int            // GPULEDGER_BACKUP_KEEP: backups kept, the newest; default 7
	At   string         // GPULEDGER_BACKUP_AT: local time of day HH:MM; default 03:30
	Loc  *time.Location // the zone of At; default time.Local
}

// backupOptionsFromEnv reads GPULEDGER_BACKUP_KEEP and GPULEDGER_BACKUP_AT
// for the directory dir (GPULEDGER_BACKUP_DIR, already parsed) and zone tz
// (GPULEDGER_TZ; empty means local). Errors name the variable.
func backupOptionsFromEnv(dir, tz string, getenv func(string) string) (BackupOptions, error) {
	o := BackupOptions{Dir: dir, Keep: defaultBackupKeep, At: envOr(getenv, "GPULEDGER_BACKUP_AT", defaultBackupAt), Loc: time.Local}
	var errs []error
	if v := getenv("GPULEDGER_BACKUP_KEEP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 3650 {
			errs = append(errs, fmt.Errorf("GPULEDGER_BACKUP_KEEP: %q is not a number of backups from 1 to 3650 (e.g. 7)", v))
		}
		o.Keep = n
	}
	if _, _, err := parseHHMM(o.At); err != nil {
		errs = append(errs, fmt.Errorf("GPULEDGER_BACKUP_AT: %w", err))
	}
	if tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			errs = append(errs, fmt.Errorf("GPULEDGER_TZ: unknown time zone %q", tz))
		} else {
			o.Loc = loc
		}
	}
	return o, errors.Join(errs...)
}

func parseHHMM(s string) (h, m int, err error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, 0, fmt.Errorf("%q is not a time of day HH:MM (e.g. 03:30)", s)
	}
	return t.Hour(), t.Minute(), nil
}

// backupStore is what nightly backups need of the database.
type backupStore interface {
	// Backup writes a consistent copy of the live database to path,
	// which must not exist.
	Backup(ctx context.Context, path string) error
}

// nightly takes a backup every day at a fixed local time, keeping the
// newest Keep. Each copy is written to a temporary name, checked with
// PRAGMA integrity_check, synced, and only then renamed into place, so a
// file named like a backup is always a complete, verified one.
type nightly struct {
	opts BackupOptions
	db   backupStore
	log  *slog.Logger
	now  func() time.Time
}

// startBackups starts nightly backups of db into opts.Dir (nothing when
// opts.Dir is empty). It checks the directory is writable first, so a bad
// setting fails at start rather than at 03:30. The returned stop function
// cancels the loop and waits for a backup in progress to finish or
// cancel; call it before closing db.
func startBackups(ctx context.Context, db backupStore, opts BackupOptions, log *slog.Logger) (stop func(), err error) {
	if opts.Dir == "" {
		return func() {}, nil
	}
	n, err := newNightly(db, opts, log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.run(ctx)
	}()
	log.Info("nightly backups on", "dir", opts.Dir, "at", opts.At, "zone", opts.Loc.String(), "keep", opts.Keep)
	return func() { cancel(); wg.Wait() }, nil
}

func newNightly(db backupStore, opts BackupOptions, log *slog.Logger) (*nightly, error) {
	if opts.Keep < 1 {
		opts.Keep = defaultBackupKeep
	}
	if opts.At == "" {
		opts.At = defaultBackupAt
	}
	if opts.Loc == nil {
		opts.Loc = time.Local
	}
	if _, _, err := parseHHMM(opts.At); err != nil {
		return nil, fmt.Errorf("GPULEDGER_BACKUP_AT: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("GPULEDGER_BACKUP_DIR: %w", err)
	}
	probe, err := os.CreateTemp(opts.Dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("GPULEDGER_BACKUP_DIR: %s is not writable: %w", opts.Dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return &nightly{opts: opts, db: db, log: log, now: time.Now}, nil
}

// next returns the first backup time strictly after t.
func (n *nightly) next(t time.Time) time.Time {
	h, m, _ := parseHHMM(n.opts.At)
	lt := t.In(n.opts.Loc)
	at := time.Date(lt.Year(), lt.Month(), lt.Day(), h, m, 0, 0, n.opts.Loc)
	if !at.After(t) {
		at = time.Date(lt.Year(), lt.Month(), lt.Day()+1, h, m, 0, 0, n.opts.Loc)
	}
	return at
}

// run takes a backup at once when the newest is more than a day old (one
// missed while the server was down), then every day at opts.At, until ctx
// ends. Failures are logged and retried at the next slot.
func (n *nightly) run(ctx context.Context) {
	n.removeTemps()
	if newest, ok := n.newest(); !ok || n.now().Sub(newest) > 25*time.Hour {
		n.backupLogged(ctx)
	}
	for {
		wait := n.next(n.now()).Sub(n.now())
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

func (n *nightly) backupLogged(ctx context.Context) {
	start := time.Now()
	path, err := n.once(ctx)
	if err != nil {
		if ctx.Err() == nil {
			n.log.Error("nightly backup failed", "dir", n.opts.Dir, "err", err)
		}
		return
	}
	n.log.Info("nightly backup written", "path", path, "duration_ms", time.Since(start).Milliseconds())
}

// once writes one verified backup and prunes old ones. It returns the
// backup's path.
func (n *nightly) once(ctx context.Context) (string, error) {
	name := backupPrefix + n.now().In(n.opts.Loc).Format(backupLayout) + backupSuffix
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
func writeVerifiedBackup(ctx context.Context, db backupStore, path string) error {
	if err := db.Backup(ctx, path); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := verifyBackup(ctx, path); err != nil {
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

// verifyBackup opens the copy read-only and runs PRAGMA integrity_check.
// It is the one place outside ledger/sqlite that opens the file with the
// driver: it checks the file, not the ledger.
func verifyBackup(ctx context.Context, path string) error {
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

// backups returns the names of the finished backups in the directory,
// oldest first (the names sort by time).
func (n *nightly) backups() []string {
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
func (n *nightly) newest() (time.Time, bool) {
	names := n.backups()
	if len(names) == 0 {
		return time.Time{}, false
	}
	stamp := strings.TrimSuffix(strings.TrimPrefix(names[len(names)-1], backupPrefix), backupSuffix)
	t, err := time.ParseInLocation(backupLayout, stamp, n.opts.Loc)
	return t, err == nil
}

// prune removes all but the newest Keep backups.
func (n *nightly) prune() {
	names := n.backups()
	for len(names) > n.opts.Keep {
		p := filepath.Join(n.opts.Dir, names[0])
		if err := os.Remove(p); err != nil {
			n.log.Warn("could not remove an old backup", "path", p, "err", err)
		}
		names = names[1:]
	}
}

// removeTemps removes temporary copies left by a crash mid-backup.
func (n *nightly) removeTemps() {
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
