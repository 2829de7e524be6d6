package ledger

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// TestExport_BenchAndJobs: a rental with benches and job runs carries
// its first bench received by as_of ("bench": the perf.Bench's own
// fields, when and with what ID it was received, what the hub bounded,
// claimed by the agent) and its runs started by as_of ("jobs": label,
// span, exit code or null from the chat, source); nothing else of the
// export moves, and a rental without either reads as before.
func TestExport_BenchAndJobs(t *testing.T) {
	b, asOf := designBook(t)
	var before bytes.Buffer
	if err := WriteExportJSON(&before, b, asOf); err != nil {
		t.Fatal(err)
	}
	start := b.Rentals[0].StartedAt()
	bench := perf.Bench{StartedAt: start.Add(time.Minute), WallSeconds: 1.5, Source: "cuda",
		GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 152.5, PCIeGen: 4, PCIeWidth: 16}},
		Host: perf.Host{CPUCores: 16, DiskWriteMBps: 1800}, Skipped: []perf.Skip{{What: "download_mbps", GPU: -1, Why: "no download URL set"}}}
	second := bench
	second.GPUs = []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", BF16TFLOPS: 1}}
	b.Benches = []BenchRecord{
		{ID: 1, RentalID: 1, UserID: 1, ReportID: "abc", At: start.Add(2 * time.Minute), Bench: bench, Bounded: []string{"gpus[0].fp32_tflops"}},
		{ID: 2, RentalID: 1, UserID: 1, ReportID: "def", At: start.Add(time.Hour), Bench: second},
		{ID: 3, RentalID: 9, UserID: 1, ReportID: "other", At: start.Add(time.Minute), Bench: bench}, // another rental's
	}
	b.JobRuns = []JobRun{
		{ID: 1, RentalID: 1, Label: "yolo-epoch", StartedAt: start.Add(31 * time.Minute), EndedAt: start.Add(61 * time.Minute), ExitCode: 0, Source: JobFromAgent},
		{ID: 2, RentalID: 1, Label: "", StartedAt: start.Add(62 * time.Minute), EndedAt: start.Add(70 * time.Minute), ExitCode: 137, Source: JobFromAgent},
		{ID: 3, RentalID: 1, Label: "mnist", StartedAt: start.Add(71 * time.Minute), EndedAt: start.Add(80 * time.Minute), Source: JobFromChat},
		{ID: 4, RentalID: 1, Label: "late", StartedAt: asOf.Add(time.Minute), EndedAt: asOf.Add(time.Hour), Source: JobFromChat}, // after as_of
	}
	var buf bytes.Buffer
	if err := WriteExportJSON(&buf, b, asOf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rentals []map[string]json.RawMessage `json:"rentals"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, buf.Bytes())
	}
	r := doc.Rentals[0]
	var got struct {
		perf.Bench
		ReportID   string   `json:"report_id"`
		ReceivedAt string   `json:"received_at"`
		Bounded    []string `json:"bounded"`
		ClaimedBy  string   `json:"claimed_by"`
	}
	if err := json.Unmarshal(r["bench"], &got); err != nil {
		t.Fatalf("bench %s: %v", r["bench"], err)
	}
	if !reflect.DeepEqual(got.Bench, bench) || got.ReportID != "abc" || got.ClaimedBy != "agent" ||
		!reflect.DeepEqual(got.Bounded, []string{"gpus[0].fp32_tflops"}) || got.ReceivedAt != "2026-11-01T22:17:00+08:00" {
		t.Fatalf("bench = %+v", got)
	}
	var jobs []map[string]any
	if err := json.Unmarshal(r["jobs"], &jobs); err != nil {
		t.Fatalf("jobs %s: %v", r["jobs"], err)
	}
	want := []map[string]any{
		{"label": "yolo-epoch", "started_at": "2026-11-01T22:46:00+08:00", "ended_at": "2026-11-01T23:16:00+08:00", "exit_code": 0.0, "source": "agent"},
		{"label": "", "started_at": "2026-11-01T23:17:00+08:00", "ended_at": "2026-11-01T23:25:00+08:00", "exit_code": 137.0, "source": "agent"},
		{"label": "mnist", "started_at": "2026-11-01T23:26:00+08:00", "ended_at": "2026-11-01T23:35:00+08:00", "exit_code": nil, "source": "chat"},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Fatalf("jobs = %v\nwant %v", jobs, want)
	}

	// Without the two keys the document is the one before, byte for byte.
	var trimmed map[string]any
	json.Unmarshal(buf.Bytes(), &trimmed)
	delete(trimmed["rentals"].([]any)[0].(map[string]any), "bench")
	delete(trimmed["rentals"].([]any)[0].(map[string]any), "jobs")
	var orig map[string]any
	json.Unmarshal(before.Bytes(), &orig)
	if !reflect.DeepEqual(trimmed, orig) {
		t.Fatal("adding benches and jobs changed other fields of the export")
	}
	if strings.Contains(before.String(), `"bench"`) || strings.Contains(before.String(), `"jobs"`) {
		t.Fatal("a rental without benches or jobs carries the keys")
	}

	// A bench received after as_of is not in the export as of then.
	early := start.Add(time.Minute)
	buf.Reset()
	if err := WriteExportJSON(&buf, b, early); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"bench"`) {
		t.Fatal("a bench received after as_of is exported")
	}
}
