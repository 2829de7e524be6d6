package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// dbAtSchema writes a database file in t.TempDir() as a server of schema
// version left it: migrations 1..version applied and recorded, then the
// rows of seed inserted. Opening it afterwards runs the later migrations
// on real old data.
func dbAtSchema(t *testing.T, version int, seed ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	files, err := filepath.Glob("migration/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) < version {
		t.Fatalf("only %d migrations, asked for schema %d", len(files), version)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for i, f := range files[:version] {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, ?, 1790000000)`, i+1, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range seed {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("building a database at schema %d: %v\n%s", version, err, q)
		}
	}
	return path
}
