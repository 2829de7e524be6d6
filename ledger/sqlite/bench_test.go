package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// seedHistory gives user 1 of db a history of rentals with eventsEach
// events each (start, then stops and resumes with a price change every
// tenth event), all before t0, written in one transaction straight into
// the file: going through the API would take one transaction per event.
// It returns each rental's name and state.
func seedHistory(b *testing.B, db *sqlite.DB, rentals, eventsEach int) (names []string, stopped []bool) {
	b.Helper()
	ctx := context.Background()
	mustUser(b, db, 1)
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
	if _, err := tx.Exec(`INSERT INTO actions (id, user_id, kind, at, undoable) VALUES (1000000, 1, 'seed', ?, 0)`, t0.Unix()); err != nil {
		b.Fatal(err)
	}
	insRental, err := tx.Prepare(`INSERT INTO rentals (user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price,
		price_unit, currency, min_s, step_s, floor, lease_ns, created_at)
		VALUES (1, 1000000, ?, 'autodl', 'RTX 4090', 1, 'per-second', 1, '1.88', 'hour', 'CNY', 0, 0, '0', 0, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	insEvent, err := tx.Prepare(`INSERT INTO rental_events (rental_id, action_id, kind, at, price, price_unit) VALUES (?, 1000000, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	// A year of history: rentals spread over the year before t0.
	span := 365 * 24 * time.Hour
	for i := range rentals {
		name := fmt.Sprintf("r%04d", i)
		start := t0.Add(-span + time.Duration(i)*span/time.Duration(rentals))
		res, err := insRental.Exec(name, start.Unix())
		if err != nil {
			b.Fatal(err)
		}
		id, _ := res.LastInsertId()
		when := start
		if _, err := insEvent.Exec(id, "start", when.Unix(), nil, nil); err != nil {
			b.Fatal(err)
		}
		isStopped := false
		for e := 1; e < eventsEach; e++ {
			when = when.Add(time.Minute)
			var kind string
			var price any
			switch {
			case e%10 == 5:
				kind, price = "price", fmt.Sprintf("1.%02d", e%100)
			case isStopped:
				kind, isStopped = "resume", false
			default:
				kind, isStopped = "stop", true
			}
			unit := any(nil)
			if price != nil {
				unit = "hour"
			}
			if _, err := insEvent.Exec(id, kind, when.Unix(), price, unit); err != nil {
				b.Fatal(err)
			}
		}
		names = append(names, name)
		stopped = append(stopped, isStopped)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return names, stopped
}

// BenchmarkAppendEvent records one event (one write transaction: journal,
// load and check the rental, insert) on a database holding 1,000
// rentals with 10 events each; appends go round-robin over the rentals.
func BenchmarkAppendEvent(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	names, stopped := seedHistory(b, db, 1000, 10)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		j := i % len(names)
		kind := ledger.EventStop
		if stopped[j] {
			kind = ledger.EventResume
		}
		if _, err := db.AppendEvent(ctx, act(1), names[j], ledger.Event{Kind: kind, At: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			b.Fatal(err)
		}
		stopped[j] = !stopped[j]
		i++
	}
}

// BenchmarkBook loads a user with 1,000 rentals and 100,000 events.
func BenchmarkBook(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	seedHistory(b, db, 1000, 100)
	b.ReportAllocs()
	for b.Loop() {
		bk, err := db.Book(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(bk.Rentals) != 1000 || len(bk.Rentals[999].Events) != 100 {
			b.Fatalf("Book has %d rentals", len(bk.Rentals))
		}
	}
}

// seedDelivered gives each of user 1's rentals in db a bench (8 GPUs)
// and runs job runs spread over them, written in one transaction straight
// into the file as seedHistory does.
func seedDelivered(b *testing.B, db *sqlite.DB, runs int) {
	b.Helper()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	var ids []int64
	rows, err := raw.QueryContext(ctx, `SELECT id FROM rentals WHERE user_id = 1 ORDER BY id`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	bench := aBench()
	for i := 1; i < 8; i++ {
		g := bench.GPUs[0]
		g.Index = i
		bench.GPUs = append(bench.GPUs, g)
	}
	body, err := json.Marshal(bench)
	if err != nil {
		b.Fatal(err)
	}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	for i, id := range ids {
		if _, err := tx.Exec(`INSERT INTO benches (rental_id, user_id, report_id, received_at, bench, bounded) VALUES (?, 1, ?, ?, ?, '[]')`,
			id, fmt.Sprintf("rep%d", i), t0.Add(-time.Duration(len(ids)-i)*time.Hour).Unix(), string(body)); err != nil {
			b.Fatal(err)
		}
	}
	for i := range runs {
		start := t0.Add(-time.Duration(runs-i) * 10 * time.Minute)
		if _, err := tx.Exec(`INSERT INTO job_runs (rental_id, user_id, label, command, started_at, ended_at, exit_code, source, created_at)
			VALUES (?, 1, 'train', 'python train.py --epochs 3 --batch 64', ?, ?, 0, 'agent', ?)`,
			ids[i%len(ids)], start.Unix(), start.Add(8*time.Minute).Unix(), start.Add(8*time.Minute).Unix()); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBook_Delivered loads the book of a user with 300 rentals of
// 10 events each, a bench of 8 GPUs for each rental and 3,000 job runs:
// what every chat command, dashboard request and card loads.
func BenchmarkBook_Delivered(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	seedHistory(b, db, 300, 10)
	seedDelivered(b, db, 3000)
	b.ReportAllocs()
	for b.Loop() {
		bk, err := db.Book(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(bk.Rentals) != 300 {
			b.Fatalf("Book has %d rentals", len(bk.Rentals))
		}
	}
}
