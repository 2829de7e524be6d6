package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

func aBench() perf.Bench {
	return perf.Bench{
		StartedAt: t0.Add(time.Minute), WallSeconds: 1.2, GPUSeconds: 0.8, Source: "cuda",
		DriverVersion: "580.159.04", CUDADriver: "13.0",
		GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 152.5, MemGBps: 950,
			PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16, PowerLimitW: 450, PowerDefaultW: 450}},
		Host:    perf.Host{CPUCores: 16, DiskWriteMBps: 1800, DiskReadMBps: 2100},
		Skipped: []perf.Skip{{What: "download_mbps", GPU: -1, Why: "no download URL set"}},
	}
}

// TestBenches_AddIdempotent: a bench is stored with its rental and its
// user (the store's, not the caller's), read back whole; the same report
// ID again stores nothing and returns the first; another ID is a second.
func TestBenches_AddIdempotent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", at(0))
	rec := ledger.BenchRecord{RentalID: r.ID, UserID: 999, ReportID: "a1", At: at(2 * time.Minute), Bench: aBench(), Bounded: []string{"gpu0.fp32_tflops"}}
	got, added, err := db.AddBench(ctx, rec)
	if err != nil || !added {
		t.Fatalf("AddBench = %v, %v", added, err)
	}
	if got.ID == 0 || got.UserID != 1 || got.RentalID != r.ID || !got.At.Equal(at(2*time.Minute)) ||
		!reflect.DeepEqual(got.Bench, aBench()) || !reflect.DeepEqual(got.Bounded, []string{"gpu0.fp32_tflops"}) {
		t.Fatalf("stored %+v", got)
	}
	again := rec
	again.At, again.Bench.WallSeconds = at(3*time.Minute), 99
	dup, added, err := db.AddBench(ctx, again)
	if err != nil || added || dup.ID != got.ID || dup.Bench.WallSeconds != 1.2 {
		t.Fatalf("AddBench again = %+v, %v, %v; want the first, not added", dup, added, err)
	}
	rec.ReportID = "b2"
	if _, added, err := db.AddBench(ctx, rec); err != nil || !added {
		t.Fatalf("AddBench of another run = %v, %v", added, err)
	}
	bs, err := db.Benches(ctx, 1, r.ID)
	if err != nil || len(bs) != 2 || bs[0].ReportID != "a1" || bs[1].ReportID != "b2" {
		t.Fatalf("Benches = %+v, %v", bs, err)
	}
	if ok, err := db.HasBench(ctx, r.ID); err != nil || !ok {
		t.Fatalf("HasBench = %v, %v", ok, err)
	}
	other := mustRent(t, db, 1, "box2", at(0))
	if ok, err := db.HasBench(ctx, other.ID); err != nil || ok {
		t.Fatalf("HasBench of a rental without = %v, %v", ok, err)
	}
}

// TestBenches_BadInput: a report without an ID or for no rental is
// refused with a keyed error and changes nothing.
func TestBenches_BadInput(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", at(0))
	for _, id := range []string{"", strings.Repeat("x", 65)} {
		unchanged(t, db, ledger.EINVALID, func() error {
			_, _, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID, ReportID: id, Bench: aBench()})
			return err
		})
	}
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, _, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID + 100, ReportID: "a", Bench: aBench()})
		return err
	})
	// Bounded names over the store's 4 KiB are refused with that limit
	// named, not the bench's 128 KiB (the hub caps them well within).
	many := make([]string, 200)
	for i := range many {
		many[i] = fmt.Sprintf("gpus[%d].sm_clock_bench_mhz", i%16)
	}
	unchanged(t, db, ledger.EINVALID, func() error {
		_, _, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID, ReportID: "a", Bench: aBench(), Bounded: many})
		if err != nil && (!strings.Contains(err.Error(), "bounded names") || !strings.Contains(err.Error(), " 4096")) {
			t.Errorf("error %q does not name the bounded names' limit", err)
		}
		return err
	})
	for _, run := range []ledger.JobRun{
		{RentalID: r.ID, UserID: 1, Label: "bad label", StartedAt: at(time.Minute), EndedAt: at(2 * time.Minute), Source: ledger.JobFromAgent},
		{RentalID: r.ID, UserID: 1, Label: "", StartedAt: at(time.Minute), EndedAt: at(2 * time.Minute), Source: ledger.JobFromChat},
		{RentalID: r.ID, UserID: 1, Label: "ok", StartedAt: at(2 * time.Minute), EndedAt: at(time.Minute), Source: ledger.JobFromChat},
		{RentalID: r.ID, UserID: 1, Label: "ok", EndedAt: at(time.Minute), Source: ledger.JobFromAgent},
		{RentalID: r.ID, UserID: 1, Label: "ok", StartedAt: at(time.Minute), EndedAt: at(2 * time.Minute), Source: "mail"},
	} {
		unchanged(t, db, ledger.EINVALID, func() error { _, _, err := db.AddJobRun(ctx, run); return err })
	}
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.SetFirstWork(ctx, r.ID+100, at(time.Minute))
		return err
	})
}

// TestBenches_OtherUser: a user reading another's rental gets nothing,
// and cannot name a span of it.
func TestBenches_OtherUser(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	r := mustRent(t, db, 1, "box1", at(0))
	if _, _, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID, ReportID: "a", Bench: aBench()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddJobRun(ctx, ledger.JobRun{RentalID: r.ID, Label: "yolo", StartedAt: at(time.Minute), EndedAt: at(9 * time.Minute), Source: ledger.JobFromAgent}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetFirstWork(ctx, r.ID, at(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if bs, err := db.Benches(ctx, 2, r.ID); err != nil || len(bs) != 0 {
		t.Fatalf("user 2's Benches of user 1's rental = %+v, %v", bs, err)
	}
	if bs, err := db.UserBenches(ctx, 2); err != nil || len(bs) != 0 {
		t.Fatalf("user 2's UserBenches = %+v, %v", bs, err)
	}
	if js, err := db.JobRuns(ctx, 2, ""); err != nil || len(js) != 0 {
		t.Fatalf("user 2's JobRuns = %+v, %v", js, err)
	}
	if fw, err := db.FirstWorks(ctx, 2); err != nil || len(fw) != 0 {
		t.Fatalf("user 2's FirstWorks = %+v, %v", fw, err)
	}
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, _, err := db.AddJobRun(ctx, ledger.JobRun{RentalID: r.ID, UserID: 2, Label: "mine", StartedAt: at(time.Minute), EndedAt: at(2 * time.Minute), Source: ledger.JobFromChat})
		return err
	})
	if bs, err := db.UserBenches(ctx, 1); err != nil || len(bs) != 1 {
		t.Fatalf("user 1's UserBenches = %+v, %v", bs, err)
	}
	if fw, err := db.FirstWorks(ctx, 1); err != nil || !fw[r.ID].Equal(at(5*time.Minute)) {
		t.Fatalf("user 1's FirstWorks = %+v, %v", fw, err)
	}
}

// TestBenches_ConcurrentSameReport: agents retrying one report at once
// store it once; every caller gets the same row, exactly one "added".
func TestBenches_ConcurrentSameReport(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", at(0))
	const n = 8
	var wg sync.WaitGroup
	ids := make([]int64, n)
	adds := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, added, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID, ReportID: "same", Bench: aBench()})
			ids[i], adds[i], errs[i] = rec.ID, added, err
		}()
	}
	wg.Wait()
	added := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("AddBench %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("AddBench returned rows %v", ids)
		}
		if adds[i] {
			added++
		}
	}
	if added != 1 {
		t.Fatalf("%d of %d calls added the bench, want 1", added, n)
	}
	if bs, _ := db.Benches(ctx, 1, r.ID); len(bs) != 1 {
		t.Fatalf("%d benches stored, want 1", len(bs))
	}
}

// TestJobRuns_AgentOnce: an agent's run is stored once per rental and
// start (a resent heartbeat, a restarted agent), its label and exit code
// kept; spans named in chat are each stored; JobRuns filters by label.
func TestJobRuns_AgentOnce(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", at(0))
	run := ledger.JobRun{RentalID: r.ID, Label: "yolo-epoch", Command: "python train.py", StartedAt: at(time.Minute),
		EndedAt: at(31 * time.Minute), ExitCode: 0, Source: ledger.JobFromAgent}
	first, added, err := db.AddJobRun(ctx, run)
	if err != nil || !added || first.UserID != 1 || first.Label != "yolo-epoch" || first.Duration() != 30*time.Minute || !first.Succeeded() {
		t.Fatalf("AddJobRun = %+v, %v, %v", first, added, err)
	}
	run.ExitCode, run.EndedAt = 1, at(40*time.Minute)
	again, added, err := db.AddJobRun(ctx, run)
	if err != nil || added || again.ID != first.ID || again.ExitCode != 0 {
		t.Fatalf("AddJobRun again = %+v, %v, %v; want the first, not added", again, added, err)
	}
	unlabelled := ledger.JobRun{RentalID: r.ID, StartedAt: at(50 * time.Minute), EndedAt: at(55 * time.Minute), ExitCode: 2, Source: ledger.JobFromAgent}
	if got, added, err := db.AddJobRun(ctx, unlabelled); err != nil || !added || got.Succeeded() {
		t.Fatalf("unlabelled AddJobRun = %+v, %v, %v", got, added, err)
	}
	chat := ledger.JobRun{RentalID: r.ID, UserID: 1, Label: "yolo-epoch", StartedAt: at(time.Minute), EndedAt: at(31 * time.Minute), Source: ledger.JobFromChat}
	for range 2 {
		if _, added, err := db.AddJobRun(ctx, chat); err != nil || !added {
			t.Fatalf("chat AddJobRun = %v, %v", added, err)
		}
	}
	all, err := db.JobRuns(ctx, 1, "")
	if err != nil || len(all) != 4 {
		t.Fatalf("JobRuns(all) = %+v, %v", all, err)
	}
	yolo, err := db.JobRuns(ctx, 1, "yolo-epoch")
	if err != nil || len(yolo) != 3 {
		t.Fatalf("JobRuns(yolo-epoch) = %+v, %v", yolo, err)
	}
}

// TestFirstWork_Once: the first recorded work stays.
func TestFirstWork_Once(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", at(0))
	if ok, err := db.SetFirstWork(ctx, r.ID, at(31*time.Minute)); err != nil || !ok {
		t.Fatalf("SetFirstWork = %v, %v", ok, err)
	}
	if ok, err := db.SetFirstWork(ctx, r.ID, at(50*time.Minute)); err != nil || ok {
		t.Fatalf("SetFirstWork again = %v, %v", ok, err)
	}
	if fw, err := db.FirstWorks(ctx, 1); err != nil || len(fw) != 1 || !fw[r.ID].Equal(at(31*time.Minute)) {
		t.Fatalf("FirstWorks = %v, %v", fw, err)
	}
}

// TestSettings_BenchOffStored: the user's receipts setting is stored,
// read back and undone like the other settings.
func TestSettings_BenchOffStored(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	u := mustUser(t, db, 1)
	if u.Settings.BenchOff {
		t.Fatal("a new user has receipts off")
	}
	u.Settings.BenchOff = true
	if _, err := db.UpdateUser(ctx, act(1), u); err != nil {
		t.Fatal(err)
	}
	if got, err := db.User(ctx, 1); err != nil || !got.Settings.BenchOff {
		t.Fatalf("after turning receipts off: %+v, %v", got.Settings, err)
	}
	if _, err := db.Undo(ctx, ledger.Action{UserID: 1}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.User(ctx, 1); err != nil || got.Settings.BenchOff {
		t.Fatalf("after undo: %+v, %v", got.Settings, err)
	}
}

// TestOpen_Migration022 builds a database at schema 21 with a user, a
// rental and its rows in the tables that existed, and checks that 022
// keeps every row of every table as it was, gives the user receipts on,
// and that a bench and a job run can then be stored on the old rental.
func TestOpen_Migration022(t *testing.T) {
	ctx := context.Background()
	path := dbAtSchema(t, 21,
		`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
			VALUES (7, 'zh', 'Asia/Shanghai', 1320, 1800000000000, 600000000000, 60, 420, 43200000000000, 1790000000)`,
		`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id) VALUES (1, 7, 'rent', 'old', 1790000000, 1, 1)`,
		`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
			currency, min_s, step_s, floor, lease_ns, created_at)
			VALUES (1, 7, 1, 'old', 'autodl', 'RTX 4090', 1, 'per-second', 1, '1.88', 'hour', 'CNY', 0, 0, '0', 0, 1790000000)`,
		`INSERT INTO rental_events (rental_id, action_id, kind, at) VALUES (1, 1, 'start', 1790000000)`,
		`INSERT INTO idle_intervals (rental_id, from_at, to_at) VALUES (1, 1790000600, 1790001200)`,
		`INSERT INTO agent_tokens (rental_id, user_id, hash, issued_at) VALUES (1, 7, X'00112233', 1790000010)`,
		`INSERT INTO budgets (user_id, currency, amount) VALUES (7, 'CNY', '500')`,
	)
	before := rawTables(t, path)
	db := openPath(t, path)
	after := rawTables(t, path)
	for tbl, rows := range before {
		got := after[tbl]
		if tbl == "schema_migrations" {
			got = got[:min(len(got), len(rows))]
		}
		// Migrations 023 and 025 add columns at the end of these tables,
		// all 0 or '' on rows they did not write.
		if suffix, ok := map[string]string{"actions": " 0]", "rentals": " 0 ]", "agent_tokens": " 0]", "enrol_tokens": " 0]"}[tbl]; ok && suffix != "" {
			trimmed := make([]string, len(got))
			for i, row := range got {
				if !strings.HasSuffix(row, suffix) {
					t.Fatalf("%s row after 023 %s: want %q last", tbl, row, suffix)
				}
				trimmed[i] = strings.TrimSuffix(row, suffix) + "]"
			}
			got = trimmed
		}
		if tbl == "users" {
			// One column more at the end: bench_off, 0.
			trimmed := make([]string, len(got))
			for i, row := range got {
				if !strings.HasSuffix(row, " 0]") {
					t.Fatalf("users row after 022 %s: want bench_off 0 last", row)
				}
				trimmed[i] = strings.TrimSuffix(row, " 0]") + "]"
			}
			got = trimmed
		}
		if !reflect.DeepEqual(got, rows) {
			t.Fatalf("table %s after 022:\n%v\nwant\n%v", tbl, got, rows)
		}
	}
	u, err := db.User(ctx, 7)
	if err != nil || u.Settings.BenchOff || u.Settings.QuietFrom != 60 || len(u.Budgets) != 1 {
		t.Fatalf("user after 022 = %+v, %v", u, err)
	}
	if _, added, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: 1, ReportID: "r1", Bench: aBench()}); err != nil || !added {
		t.Fatalf("AddBench on the old rental = %v, %v", added, err)
	}
	if _, added, err := db.AddJobRun(ctx, ledger.JobRun{RentalID: 1, Label: "yolo", StartedAt: time.Unix(1790000100, 0), EndedAt: time.Unix(1790000200, 0), Source: ledger.JobFromAgent}); err != nil || !added {
		t.Fatalf("AddJobRun on the old rental = %v, %v", added, err)
	}
}

// rawTables returns every row of every table of the file at path, as
// text, by table, read through its own connection.
func rawTables(t *testing.T, path string) map[string][]string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
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
	out := map[string][]string{}
	for _, tbl := range tables {
		rows, err := raw.Query(`SELECT * FROM "` + tbl + `" ORDER BY rowid`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		out[tbl] = []string{}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[tbl] = append(out[tbl], fmt.Sprintf("%v", vals))
		}
		rows.Close()
	}
	return out
}

// TestBook_LeavesDelivered: the user's book leaves out the benches and
// job runs (every command loads a book; few read them); LoadDelivered
// reads them through the store, the user's own only.
func TestBook_LeavesDelivered(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	r := mustRent(t, db, 1, "box1", at(0))
	other := mustRent(t, db, 2, "box9", at(0))
	for _, id := range []int64{r.ID, other.ID} {
		if _, _, err := db.AddBench(ctx, ledger.BenchRecord{RentalID: id, ReportID: "a", At: at(time.Minute), Bench: aBench()}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AddJobRun(ctx, ledger.JobRun{RentalID: id, Label: "yolo", StartedAt: at(time.Minute), EndedAt: at(2 * time.Minute), Source: ledger.JobFromAgent}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Benches) != 0 || len(b.JobRuns) != 0 {
		t.Fatalf("the book loaded %d benches and %d job runs", len(b.Benches), len(b.JobRuns))
	}
	if err := ledger.LoadDelivered(ctx, b, &db.Benchmarks); err != nil {
		t.Fatal(err)
	}
	if len(b.Benches) != 1 || b.Benches[0].RentalID != r.ID || !reflect.DeepEqual(b.Benches[0].Bench, aBench()) {
		t.Fatalf("book's benches = %+v", b.Benches)
	}
	if len(b.JobRuns) != 1 || b.JobRuns[0].RentalID != r.ID || b.JobRuns[0].Label != "yolo" {
		t.Fatalf("book's job runs = %+v", b.JobRuns)
	}
}
