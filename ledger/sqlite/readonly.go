package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// OpenReadOnly opens an existing database file for reading only, for the
// commands that take the data off a server (export, backup): they must
// work when the disk holding the ledger is full, which is when they are
// needed most. It writes nothing to the file: no check write, no
// migration (a file at another schema version is refused, with what to
// do), no change of mode. Reads and Backup work; every write fails.
//
// The connections open the file with mode=ro. A WAL database read that way
// still maps its -shm index, and creates or grows it when needed, which a
// full disk refuses (SQLITE_IOERR_SHMSIZE). So when the first read fails
// so, the store reopens with readonly_shm=1: SQLite then reads the -shm
// without writing it, or rebuilds the index in memory from the -wal, and
// the reads still see every committed write.
func OpenReadOnly(ctx context.Context, path string, opts ...Option) (*DB, error) {
	cfg, err := openConfig(path, opts)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sqlite: %w: %s does not exist (fix the path: GPULEDGER_DB or --db)", ErrUnusable, path)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	db, err := openReadOnly(ctx, path, cfg, false)
	if err != nil && needsReadOnlyShm(err) {
		db, err = openReadOnly(ctx, path, cfg, true)
	}
	return db, err
}

// needsReadOnlyShm reports whether err is what reading a WAL database
// with a -shm it may not create or grow says: an I/O error on the -shm, a
// full disk, or a -shm that cannot be opened.
func needsReadOnlyShm(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY:
		return true
	}
	return false
}

func openReadOnly(ctx context.Context, path string, cfg config, readOnlyShm bool) (*DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	if readOnlyShm {
		q.Set("readonly_shm", "1")
	}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	// The writer pool of a read-only store runs only Backup's VACUUM INTO,
	// which query_only would refuse; mode=ro refuses every write anyway.
	writer, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	q.Add("_pragma", "query_only(1)")
	reader, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	reader.SetMaxOpenConns(cfg.readers)
	reader.SetMaxIdleConns(cfg.readers)
	db := &DB{Now: time.Now, path: path, writer: writer, reader: reader, log: cfg.logger, readOnly: true}
	bindAggregates(db)
	if err := db.checkSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkSchema checks, read-only, that the file is a gpuledger database at
// the schema version this program reads.
func (db *DB) checkSchema(ctx context.Context) error {
	var have int
	err := db.reader.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have)
	if err != nil {
		if needsReadOnlyShm(err) {
			return fmt.Errorf("sqlite: read %s: %w", db.path, err)
		}
		return fmt.Errorf("sqlite: %w: %s is damaged or is not a gpuledger database (%w)", ErrUnusable, db.path, err)
	}
	switch want := SchemaVersion(); {
	case have > want:
		return fmt.Errorf("sqlite: %w: %s has schema version %d, newer than this program's %d: run a newer gpuledger", ErrUnusable, db.path, have, want)
	case have < want:
		return fmt.Errorf("sqlite: %w: %s has schema version %d, older than this program's %d: start the server once to upgrade it, "+
			"or read it with the gpuledger version that wrote it (read-only commands never upgrade a ledger)", ErrUnusable, db.path, have, want)
	}
	return nil
}
