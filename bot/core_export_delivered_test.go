package bot_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// TestCore_ExportDelivered: /export json carries each rental's bench (as
// the agent's claim) and its job runs, which the book no longer loads;
// the CSV, which has no column for them, is sent as before.
func TestCore_ExportDelivered(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/rent box1 autodl 4090 1.88/h"), "✓")
	x := e.book(alice).Rental("box1")
	if _, _, err := e.db.AddBench(ctx, ledger.BenchRecord{RentalID: x.ID, ReportID: "r1", At: e.now.Add(time.Minute),
		Bench: perf.Bench{Source: "cuda", GPUs: []perf.GPU{{Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 150}}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.AddJobRun(ctx, ledger.JobRun{RentalID: x.ID, Label: "yolo", StartedAt: e.now.Add(2 * time.Minute),
		EndedAt: e.now.Add(8 * time.Minute), Source: ledger.JobFromAgent}); err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(time.Hour)
	out := e.handle(e.update(alice, "/export json"))
	if len(out) != 1 || out[0].Out.Document == nil {
		t.Fatalf("export json: %+v", out)
	}
	var doc struct {
		Rentals []struct {
			Name  string `json:"name"`
			Bench *struct {
				ReportID  string     `json:"report_id"`
				ClaimedBy string     `json:"claimed_by"`
				GPUs      []perf.GPU `json:"gpus"`
			} `json:"bench"`
			Jobs []struct {
				Label string `json:"label"`
			} `json:"jobs"`
		} `json:"rentals"`
	}
	if err := json.Unmarshal(out[0].Out.Document.Data, &doc); err != nil {
		t.Fatalf("export json: %v", err)
	}
	if len(doc.Rentals) != 1 {
		t.Fatalf("rentals %+v", doc.Rentals)
	}
	r := doc.Rentals[0]
	if r.Bench == nil || r.Bench.ReportID != "r1" || r.Bench.ClaimedBy != "agent" || len(r.Bench.GPUs) != 1 || r.Bench.GPUs[0].BF16TFLOPS != 150 {
		t.Fatalf("the export's bench of %s: %+v", r.Name, r.Bench)
	}
	if len(r.Jobs) != 1 || r.Jobs[0].Label != "yolo" {
		t.Fatalf("the export's jobs of %s: %+v", r.Name, r.Jobs)
	}
	if out := e.handle(e.update(alice, "/export")); len(out) != 1 || out[0].Out.Document == nil {
		t.Fatalf("export csv: %+v", out)
	}
}
