package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
)

// fileMode is the mode of every file the store creates: the database,
// its -wal and -shm (SQLite gives them the database file's mode), and
// backups.
const fileMode fs.FileMode = 0o600

// createPrivate creates the file at path, empty and owner-only, when it
// does not exist yet, so that SQLite (which would create it with the
// process's umask, 0644 under the usual 022) opens a file nobody else can
// read; SQLite takes an empty file for a new database. It reports whether
// it created the file. Two processes creating it at once both go on: one
// creates it (O_EXCL), the other finds it.
func createPrivate(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: %w: cannot create %s: %w (fix the path or the directory's permissions: the server needs to create the file and its -wal and -shm beside it)", ErrUnusable, path, err)
	}
	// The umask may have taken bits from fileMode (0o200 would leave a
	// file its owner cannot write): set it exactly.
	err = f.Chmod(fileMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return false, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	return true, nil
}

// removeCreated removes the file createPrivate created when Open fails
// before SQLite wrote to it: an empty file left behind would be refused at
// the next start as a truncated ledger (checkFile).
func removeCreated(path string, created bool) {
	if fi, err := os.Stat(path); created && err == nil && fi.Size() == 0 {
		os.Remove(path)
	}
}

// tighten makes an existing database file and its -wal and -shm
// owner-only, logging once what it changed. A looser file is tightened
// rather than refused: it is most likely a ledger created before the
// store set modes (SQLite used the umask), refusing it would stop a
// working server at upgrade for what the server can fix itself, and no
// reader of the ledger other than its owner is expected. A file the
// process cannot change (another owner) is left as it is, with a warning.
func tighten(path string, log *slog.Logger) {
	var changed, failed []string
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&^fileMode == 0 {
			continue
		}
		if err := os.Chmod(p, fileMode); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%#o: %v)", p, fi.Mode().Perm(), err))
			continue
		}
		changed = append(changed, fmt.Sprintf("%s (was %#o)", p, fi.Mode().Perm()))
	}
	if len(changed) > 0 {
		log.Warn("sqlite: the database files were readable by others: made owner-only (0600)", "files", strings.Join(changed, ", "))
	}
	if len(failed) > 0 {
		log.Warn("sqlite: the database files are readable by others and could not be made owner-only: chmod 600 them as their owner", "files", strings.Join(failed, ", "))
	}
}
