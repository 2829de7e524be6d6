package sqlite

// Internal tests of the store's skeleton: the journaled write every
// undoable change goes through, and the aggregates DB embeds. (The
// behaviour of each write is tested through the exported methods in the
// package's external tests.)

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

var jt0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// openJournaled opens a fresh database with user 1 and the clock at jt0.
func openJournaled(t *testing.T) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := Open(context.Background(), path, WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	db.Now = func() time.Time { return jt0 }
	if _, err := db.EnsureUser(context.Background(), ledger.User{ID: 1, TZ: "UTC"}); err != nil {
		t.Fatalf("EnsureUser: %v", err)
	}
	return db
}

// journalRows counts the journal rows with key.
func journalRows(t *testing.T, db *DB, key string) int {
	t.Helper()
	var n int
	if err := db.reader.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM actions WHERE key = ?`, key).Scan(&n); err != nil {
		t.Fatalf("count actions: %v", err)
	}
	return n
}

func TestJournaled_WriteSeesItsJournalRow(t *testing.T) {
	db := openJournaled(t)
	ctx := context.Background()
	a := ledger.Action{UserID: 1, Key: "k1"}
	var seen journal
	got, err := journaled(ctx, db, a, ledger.ActionRent, "box", func(tx *wtx, j journal) (string, error) {
		seen = j
		return "done", nil
	})
	if err != nil || got != "done" {
		t.Fatalf("journaled = %q, %v; want done, nil", got, err)
	}
	if seen.userID != 1 || !seen.at.Equal(jt0) || seen.id == 0 {
		t.Errorf("write saw %+v; want user 1, the store's clock (a.At is zero) and the row's id", seen)
	}
	var kind, name string
	var undoable int
	if err := db.reader.QueryRowContext(ctx, `SELECT kind, name, undoable FROM actions WHERE id = ?`, seen.id).Scan(&kind, &name, &undoable); err != nil {
		t.Fatalf("the journal row write saw: %v", err)
	}
	if kind != string(ledger.ActionRent) || name != "box" || undoable != 1 {
		t.Errorf("journal row = %s %s undoable=%d; want rent box undoable=1", kind, name, undoable)
	}
}

func TestJournaled_FailedWriteLeavesNothing(t *testing.T) {
	db := openJournaled(t)
	ctx := context.Background()
	a := ledger.Action{UserID: 1, Key: "k2"}
	boom := errors.New("boom")
	got, err := journaled(ctx, db, a, ledger.ActionRent, "box", func(tx *wtx, j journal) (int, error) {
		return 42, boom
	})
	if !errors.Is(err, boom) || got != 0 {
		t.Fatalf("journaled = %d, %v; want 0 (no partial result), boom", got, err)
	}
	if n := journalRows(t, db, "k2"); n != 0 {
		t.Fatalf("%d journal rows with the failed action's key; want the row rolled back", n)
	}
	// The key was not spent: the same action can be tried again.
	if _, err := journaled(ctx, db, a, ledger.ActionRent, "box", func(*wtx, journal) (int, error) { return 1, nil }); err != nil {
		t.Fatalf("retry after the failure: %v", err)
	}
	if n := journalRows(t, db, "k2"); n != 1 {
		t.Errorf("%d journal rows after the retry; want 1", n)
	}
}

func TestJournaled_RefusedBeforeWrite(t *testing.T) {
	db := openJournaled(t)
	ctx := context.Background()
	ok := func(*wtx, journal) (int, error) { return 1, nil }
	if _, err := journaled(ctx, db, ledger.Action{UserID: 1, Key: "k3"}, ledger.ActionRent, "box", ok); err != nil {
		t.Fatalf("first: %v", err)
	}
	for _, tc := range []struct {
		name string
		a    ledger.Action
		code string
	}{
		{"a key already applied", ledger.Action{UserID: 1, Key: "k3"}, ledger.EDUPLICATE},
		{"an unknown user", ledger.Action{UserID: 99, Key: "k4"}, ledger.ENOTFOUND},
		{"no user", ledger.Action{Key: "k5"}, ledger.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			_, err := journaled(ctx, db, tc.a, ledger.ActionRent, "box", func(*wtx, journal) (int, error) {
				called = true
				return 1, nil
			})
			if ledger.ErrorCode(err) != tc.code {
				t.Errorf("err = %v; want %s", err, tc.code)
			}
			if called {
				t.Error("write ran; the journal row comes first and refuses before anything else")
			}
		})
	}
}

// TestAggregates_BoundToDB checks that every aggregate DB embeds reads and
// writes through that DB, whichever way it was opened: an aggregate left
// unbound would panic on its first call.
func TestAggregates_BoundToDB(t *testing.T) {
	db := openJournaled(t)
	ro, err := OpenReadOnly(context.Background(), db.Path(), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	defer ro.Close()
	for name, d := range map[string]*DB{"Open": db, "OpenReadOnly": ro} {
		v := reflect.ValueOf(d).Elem()
		n := 0
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.Anonymous {
				continue
			}
			n++
			inner := v.Field(i).FieldByName("db")
			if !inner.IsValid() || inner.Pointer() != reflect.ValueOf(d).Pointer() {
				t.Errorf("%s: aggregate %s is not bound to its DB", name, f.Name)
			}
		}
		if n != 14 {
			t.Errorf("%s: DB embeds %d aggregates; want 14 (update this test with the cut)", name, n)
		}
	}
	// Through an aggregate alone, as a consumer holding one set sees it.
	var users ledger.UserStore = &ro.Accounts
	if u, err := users.User(context.Background(), 1); err != nil || u.ID != 1 {
		t.Errorf("Accounts.User(1) on the read-only DB = %+v, %v", u, err)
	}
}
