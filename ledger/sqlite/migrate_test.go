package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

func schemaVersions(t *testing.T, path string) []int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

func TestOpen_Fresh(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	want := sqlite.SchemaVersion()
	if want < 2 {
		t.Fatalf("SchemaVersion() = %d, want at least 2", want)
	}
	for i := range 2 { // the second open finds everything applied
		db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
		if err != nil {
			t.Fatalf("open #%d: %v", i+1, err)
		}
		if _, err := db.EnsureUser(ctx, ledger.User{ID: 1}); err != nil {
			t.Fatalf("open #%d: EnsureUser: %v", i+1, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		vs := schemaVersions(t, path)
		if len(vs) != want || vs[0] != 1 || vs[len(vs)-1] != want {
			t.Fatalf("open #%d: schema_migrations = %v, want 1..%d once each", i+1, vs, want)
		}
	}
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var mode string
	if err := raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestOpen_ExistingV1 builds a database the way a program that knew only
// migration 001 left it, with data, and checks that Open migrates it
// forward and keeps the data.
func TestOpen_ExistingV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	init, err := os.ReadFile("migration/001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		string(init),
		`INSERT INTO schema_migrations VALUES (1, '001_init.sql', 1790000000)`,
		`INSERT INTO users VALUES (7, 'zh', 'Asia/Shanghai', 1320, 1800000000000, 600000000000, -1, -1, 43200000000000, '3000', 'CNY', 1790000000)`,
		`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id) VALUES (1, 7, 'rent', 'old', 1790000000, 1, 1)`,
		`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
			currency, min_s, step_s, floor, lease_ns, created_at)
			VALUES (1, 7, 1, 'old', 'autodl', 'RTX 3090', 1, 'per-second', 1, '1.32', 'hour', 'CNY', 0, 0, '0', 0, 1790000000)`,
		`INSERT INTO rental_events (rental_id, action_id, kind, at) VALUES (1, 1, 'start', 1790000000)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("building a v1 database: %v\n%s", err, q)
		}
	}
	raw.Close()
	if vs := schemaVersions(t, path); len(vs) != 1 {
		t.Fatalf("v1 database has versions %v", vs)
	}

	db := openPath(t, path)
	if vs := schemaVersions(t, path); len(vs) != sqlite.SchemaVersion() {
		t.Fatalf("after Open: versions %v, want %d", vs, sqlite.SchemaVersion())
	}
	b, err := db.Book(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if b.User.Lang != "zh" || len(b.Rentals) != 1 || b.Rentals[0].Name != "old" || len(b.Rentals[0].Events) != 1 {
		t.Fatalf("data lost in migration: %+v", b)
	}
	// The one budget of users (001) is the user's CNY budget (009).
	if bs := b.User.Budgets; len(bs) != 1 || bs[0].Currency != ledger.CNY || bs[0].Amount.String() != "3000" {
		t.Fatalf("budget after migration = %+v, want CNY 3000", bs)
	}
	if got := b.Rentals[0].Price.Amount.String(); got != "1.32" {
		t.Fatalf("price = %s, want 1.32", got)
	}
	// The old data works with the new schema: idle_intervals (002) is
	// joined when a rental is loaded, and the rental can be stopped.
	if _, err := db.AppendEvent(ctx, act(7), "old", ledger.Event{Kind: ledger.EventStop, At: t0}); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_NewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (999, '999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a newer schema: err = %v, want one that says the database is newer", err)
	}
}

func TestOpen_BadPath(t *testing.T) {
	for _, p := range []string{"", ":memory:", filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")} {
		if db, err := sqlite.Open(context.Background(), p); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded, want an error", p)
		}
	}
}

func TestOpen_Concurrent(t *testing.T) {
	// Several processes' worth of pools opening one new file at once must
	// all succeed and apply each migration once.
	path := filepath.Join(t.TempDir(), "ledger.db")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := sqlite.Open(context.Background(), path, sqlite.WithLogger(quiet))
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if vs := schemaVersions(t, path); len(vs) != sqlite.SchemaVersion() {
		t.Fatalf("versions %v", vs)
	}
}

func TestDB_Backup(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustRent(t, db, 1, "box1", t0)
	dst := filepath.Join(t.TempDir(), "copy.db")
	if err := db.Backup(ctx, dst); err != nil {
		t.Fatal(err)
	}
	cp := openPath(t, dst)
	if r, err := cp.Rental(ctx, 1, "box1"); err != nil || r.State() != ledger.Running {
		t.Fatalf("the copy's box1 = %v, %v", r, err)
	}
	if err := db.Backup(ctx, dst); err == nil {
		t.Fatal("Backup over an existing file succeeded, want an error")
	}
}

func TestOpen_Options(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlite.Open(ctx, path, sqlite.WithFullSync(), sqlite.WithReaders(1), sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	mustUser(t, db, 1)
	mustRent(t, db, 1, "box1", t0)
	if _, err := db.Book(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err := sqlite.Open(ctx, path, sqlite.WithReaders(0)); err == nil {
		db.Close()
		t.Fatal("Open with 0 readers succeeded, want an error")
	}
}
