package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrationFS holds the schema as numbered files, NNN_name.sql. They are
// append-only: a released migration is never edited; a change is a new file.
//
//go:embed migration/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order, checking
// that they are numbered 1, 2, 3, ... without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return nil, fmt.Errorf("sqlite: list migrations: %w", err)
	}
	var ms []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("sqlite: migration %s: name must look like 001_init.sql", base)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("sqlite: read migration %s: %w", base, err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlite: migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this package migrates to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate applies the migrations the database has not seen yet, each in
// its own immediate transaction together with its schema_migrations row,
// so a crash mid-way leaves the schema at a whole version and two
// processes opening the same new file do not both apply one: each step
// reads the version under the write lock.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for {
		var applied *migration
		err := db.withTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version    INTEGER PRIMARY KEY,
				name       TEXT    NOT NULL,
				applied_at INTEGER NOT NULL
			) STRICT`); err != nil {
				return fmt.Errorf("create schema_migrations: %w", err)
			}
			var have int
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
				return fmt.Errorf("read schema version: %w", err)
			}
			if have > len(ms) {
				return fmt.Errorf("database %s has schema version %d, newer than this program's %d: run a newer gpuledger", db.path, have, len(ms))
			}
			if have == len(ms) {
				return nil
			}
			m := ms[have]
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().Unix()); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			applied = &m
			return nil
		})
		if err != nil {
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
		if applied == nil {
			return nil
		}
		db.log.Info("sqlite: applied migration", "file", applied.name, "db", db.path)
	}
}
