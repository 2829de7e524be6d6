package sqlite_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestMigrate024_KeepsApprovals builds a database at schema 23 with a
// team whose approvals are pending, approved (reminded), stopped and a
// month bound's, and opens it with today's code, which rebuilds
// team_approvals for the lapsed state (024). Every row of every table
// is as it was, the index and the unique key are kept, and the migrated
// approvals work: a pending one lapses, the unique key still holds.
func TestMigrate024_KeepsApprovals(t *testing.T) {
	ctx := context.Background()
	tl := ledger.TeamLedger(1)
	seed := append([]string{}, ledger022...)
	seed = append(seed,
		fmt.Sprintf(`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
			VALUES (%d, 'en', 'UTC', -1, 1800000000000, 600000000000, -1, -1, 43200000000000, 1789990000)`, tl),
		`INSERT INTO teams (id, name, name_key, created_by, created_at) VALUES (1, 'Lab', 'lab', 7, 1789990000)`,
		`INSERT INTO team_members (team_id, user_id, username, role, joined_at) VALUES (1, 7, 'ann', 'owner', 1789990000), (1, 8, 'ben', 'member', 1789990000)`,
		fmt.Sprintf(`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id, via, by_id) VALUES
			(16, %[1]d, 'rent', 'box5', 1790000000, 1, 4, 'command', 8), (17, %[1]d, 'rent', 'box6', 1790000000, 1, 5, 'command', 8)`, tl),
		fmt.Sprintf(`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
			currency, min_s, step_s, floor, lease_ns, created_at, released, owner, project) VALUES
			(4, %[1]d, 16, 'box5', 'autodl', 'A100', 2, 'per-second', 1, '7.00', 'hour', 'CNY', 0, 0, '0', 0, 1790000000, 0, 8, 'llm'),
			(5, %[1]d, 17, 'box6', 'autodl', 'A100', 1, 'per-second', 1, '7.00', 'hour', 'CNY', 0, 0, '0', 0, 1790000000, 0, 8, '')`, tl),
		`INSERT INTO team_limits (team_id, scope, subject, currency, rate, gpus, month, set_by, set_at) VALUES (1, 'member', '8', 'CNY', '10', 2, '100', 7, 1789995000)`,
		`INSERT INTO team_approvals (id, team_id, rental_id, owner, scope, subject, kind, currency, lim, value, state,
			created_at, decided_by, decided_at, reminded_at, period) VALUES
			(1, 1, 4, 8, 'member', '8', 'rate', 'CNY', '10', '14', 'pending', 1790000100, NULL, NULL, NULL, ''),
			(2, 1, 4, 8, 'member', '8', 'gpus', 'CNY', '2', '3', 'approved', 1790000100, 7, 1790000200, 1790003700, ''),
			(3, 1, 5, 8, 'member', '8', 'rate', 'CNY', '10', '14', 'stopped', 1790000100, 7, 1790000300, NULL, ''),
			(4, 1, 4, 8, 'member', '8', 'month', 'CNY', '100', '120.5', 'pending', 1790000100, NULL, NULL, 1790003800, '2026-09')`,
	)
	oldPath := dbAtSchema(t, 23, seed...)
	before := namedTables(t, oldPath)
	if len(before["team_approvals"]) != 4 {
		t.Fatalf("the seed holds %d approvals, want 4", len(before["team_approvals"]))
	}
	migrated := openPath(t, oldPath)
	after := namedTables(t, oldPath)
	// 025 adds agent_tokens.issued_by, 0 on every old row.
	for i, row := range after["agent_tokens"] {
		if v, ok := row["issued_by"]; !ok || v != "0" {
			t.Fatalf("agent_tokens row %d: issued_by = %q (present %v), want 0", i, v, ok)
		}
		delete(row, "issued_by")
	}
	for tbl, rows := range before {
		if tbl == "schema_migrations" {
			continue
		}
		if !reflect.DeepEqual(after[tbl], rows) {
			t.Fatalf("table %s after 024:\n%v\nwant\n%v", tbl, after[tbl], rows)
		}
	}
	if n := len(after["team_approval_cards"]); n != 0 {
		t.Fatalf("024 wrote %d approval cards", n)
	}
	if n := rawInt(t, migrated, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'team_approvals_team' AND tbl_name = 'team_approvals'`); n != 1 {
		t.Fatalf("index team_approvals_team after 024: %d", n)
	}

	// The rows read back as they were stored, through the store.
	all, err := migrated.Approvals(ctx, 1, "")
	if err != nil || len(all) != 4 {
		t.Fatalf("Approvals after 024 = %v, %v", all, err)
	}
	if a := all[1]; a.State != ledger.ApprovalApproved || a.DecidedBy != 7 || !a.DecidedAt.Equal(time.Unix(1790000200, 0)) ||
		!a.RemindedAt.Equal(time.Unix(1790003700, 0)) || a.Limit.String() != "2" || a.Value.String() != "3" {
		t.Fatalf("approval 2 after 024 = %+v", a)
	}
	if a := all[3]; a.Period != "2026-09" || a.Kind != ledger.LimitMonth || a.Value.String() != "120.5" || a.State != ledger.ApprovalPending {
		t.Fatalf("approval 4 after 024 = %+v", a)
	}
	// The unique key holds: the stored approved one is found, not doubled.
	same, created, err := migrated.OpenApproval(ctx, ledger.Approval{TeamID: 1, RentalID: 4, Scope: ledger.ScopeMember, Subject: "8",
		Kind: ledger.LimitGPUs, Currency: ledger.CNY, Limit: ledger.MustDecimal("2"), Value: ledger.MustDecimal("3")})
	if err != nil || created || same.ID != 2 {
		t.Fatalf("OpenApproval of the stored key after 024 = %+v, %v, %v", same, created, err)
	}
	// The new state is accepted.
	if got, lapsed, err := migrated.LapseApproval(ctx, 1, time.Unix(1790010000, 0)); err != nil || !lapsed || got.State != ledger.ApprovalLapsed {
		t.Fatalf("LapseApproval after 024 = %+v, %v, %v", got, lapsed, err)
	}
	if n := rawInt(t, migrated, `SELECT count(*) FROM team_approvals`); n != 4 {
		t.Fatalf("%d approvals after 024 and a lapse, want 4", n)
	}
}
