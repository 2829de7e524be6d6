package testkit

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// DB opens a fresh ledger database, ledger.db in t.TempDir(), migrated to
// the latest schema, and closes it when the test ends (a failing Close
// fails the test). Its migration log is discarded unless opts set a
// logger; its clock (DB.Now) is the real one until the test sets it.
func DB(t testing.TB, opts ...sqlite.Option) *sqlite.DB {
	t.Helper()
	return DBAt(t, filepath.Join(t.TempDir(), "ledger.db"), opts...)
}

// DBAt is DB on the file at path, which may already hold a ledger (a test
// that reopens one, or prepares a file first).
func DBAt(t testing.TB, path string, opts ...sqlite.Option) *sqlite.DB {
	t.Helper()
	opts = append([]sqlite.Option{sqlite.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	db, err := sqlite.Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("testkit: open the test database: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("testkit: close the test database: %v", err)
		}
	})
	return db
}
