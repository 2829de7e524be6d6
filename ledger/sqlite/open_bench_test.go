package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// seedAgentYear adds a year of agent history for each of the first
// agents rentals of user 1: one hourly roll-up per hour (8,760 each), a
// day of raw 30 s heartbeats (2,880 each), and an idle interval and a
// decision a day, the rows that make up most of a long-lived ledger.
func seedAgentYear(b *testing.B, db *sqlite.DB, agents int) {
	b.Helper()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	prep := func(q string) *sql.Stmt {
		s, err := tx.Prepare(q)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	hour := prep(`INSERT INTO agent_hours (rental_id, hour, busy_s, idle_s, unknown_s, beats, util_sum, util_n, util_max) VALUES (?, ?, 2400, 1200, 0, 120, 60000, 120, 1000)`)
	beat := prep(`INSERT INTO agent_beats (rental_id, at, verdict, busy_s, idle_s, unknown_s, util_mean, util_max, job_alive, samples) VALUES (?, ?, 'busy', 30, 0, 0, 870, 1000, 1, 6)`)
	idle := prep(`INSERT INTO idle_intervals (rental_id, from_at, to_at, last_at) VALUES (?, ?, ?, ?)`)
	dec := prep(`INSERT INTO decisions (user_id, rental_id, at, kind, summary, evidence) VALUES (1, ?, ?, 'warn', 'idle warning shown', 'idle 31m since 10:02, ¥0.97 spent idle, policy notify')`)
	start := t0.Add(-365 * 24 * time.Hour).Unix()
	for r := int64(1); r <= int64(agents); r++ {
		for h := int64(0); h < 8760; h++ {
			if _, err := hour.Exec(r, start+h*3600); err != nil {
				b.Fatal(err)
			}
		}
		for i := int64(0); i < 2880; i++ {
			if _, err := beat.Exec(r, t0.Unix()-86400+i*30); err != nil {
				b.Fatal(err)
			}
		}
		for d := int64(0); d < 365; d++ {
			at := start + d*86400
			if _, err := idle.Exec(r, at, at+1800, at+1800); err != nil {
				b.Fatal(err)
			}
			if _, err := dec.Exec(r, at); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpen_Check measures the start-up check on a year-sized ledger:
// 1,000 rentals with 100 events each and a year of agent history for 50
// of them (438,000 hourly roll-ups, 144,000 raw heartbeats). QuickCheck is
// the PRAGMA Open runs; IntegrityCheck, for comparison, the full check it
// does not run; Open is the whole Open (checks, migrations, pools).
func BenchmarkOpen_Check(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	seedHistory(b, db, 1000, 100)
	seedAgentYear(b, db, 50)
	path := db.Path()
	db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	mb := float64(fi.Size()) / (1 << 20)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for _, pragma := range []string{"quick_check", "integrity_check"} {
		b.Run(map[string]string{"quick_check": "QuickCheck", "integrity_check": "IntegrityCheck"}[pragma], func(b *testing.B) {
			for b.Loop() {
				var msg string
				if err := raw.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&msg); err != nil || msg != "ok" {
					b.Fatalf("%s = %q, %v", pragma, msg, err)
				}
			}
			b.ReportMetric(mb, "MB")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/mb, "ms/MB")
		})
	}
	b.Run("Open", func(b *testing.B) {
		for b.Loop() {
			db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
			if err != nil {
				b.Fatal(err)
			}
			db.Close()
		}
		b.ReportMetric(mb, "MB")
	})
}
