package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent"
	"github.com/gpuledger/gpuledger/perf"
)

var fixedNow = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// TestRun_Orchestrates: the GPU part gets its share of the timeout
// first and what it measured is kept as it said; the host fills the
// rest; the run is stamped.
func TestRun_Orchestrates(t *testing.T) {
	var got GPUOptions
	var ctxDeadline time.Duration
	dir := t.TempDir()
	o := Options{Timeout: 5 * time.Second, Dir: dir, Now: func() time.Time { return fixedNow }, disk: smallDisk,
		Host: agent.HostReader{ProcRoot: "../testdata/proc", CgroupRoot: "../testdata/cgroup2"},
		measureGPUs: func(ctx context.Context, g GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo) {
			got = g
			d, _ := ctx.Deadline()
			ctxDeadline = time.Until(d)
			return []perf.GPU{{Index: 0, Name: "NVIDIA H200", BF16TFLOPS: 640}},
				[]perf.Skip{{What: "fp16_tflops", GPU: 0, Why: "refused"}},
				GPUInfo{DriverVersion: "580.159.04", CUDADriver: "13.0", GPUSeconds: 0.8, Source: SourceCUDA}
		}}
	b := Run(t.Context(), o)
	if got.Budget != 3*time.Second || got.FactsOnly {
		t.Errorf("GPU options %+v, want 60 %% of 5 s, not facts only", got)
	}
	if ctxDeadline <= 0 || ctxDeadline > 5*time.Second {
		t.Errorf("the GPU part's deadline is %s away, want within the timeout", ctxDeadline)
	}
	if b.Source != SourceCUDA || !b.StartedAt.Equal(fixedNow) || b.DriverVersion != "580.159.04" || b.CUDADriver != "13.0" || b.GPUSeconds != 0.8 {
		t.Errorf("bench %+v", b)
	}
	if len(b.GPUs) != 1 || b.GPUs[0].BF16TFLOPS != 640 || skipOf(b.Skipped, "fp16_tflops") != "refused" {
		t.Errorf("GPUs %+v skipped %+v", b.GPUs, b.Skipped)
	}
	if b.Host.CPUCores != 4 || b.Host.DiskWriteMBps <= 0 || b.Host.DiskReadMBps <= 0 || b.Host.DiskPath != dir {
		t.Errorf("host %+v", b.Host)
	}
	if b.WallSeconds <= 0 || b.WallSeconds > 5 {
		t.Errorf("wall %v s", b.WallSeconds)
	}
	if b.Torch != nil || !Measured(b) {
		t.Errorf("torch %+v measured %v", b.Torch, Measured(b))
	}
}

// TestRun_NoGPU: a GPU part that measured nothing leaves Source "none"
// and an empty GPU list (never null: the JSON is a contract), and facts
// only runs no disk test.
func TestRun_NoGPU(t *testing.T) {
	var factsOnly bool
	o := Options{FactsOnly: true, Dir: t.TempDir(),
		measureGPUs: func(_ context.Context, g GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo) {
			factsOnly = g.FactsOnly
			return nil, []perf.Skip{{What: "gpu", GPU: -1, Why: "no CUDA driver: libcuda.so.1 not found"}}, GPUInfo{}
		}}
	b := Run(t.Context(), o)
	if !factsOnly || b.Source != SourceNone || b.GPUs == nil || len(b.GPUs) != 0 {
		t.Fatalf("facts only %v, bench %+v", factsOnly, b)
	}
	if b.Host.DiskWriteMBps != 0 || skipOf(b.Skipped, "disk_write_mbps") == "" || skipOf(b.Skipped, "gpu") == "" {
		t.Errorf("host %+v skipped %+v", b.Host, b.Skipped)
	}
}

// TestRun_Simulate: --simulate returns the file's bench stamped now with
// Source "simulate", touching neither the GPU nor the disk; a file
// without a bench, or no file, gives a bench that measured nothing and
// says why.
func TestRun_Simulate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.json")
	os.WriteFile(path, []byte(`{"gpus": [], "bench": {"started_at": "2020-01-01T00:00:00Z", "wall_s": 1.1, "gpu_s": 0.7, "source": "cuda",
	  "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "model": "RTX 4090", "bf16_tflops": 152, "mem_gbps": 950, "pcie_gen": 4, "pcie_width": 16, "power_limit_w": 450, "power_default_w": 450}],
	  "host": {"cpu_cores": 16, "disk_write_mbps": 1800}}}`), 0o600)
	o := Options{Simulate: path, Dir: dir, Now: func() time.Time { return fixedNow },
		measureGPUs: func(context.Context, GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo) {
			t.Fatal("the simulate path measured the GPUs")
			return nil, nil, GPUInfo{}
		}}
	b := Run(t.Context(), o)
	if b.Source != SourceSimulate || !b.StartedAt.Equal(fixedNow) || b.WallSeconds != 1.1 {
		t.Errorf("bench %+v", b)
	}
	if len(b.GPUs) != 1 || b.GPUs[0].BF16TFLOPS != 152 || b.GPUs[0].PowerLimitW != 450 || b.Host.CPUCores != 16 || b.Host.DiskWriteMBps != 1800 {
		t.Errorf("figures %+v %+v", b.GPUs, b.Host)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the simulate path wrote in the directory: %d entries", len(ents))
	}

	os.WriteFile(path, []byte(`{"gpus": []}`), 0o600)
	if b := Run(t.Context(), o); b.Source != SourceNone || !strings.Contains(skipOf(b.Skipped, "bench"), `no "bench"`) || Measured(b) {
		t.Errorf("no bench in the file: %+v", b)
	}
	os.WriteFile(path, []byte(`{"gpus": [], "bench": {"gpus": [{"bf16_tflop": 1}]}}`), 0o600)
	if b := Run(t.Context(), o); b.Source != SourceNone || !strings.Contains(skipOf(b.Skipped, "bench"), "unknown field") {
		t.Errorf("a typo in the bench: %+v", b)
	}
	o.Simulate = filepath.Join(dir, "missing.json")
	if b := Run(t.Context(), o); b.Source != SourceNone || !strings.Contains(skipOf(b.Skipped, "bench"), "no such file") {
		t.Errorf("no file: %+v", b)
	}
}

// TestRun_Timeout: the whole run ends by its timeout even when the GPU
// part uses all of its share and the disk is slow to give way: the host
// gets what is left and says what it could not do.
func TestRun_Timeout(t *testing.T) {
	o := Options{Timeout: 400 * time.Millisecond, Dir: t.TempDir(), disk: smallDisk,
		measureGPUs: func(ctx context.Context, g GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo) {
			<-ctx.Done() // a GPU part that overruns its budget up to the deadline
			return nil, nil, GPUInfo{}
		}}
	start := time.Now()
	b := Run(t.Context(), o)
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("took %s with a 400 ms timeout", el)
	}
	if !strings.Contains(skipOf(b.Skipped, "disk_write_mbps"), "no time left") {
		t.Errorf("skipped %+v, want the disk skipped for time", b.Skipped)
	}
}

func noGPU(context.Context, GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo) {
	return nil, nil, GPUInfo{}
}

// fullBench sets every figure and fact of perf.Bench (TestRun_SimulateEveryFigure
// checks that none is left zero, so a field added to perf.Bench must be
// added here).
const fullBench = `{"started_at": "2020-01-01T00:00:00Z", "wall_s": 1.25, "gpu_s": 0.75, "source": "cuda",
 "driver_version": "580.159.04", "cuda_driver_version": "13.0",
 "gpus": [{"index": 2, "name": "NVIDIA H200", "model": "H200", "uuid": "GPU-1", "compute_capability": "9.0", "mig": true,
   "fp32_tflops": 64.1, "bf16_tflops": 646.2, "fp16_tflops": 650.3, "mem_gbps": 4287, "h2d_gbps": 55.4, "d2h_gbps": 55.1,
   "memory_total_mib": 143771, "memory_used_mib": 512, "util_percent": 3, "other_processes": 1,
   "pcie_gen": 5, "pcie_gen_max": 5, "pcie_width": 16, "pcie_width_max": 16, "power_limit_w": 700, "power_default_w": 700,
   "sm_clock_max_mhz": 1980, "sm_clock_bench_mhz": 1965, "clock_event_reasons": 4, "ecc": true, "ecc_uncorrected": 2,
   "retired_pages": 3, "temperature_c": 61}],
 "host": {"cpu_cores": 15.5, "cpu_model": "AMD EPYC 9654", "memory_mib": 262144, "disk_path": "/workspace",
   "disk_write_mbps": 1800, "disk_read_mbps": 2500, "download_url": "https://example.com/f", "download_mbps": 95},
 "skipped": [{"what": "fp16_tflops", "gpu": 0, "why": "refused"}],
 "torch": {"version": "2.9.1", "bf16_tflops": 779}}`

// TestRun_SimulateEveryFigure: every figure and fact of a bench in the
// simulate file comes out of Run as it went in; only the start and the
// source are the run's own.
func TestRun_SimulateEveryFigure(t *testing.T) {
	var want perf.Bench
	dec := json.NewDecoder(strings.NewReader(fullBench))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{want, want.GPUs[0], want.Host, *want.Torch} {
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			if rv.Field(i).IsZero() && rv.Type().Field(i).Name != "Source" {
				t.Errorf("fullBench leaves %s.%s zero: set it", rv.Type().Name(), rv.Type().Field(i).Name)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "sim.json")
	os.WriteFile(path, []byte(`{"gpus": [], "bench": `+fullBench+`}`), 0o600)
	got := Run(t.Context(), Options{Simulate: path, Now: func() time.Time { return fixedNow }, measureGPUs: noGPU})
	want.StartedAt, want.Source = fixedNow, SourceSimulate
	if !reflect.DeepEqual(got, want) {
		t.Errorf("simulated bench\n got %+v\nwant %+v", got, want)
	}
}
