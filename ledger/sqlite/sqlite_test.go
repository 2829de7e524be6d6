package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// quiet discards the store's migration log in tests.
var quiet = slog.New(slog.DiscardHandler)

// t0 is the tests' "now": the store's clock and the base of event times.
var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// openDB opens a fresh database file in t.TempDir() with the clock fixed
// at t0, closed when the test ends.
func openDB(t testing.TB) *sqlite.DB {
	t.Helper()
	return openPath(t, filepath.Join(t.TempDir(), "ledger.db"))
}

func openPath(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db := testkit.DBAt(t, path)
	db.Now = func() time.Time { return t0 }
	return db
}

// mustUser creates user id with default settings.
func mustUser(t testing.TB, db *sqlite.DB, id int64) ledger.User {
	t.Helper()
	u, err := db.EnsureUser(context.Background(), ledger.User{ID: id, TZ: "Asia/Shanghai"})
	if err != nil {
		t.Fatalf("EnsureUser(%d): %v", id, err)
	}
	return u
}

// act returns an action of user at t0 with no key.
func act(user int64) ledger.Action { return ledger.Action{UserID: user, At: t0} }

// keyed returns an action of user at t0 with a dedupe key.
func keyed(user int64, key string) ledger.Action {
	return ledger.Action{UserID: user, At: t0, Key: key}
}

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// box returns a valid rental named name, started at start.
func box(name string, start time.Time) ledger.Rental {
	return ledger.Rental{
		Name: name, Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
		Currency: ledger.CNY,
		Events:   []ledger.Event{{Kind: ledger.EventStart, At: start}},
	}
}

func mustRent(t testing.TB, db *sqlite.DB, user int64, name string, start time.Time) *ledger.Rental {
	t.Helper()
	r, err := db.CreateRental(context.Background(), act(user), box(name, start))
	if err != nil {
		t.Fatalf("CreateRental(%s): %v", name, err)
	}
	return r
}

func mustEvent(t testing.TB, db *sqlite.DB, user int64, name string, kind ledger.EventKind, when time.Time) *ledger.Rental {
	t.Helper()
	r, err := db.AppendEvent(context.Background(), act(user), name, ledger.Event{Kind: kind, At: when})
	if err != nil {
		t.Fatalf("AppendEvent(%s %s): %v", name, kind, err)
	}
	return r
}

// wantCode fails unless err carries code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := ledger.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
	if code != ledger.EINTERNAL && code != "" {
		var le *ledger.Error
		if !errors.As(err, &le) || le.Message == "" && le.Key == "" {
			t.Fatalf("error %v is not a *ledger.Error with a message or a key", err)
		}
	}
}

// dump returns every row of every table of the database file as text, in
// a stable order, read through a separate connection: two equal dumps
// mean the database did not change.
func dump(t testing.TB, db *sqlite.DB) string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	rows, err := raw.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, tbl := range tables {
		fmt.Fprintf(&b, "== %s\n", tbl)
		rows, err := raw.QueryContext(ctx, `SELECT * FROM "`+tbl+`" ORDER BY rowid`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%v\n", vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// unchanged runs fn, which must fail with code, and checks that the
// database is byte-for-byte the same (by dump) afterwards.
func unchanged(t *testing.T, db *sqlite.DB, code string, fn func() error) {
	t.Helper()
	before := dump(t, db)
	err := fn()
	wantCode(t, err, code)
	if after := dump(t, db); after != before {
		t.Fatalf("a failed call (%v) changed the database:\nbefore:\n%s\nafter:\n%s", err, before, after)
	}
}
