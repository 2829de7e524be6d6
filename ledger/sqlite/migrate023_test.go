package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// ledger022 is two personal ledgers as a server at schema 22 kept them:
// user 7 with a released rental (stopped and resumed once), a live one
// with an agent token, a volume on the first with a resize and a price
// change, a charge on it, a loose charge, a top-up, a typed balance, an
// undone action and a budget; user 8 with a dollar rental, an
// enrolment token and an instance it announced. t is 1790000000.
var ledger022 = []string{
	`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
		VALUES (7, 'zh', 'Asia/Shanghai', 1320, 1800000000000, 600000000000, 60, 420, 43200000000000, 1789990000)`,
	`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
		VALUES (8, 'en', 'UTC', -1, 1800000000000, 600000000000, -1, -1, 43200000000000, 1789990000)`,
	`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id, via) VALUES
		(1, 7, 'rent', 'box1', 1790000000, 1, 1, 'command'),
		(2, 7, 'stop', 'box1', 1790010800, 1, 1, 'button'),
		(3, 7, 'resume', 'box1', 1790014400, 1, 1, 'command'),
		(4, 7, 'storage', 'data1', 1790000100, 1, NULL, 'command'),
		(5, 7, 'charge', 'box1', 1790001000, 1, 1, 'command'),
		(6, 7, 'charge', 'runpod', 1790002000, 1, NULL, 'command'),
		(7, 7, 'topup', 'autodl', 1790003000, 1, NULL, 'command'),
		(8, 7, 'balance', 'autodl', 1790004000, 1, NULL, 'command'),
		(9, 7, 'rent', 'box2', 1790003600, 1, 2, 'command'),
		(10, 7, 'storage_resize', 'data1', 1790007200, 1, NULL, 'command'),
		(11, 7, 'storage_price', 'data1', 1790008000, 1, NULL, 'command'),
		(12, 7, 'release', 'box1', 1790021600, 1, 1, 'command'),
		(13, 8, 'rent', 'pod', 1790000000, 1, 3, ''),
		(14, 7, 'topup', 'autodl', 1790020000, 1, NULL, 'command'),
		(15, 7, 'undo', '', 1790020001, 0, NULL, '')`,
	`UPDATE actions SET undone_by = 15 WHERE id = 14`,
	`UPDATE actions SET volume_id = 1 WHERE id IN (4, 10, 11)`,
	`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
		currency, min_s, step_s, floor, lease_ns, created_at, released) VALUES
		(1, 7, 1, 'box1', 'autodl', 'RTX 4090', 1, 'per-second', 1, '2.00', 'hour', 'CNY', 0, 0, '0', 0, 1790000000, 1),
		(2, 7, 9, 'box2', 'autodl', 'A100', 2, 'per-second', 1, '1.50', 'hour', 'CNY', 0, 0, '0', 0, 1790003600, 0),
		(3, 8, 13, 'pod', 'runpod', 'A40', 1, 'per-second', 1, '0.79', 'hour', 'USD', 0, 0, '0', 0, 1790000000, 0)`,
	`INSERT INTO rental_events (rental_id, action_id, kind, at) VALUES
		(1, 1, 'start', 1790000000), (1, 2, 'stop', 1790010800), (1, 3, 'resume', 1790014400),
		(1, 12, 'release', 1790021600), (2, 9, 'start', 1790003600), (3, 13, 'start', 1790000000)`,
	`INSERT INTO idle_intervals (rental_id, from_at, to_at) VALUES (2, 1790005000, 1790006000)`,
	`INSERT INTO agent_tokens (rental_id, user_id, hash, issued_at) VALUES (2, 7, X'00112233', 1790003700)`,
	`INSERT INTO volumes (id, user_id, action_id, name, rental_id, platform, currency, priced, price, price_unit, free_gb, created_at)
		VALUES (1, 7, 4, 'data1', 1, 'autodl', 'CNY', 1, '0.01', 'gb_day', '20', 1790000100)`,
	`INSERT INTO volume_events (volume_id, action_id, kind, at, size_gb) VALUES
		(1, 4, 'create', 1790000100, '100'), (1, 10, 'resize', 1790007200, '200')`,
	`INSERT INTO volume_prices (volume_id, action_id, at, price, price_unit) VALUES (1, 11, 1790008000, '0.02', 'gb_day')`,
	`INSERT INTO charges (user_id, action_id, rental_id, platform, amount, currency, note, at) VALUES
		(7, 5, 1, 'autodl', '5', 'CNY', 'image', 1790001000),
		(7, 6, NULL, 'runpod', '3.5', 'USD', 'egress', 1790002000)`,
	`INSERT INTO topups (user_id, action_id, platform, amount, currency, at) VALUES (7, 7, 'autodl', '100', 'CNY', 1790003000)`,
	`INSERT INTO balances (user_id, action_id, platform, amount, currency, at) VALUES (7, 8, 'autodl', '80', 'CNY', 1790004000)`,
	`INSERT INTO budgets (user_id, currency, amount) VALUES (7, 'CNY', '500'), (8, 'USD', '50')`,
	`INSERT INTO enrol_tokens (id, user_id, hash, issued_at, instances) VALUES (1, 8, X'aabbccdd', 1789999000, 1)`,
	`INSERT INTO instances (id, user_id, token_id, key, platform, platform_id, source, hostname, gpu_model, gpu_count,
		boot_at, first_seen, last_seen, state) VALUES
		(1, 8, 1, 'runpod:p1', 'runpod', 'p1', 'env RUNPOD_POD_ID', 'host-p1', 'A40', 1, 1789999500, 1790000000, 1790000000, 'pending')`,
}

// TestMigrate023_KeepsPersonalLedgers builds a database at schema 22
// holding two personal ledgers and opens it with today's code, which
// migrates it to 023. Every row and every column of the tables 022 had
// must be as it was (the columns 023 adds are 0 or empty on every old row),
// and each user's export must be byte-identical to the one the same code
// makes from the same rows written straight into a database created at
// today's schema: the migration changed nothing a personal ledger shows.
// The export's totals are checked against the sums of what was inserted,
// so the comparison is of real figures, not of two empty files.
func TestMigrate023_KeepsPersonalLedgers(t *testing.T) {
	ctx := context.Background()
	oldPath := dbAtSchema(t, 22, ledger022...)
	before := namedTables(t, oldPath)
	migrated := openPath(t, oldPath)
	after := namedTables(t, oldPath)

	added := map[string]map[string]string{
		"rentals":      {"owner": "0", "project": ""},
		"volumes":      {"owner": "0", "project": ""},
		"charges":      {"owner": "0", "project": ""},
		"actions":      {"by_id": "0"},
		"enrol_tokens": {"created_by": "0"},
		"agent_tokens": {"issued_by": "0"}, // 025's
	}
	for tbl, rows := range before {
		if tbl == "schema_migrations" {
			continue
		}
		got := after[tbl]
		if len(got) != len(rows) {
			t.Fatalf("table %s: %d rows after 023, %d before", tbl, len(got), len(rows))
		}
		for i, row := range got {
			for col, want := range added[tbl] {
				if v, ok := row[col]; !ok || v != want {
					t.Fatalf("table %s row %d: new column %s = %q (present %v), want %q", tbl, i, col, v, ok, want)
				}
				delete(row, col)
			}
			if !reflect.DeepEqual(row, rows[i]) {
				t.Fatalf("table %s row %d after 023:\n%v\nwant\n%v", tbl, i, row, rows[i])
			}
		}
	}
	for tbl := range after {
		if _, ok := before[tbl]; !ok && len(after[tbl]) != 0 && tbl != "schema_migrations" {
			t.Errorf("023 wrote rows into its new table %s: %v", tbl, after[tbl])
		}
	}

	fresh := openPath(t, dbAtSchema(t, 23, ledger022...))
	asOf := time.Unix(1790030000, 0)
	for _, user := range []int64{7, 8} {
		got := exportOf(t, ctx, migrated, user, asOf)
		want := exportOf(t, ctx, fresh, user, asOf)
		if !bytes.Equal(got, want) {
			t.Fatalf("user %d's export after 023 differs from the same rows at today's schema:\n%s\nwant\n%s", user, got, want)
		}
		for _, name := range map[int64][]string{7: {`"box1"`, `"box2"`, `"data1"`, `"egress"`, `"image"`}, 8: {`"pod"`}}[user] {
			if !bytes.Contains(got, []byte(name)) {
				t.Errorf("user %d's export lacks %s:\n%s", user, name, got)
			}
		}
		for _, key := range []string{`"owner"`, `"project"`, `"team"`} {
			if bytes.Contains(got, []byte(key)) {
				t.Errorf("user %d's personal export gained %s", user, key)
			}
		}
	}

	// The figures: box1 ran 3 h + 2 h at ¥2.00/h = ¥10.00; box2 runs from
	// 1790003600 to asOf (26400 s) at ¥1.50/h = ¥11.00; the charge on box1
	// is ¥5; the loose charge $3.50; the pod ran 30000 s at $0.79/h.
	book, err := migrated.Book(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	st := ledger.StatementAsOf(book, asOf)
	if len(book.Rentals) != 2 || len(book.Volumes) != 1 || len(book.Charges) != 2 || len(book.Volumes[0].Events) != 2 {
		t.Fatalf("user 7's book after 023: %d rentals, %d volumes, %d charges", len(book.Rentals), len(book.Volumes), len(book.Charges))
	}
	for _, r := range book.Rentals {
		if r.Owner != 0 || r.Project != "" {
			t.Errorf("rental %s after 023: owner %d project %q", r.Name, r.Owner, r.Project)
		}
	}
	wantCost := map[string]string{"box1": "10.00", "box2": "11.00"}
	for _, rs := range st.Rentals {
		if w, ok := wantCost[rs.Rental.Name]; ok {
			if got := rs.Compute.String(); got != w {
				t.Errorf("%s cost after 023 = %s, want %s", rs.Rental.Name, got, w)
			}
			delete(wantCost, rs.Rental.Name)
		}
	}
	if len(wantCost) != 0 {
		t.Errorf("rentals missing from user 7's statement: %v", wantCost)
	}
}

// namedTables returns every row of every table of the file at path, each
// as column name → value text, in rowid order.
func namedTables(t *testing.T, path string) map[string][]map[string]string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
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
	out := map[string][]map[string]string{}
	for _, tbl := range tables {
		rows, err := raw.Query(`SELECT * FROM "` + tbl + `" ORDER BY rowid`)
		if err != nil {
			// A WITHOUT ROWID table: its key orders it.
			if rows, err = raw.Query(`SELECT * FROM "` + tbl + `" ORDER BY 1, 2`); err != nil {
				t.Fatal(err)
			}
		}
		cols, _ := rows.Columns()
		out[tbl] = []map[string]string{}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for i, c := range cols {
				m[c] = fmt.Sprintf("%v", vals[i])
			}
			out[tbl] = append(out[tbl], m)
		}
		rows.Close()
	}
	return out
}

// exportOf is user's JSON export as of asOf.
func exportOf(t *testing.T, ctx context.Context, db interface {
	Book(context.Context, int64) (*ledger.Book, error)
}, user int64, asOf time.Time) []byte {
	t.Helper()
	book, err := db.Book(ctx, user)
	if err != nil {
		t.Fatalf("Book(%d): %v", user, err)
	}
	var b strings.Builder
	if err := ledger.WriteExportJSON(&b, book, asOf); err != nil {
		t.Fatalf("export of %d: %v", user, err)
	}
	return []byte(b.String())
}
