package sqlite_test

import (
	"context"
	"testing"
	"time"
)

// TestOpen_Migration017 builds a database at schema 16 with a connector
// in a failing run, and checks that 017 keeps the row whole, with no
// outage told, and that an outage can then be stored on it.
func TestOpen_Migration017(t *testing.T) {
	ctx := context.Background()
	path := dbAtSchema(t, 16,
		`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
			VALUES (7, 'en', '', 1320, 1800000000000, 600000000000, -1, -1, 43200000000000, 1790000000)`,
		`INSERT INTO connectors (user_id, platform, key_enc, key_hint, added_at, checked_at, last_sync_at, last_error)
			VALUES (7, 'runpod', X'0102', 'wxyz', 1790000000, 1790000100, 1790000200, 'runpod: 500')`,
	)
	db := openPath(t, path)
	cs := mustConnectors(t, db, 7)
	if len(cs) != 1 {
		t.Fatalf("connectors after 017: %+v", cs)
	}
	c := cs[0]
	if c.Hint != "wxyz" || c.LastError != "runpod: 500" || !c.LastSyncAt.Equal(time.Unix(1790000200, 0)) || c.Outage != "" || !c.OutageSince.IsZero() {
		t.Fatalf("connector after 017: %+v; want it as it was, no outage", c)
	}
	since := time.Unix(1790000150, 0).UTC()
	if err := db.MarkOutage(ctx, 7, "runpod", "unavailable", since); err != nil {
		t.Fatal(err)
	}
	if c := mustConnectors(t, db, 7)[0]; c.Outage != "unavailable" || !c.OutageSince.Equal(since) {
		t.Fatalf("after MarkOutage: %+v", c)
	}
}
