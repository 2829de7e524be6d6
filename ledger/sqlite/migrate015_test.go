package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestOpen_Migration015 builds a database at schema 14 with a typed
// balance and a rental, and checks that 015 keeps both: the balance is a
// typed one (its undo still removes it), the rental has no platform ID.
func TestOpen_Migration015(t *testing.T) {
	ctx := context.Background()
	path := dbAtSchema(t, 14,
		`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
			VALUES (7, 'en', '', 1320, 1800000000000, 600000000000, -1, -1, 43200000000000, 1790000000)`,
		`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id) VALUES (1, 7, 'rent', 'old', 1790000000, 1, 1)`,
		`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
			currency, min_s, step_s, floor, lease_ns, created_at)
			VALUES (1, 7, 1, 'old', 'runpod', 'A40', 1, 'per-second', 1, '0.4', 'hour', 'USD', 0, 0, '0', 0, 1790000000)`,
		`INSERT INTO rental_events (rental_id, action_id, kind, at) VALUES (1, 1, 'start', 1790000000)`,
		`INSERT INTO actions (id, user_id, kind, name, at, undoable) VALUES (2, 7, 'balance', 'runpod', 1790000100, 1)`,
		`INSERT INTO balances (user_id, action_id, platform, amount, currency, at) VALUES (7, 2, 'runpod', '25.5', 'USD', 1790000100)`,
	)

	db := openPath(t, path)
	b, err := db.Book(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Balances) != 1 || b.Balances[0].API || b.Balances[0].Amount.String() != "25.5" {
		t.Fatalf("balances after 015 = %+v, want the typed 25.5", b.Balances)
	}
	if len(b.Rentals) != 1 || b.Rentals[0].PlatformID != "" {
		t.Fatalf("rentals after 015 = %+v", b.Rentals)
	}
	if res, err := db.Undo(ctx, ledger.Action{UserID: 7}); err != nil || res.Kind != ledger.ActionBalance {
		t.Fatalf("Undo = %+v, %v; want the typed balance", res, err)
	}
	if b, _ := db.Book(ctx, 7); len(b.Balances) != 0 {
		t.Fatalf("the typed balance survived its undo: %+v", b.Balances)
	}
	// The CHECKs hold even for a write that skips the store's checks.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		`INSERT INTO balances (user_id, action_id, platform, amount, currency, at, source) VALUES (7, NULL, 'runpod', '1', 'USD', 1, 'typed')`,
		`INSERT INTO balances (user_id, action_id, platform, amount, currency, at, source) VALUES (7, 1, 'runpod', '1', 'USD', 1, 'api')`,
		`UPDATE rentals SET platform_id = 'a' || char(10) || 'b' WHERE id = 1`,
		`UPDATE rentals SET platform_id = '' WHERE id = 1`,
		fmt.Sprintf(`UPDATE rentals SET platform_id = '%0129d' WHERE id = 1`, 0),
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, first_seen, last_seen) VALUES (7, 'runpod', 'p', 'bound', 1, 1)`,
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, rental_id, first_seen, last_seen) VALUES (7, 'runpod', 'p', 'asked', 1, 1, 1)`,
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, gpu_count, first_seen, last_seen) VALUES (7, 'runpod', 'p', 'asked', -1, 1, 1)`,
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, first_seen, last_seen) VALUES (7, 'runpod', 'p', 'maybe', 1, 1)`,
	} {
		if _, err := raw.Exec(q); err == nil {
			t.Errorf("the schema took %s", q)
		}
	}
}
