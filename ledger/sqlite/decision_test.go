package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_DecisionMessages: a decision's summary and evidence messages
// come back with their keys and each argument of the type it was written
// with; its English text is kept beside them.
func TestDB_DecisionMessages(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	warned := time.Date(2026, 11, 1, 2, 2, 0, 0, time.UTC)
	d := ledger.Decision{UserID: 1, RentalID: r.ID, At: at(time.Hour), Kind: ledger.DecisionHold,
		Summary: "automatic action held back", Evidence: "grace period: warned 10:02, acting not before 10:32",
		SummaryMsg:  ledger.Msg("held"),
		EvidenceMsg: ledger.Msg(ledger.AutoGrace, warned, warned.Add(30*time.Minute))}
	if _, err := db.AddDecision(ctx, d); err != nil {
		t.Fatal(err)
	}
	ds, err := db.Decisions(ctx, r.ID, 5)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Decisions = %+v, %v", ds, err)
	}
	got := ds[0]
	if got.Summary != d.Summary || got.Evidence != d.Evidence {
		t.Errorf("English text = %q / %q", got.Summary, got.Evidence)
	}
	if !reflect.DeepEqual(got.SummaryMsg, d.SummaryMsg) || !reflect.DeepEqual(got.EvidenceMsg, d.EvidenceMsg) {
		t.Errorf("messages = %#v / %#v, want %#v / %#v", got.SummaryMsg, got.EvidenceMsg, d.SummaryMsg, d.EvidenceMsg)
	}
	if _, ok := got.EvidenceMsg.Args[0].(time.Time); !ok {
		t.Errorf("a time came back as %T", got.EvidenceMsg.Args[0])
	}

	t.Run("ErrInvalid", func(t *testing.T) {
		bad := d
		bad.EvidenceMsg = ledger.Msg("k", 1.5)
		if _, err := db.AddDecision(ctx, bad); ledger.ErrorCode(err) != ledger.EINVALID {
			t.Fatalf("a float argument: %v, want EINVALID", err)
		}
		if ds, _ := db.Decisions(ctx, r.ID, 5); len(ds) != 1 {
			t.Fatalf("a refused decision was stored: %+v", ds)
		}
	})
}

// TestOpen_OldDecisionRow: a decision written before messages were kept
// (schema 009) reads back, after the migration, with its English text as
// it was and no message.
func TestOpen_OldDecisionRow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v9.db")
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("building a v9 database: %v\n%s", err, q)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`)
	files, _ := filepath.Glob("migration/00*.sql")
	if len(files) != 9 {
		t.Fatalf("migrations 001..009: %v", files)
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(b))
		exec(fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', 1790000000)`, i+1, filepath.Base(f)))
		if i == 0 { // rows as version 1 had them; the later migrations carry them on
			exec(`INSERT INTO users VALUES (7, 'zh', 'Asia/Shanghai', 1320, 1800000000000, 600000000000, -1, -1, 43200000000000, '0', '', 1790000000)`)
			exec(`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id) VALUES (1, 7, 'rent', 'old', 1790000000, 1, 1)`)
			exec(`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
				currency, min_s, step_s, floor, lease_ns, created_at)
				VALUES (1, 7, 1, 'old', 'autodl', 'RTX 3090', 1, 'per-second', 1, '1.32', 'hour', 'CNY', 0, 0, '0', 0, 1790000000)`)
			exec(`INSERT INTO rental_events (rental_id, action_id, kind, at) VALUES (1, 1, 'start', 1790000000)`)
		}
	}
	exec(`INSERT INTO decisions (user_id, rental_id, at, kind, summary, evidence)
		VALUES (7, 1, 1790003600, 'hold', 'automatic action held back', 'grace period: warned 10:02:00, acting not before 10:32:00')`)
	raw.Close()

	db := openPath(t, path)
	ds, err := db.Decisions(ctx, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("decisions after the migration: %+v", ds)
	}
	d := ds[0]
	if d.Summary != "automatic action held back" || d.Evidence != "grace period: warned 10:02:00, acting not before 10:32:00" ||
		d.Kind != ledger.DecisionHold || !d.At.Equal(time.Unix(1790003600, 0)) {
		t.Fatalf("old decision changed: %+v", d)
	}
	if !d.SummaryMsg.IsZero() || !d.EvidenceMsg.IsZero() {
		t.Fatalf("an old decision has messages: %+v", d)
	}
}
