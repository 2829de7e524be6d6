package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestDB_StoreErrors checks that what SQLite says about the store itself
// reaches callers as a ledger code, with nothing changed: a full database
// is EFULL and a database another connection holds locked is
// EUNAVAILABLE, both transient; a bad input stays EINVALID and is not.
func TestDB_StoreErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("EFULL", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		// Cap the file at the pages it has: the next page it needs fails
		// with SQLITE_FULL, as a full disk does.
		var pages int
		raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if err := raw.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if err := sqlite.WriterPragma(ctx, db, fmt.Sprintf("max_page_count = %d", pages)); err != nil {
			t.Fatal(err)
		}
		var ferr error
		for i := 0; i < 1000 && ferr == nil; i++ {
			ferr = db.SetMeta(ctx, fmt.Sprintf("ballast:%d", i), strings.Repeat("x", 2000))
		}
		wantCode(t, ferr, ledger.EFULL)
		if !ledger.Transient(ferr) {
			t.Errorf("ledger.Transient(%v) = false, want true", ferr)
		}
		unchanged(t, db, ledger.EFULL, func() error {
			return db.SetMeta(ctx, "ballast:more", strings.Repeat("y", 8000))
		})
	})
	t.Run("EUNAVAILABLE", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		if err := sqlite.WriterPragma(ctx, db, "busy_timeout = 50"); err != nil {
			t.Fatal(err)
		}
		raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		conn, err := raw.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
			t.Fatal(err)
		}
		err = db.SetMeta(ctx, "k", "v")
		wantCode(t, err, ledger.EUNAVAILABLE)
		if !ledger.Transient(err) {
			t.Errorf("ledger.Transient(%v) = false, want true", err)
		}
		if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMeta(ctx, "k", "v"); err != nil {
			t.Fatalf("after the lock was let go: %v", err)
		}
	})
	t.Run("EINVALID", func(t *testing.T) {
		db := openDB(t)
		err := db.SetMeta(ctx, "", "v")
		wantCode(t, err, ledger.EINVALID)
		if ledger.Transient(err) {
			t.Errorf("ledger.Transient(%v) = true for a bad input", err)
		}
	})
}
