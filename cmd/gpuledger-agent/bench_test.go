package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/perf"
)

const simBench = `{"gpus": [], "bench": {"wall_s": 1.1, "gpu_s": 0.7, "source": "cuda", "driver_version": "550.54",
  "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "model": "RTX 4090", "bf16_tflops": 152.5, "mem_gbps": 950,
            "pcie_gen": 4, "pcie_gen_max": 4, "pcie_width": 8, "pcie_width_max": 16, "power_limit_w": 300, "power_default_w": 450}],
  "host": {"cpu_cores": 16, "memory_mib": 64000, "disk_path": "/workspace", "disk_write_mbps": 1800, "disk_read_mbps": 2500},
  "skipped": [{"what": "download_mbps", "gpu": -1, "why": "no download URL set"}]}}`

func writeSim(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sim.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBench_Flags: the help lists the bench; its flags' errors are usage
// errors (exit 2) that say what is wanted.
func TestBench_Flags(t *testing.T) {
	env := func(string) string { return "" }
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"--help"}, &out, &errb, env); code != exitOK || !strings.Contains(out.String(), "e.g. gpuledger-agent bench") {
		t.Errorf("--help: exit %d, lacks the bench:\n%s", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(t.Context(), []string{"bench", "--help"}, &out, &errb, env); code != exitOK || !strings.Contains(errb.String(), "-download-url") || !strings.Contains(errb.String(), "-facts-only") {
		t.Errorf("bench --help: exit %d\n%s", code, errb.String())
	}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"bench", "--nosuch"}, "", "--help"},
		{[]string{"bench", "extra"}, "", "unexpected argument"},
		{[]string{"bench", "--timeout", "0s"}, "", "--timeout"},
		{[]string{"bench", "--timeout", "1h"}, "", "at most"},
		{[]string{"bench", "--download-url", "ftp://x/y"}, "", "http://"},
		{[]string{"bench"}, "file:///etc/passwd", "GPULEDGER_BENCH_URL"},
		{[]string{"run", "--server", "http://x", "--token", "t", "--label", "yolo"}, "", "after --"},
		{[]string{"run", "--server", "http://x", "--token", "t", "--label", "bad label", "--", "true"}, "", "letters, digits"},
		{[]string{"run", "--server", "http://x", "--token", "t", "--bench-url", "file:///x"}, "", "http://"},
	} {
		out.Reset()
		errb.Reset()
		getenv := func(k string) string {
			if k == "GPULEDGER_BENCH_URL" {
				return c.env
			}
			return ""
		}
		if code := run(t.Context(), c.args, &out, &errb, getenv); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d stderr %q, want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestBench_SimulateJSON: bench --simulate --json prints the file's
// bench as perf.Bench JSON with source "simulate"; a file without one
// prints a bench that says why and exits 1.
func TestBench_SimulateJSON(t *testing.T) {
	env := func(string) string { return "" }
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"bench", "--json", "--simulate", writeSim(t, simBench)}, &out, &errb, env); code != exitOK {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	var b perf.Bench
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("not a perf.Bench: %v\n%s", err, out.String())
	}
	if b.Source != "simulate" || b.StartedAt.IsZero() || len(b.GPUs) != 1 || b.GPUs[0].BF16TFLOPS != 152.5 || b.Host.DiskReadMBps != 2500 {
		t.Errorf("bench %+v", b)
	}

	out.Reset()
	errb.Reset()
	if code := run(t.Context(), []string{"bench", "--json", "--simulate", writeSim(t, `{"gpus": []}`)}, &out, &errb, env); code != exitFailure {
		t.Fatalf("no bench: exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), `no \"bench\"`) || !strings.Contains(out.String(), `"source": "none"`) {
		t.Errorf("no bench: %s", out.String())
	}
}

// TestBench_Human: the text lists every figure, the facts, the host,
// the warnings and what was skipped.
func TestBench_Human(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"bench", "--simulate", writeSim(t, simBench)}, &out, &errb, func(string) string { return "" }); code != exitOK {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"GPU 0: NVIDIA GeForce RTX 4090", "bf16 tensor 152 TFLOPS", "memory 950 GB/s", "% of a healthy card",
		"PCIe gen 4 of 4, x8 of x16", "power limit 300 of 450 W", "host: 16 cores", "disk /workspace: write 1800 MB/s, read 2500 MB/s",
		"warnings:", "power limit 300 W, below the card's default 450 W", "PCIe link x8", "skipped:", "download_mbps: no download URL set"} {
		if !strings.Contains(s, want) {
			t.Errorf("the text lacks %q:\n%s", want, s)
		}
	}
}

// testE2EBench runs the real binary as a daemon against a hub that asks
// for a bench: the daemon waits while its labelled job keeps the host
// busy, then runs its own binary's bench (--simulate passed on) as a
// child once and posts it; every heartbeat's job carries the label.
func testE2EBench(t *testing.T, bin string) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	writeFile(t, sim, strings.Replace(simBench, `{"gpus": []`, `{"gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-1", "memory_total_mib": 24564, "memory_used_mib": 0, "utilization": 0, "power_w": 20, "temperature_c": 35}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}`, 1))
	hub := hubtest.New("e2e-bench", "box1")
	hub.WantBench(true)
	srv := httptest.NewServer(hub.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--server", srv.URL, "--simulate", sim, "--sample", "100ms", "--interval", "300ms",
		"--label", "yolo-epoch", "--", "sh", "-c", "sleep 1")
	cmd.Env = append(os.Environ(), "GPULEDGER_AGENT_TOKEN=e2e-bench", "HOME="+dir)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	}()
	waitFor(t, hub, "a stored bench", func() bool { return hub.BenchesStored() == 1 })
	var jobStarted time.Time
	for _, hb := range hub.Heartbeats() {
		if hb.Job != nil && hb.Job.Label != "yolo-epoch" {
			t.Fatalf("heartbeat %d: job label %q", hb.Seq, hb.Job.Label)
		}
		if hb.Job != nil {
			jobStarted = hb.Job.StartedAt
		}
	}
	posts := hub.BenchPosts()
	if len(posts) != 1 {
		t.Fatalf("%d bench posts", len(posts))
	}
	b := posts[0].Bench
	if b.Source != "simulate" || len(b.GPUs) != 1 || b.GPUs[0].BF16TFLOPS != 152.5 || b.Host.DiskWriteMBps != 1800 {
		t.Fatalf("bench %+v", b)
	}
	// The job (sleep 1) keeps the host busy: the bench waits for its end.
	if jobStarted.IsZero() || b.StartedAt.Before(jobStarted.Add(900*time.Millisecond)) {
		t.Errorf("the bench started %s, the busy job at %s and ran 1 s: it must wait", b.StartedAt, jobStarted)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent exit: %v", err)
	}
	if n := len(hub.BenchPosts()); n != 1 {
		t.Fatalf("%d bench posts after the stop, want 1", n)
	}
}

// TestBench_HumanUnknownCard: a card not in perf's table gets its
// figures without ratios, and the warning says why; a MIG slice is not
// compared.
func TestBench_HumanUnknownCard(t *testing.T) {
	sim := writeSim(t, `{"gpus": [], "bench": {"source": "cuda", "gpus": [{"index": 0, "name": "NVIDIA Frobnicator 9000", "bf16_tflops": 100, "mem_gbps": 900},
	  {"index": 1, "name": "NVIDIA H200", "mig": true, "bf16_tflops": 90}], "host": {"cpu_cores": 16}}}`)
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"bench", "--simulate", sim}, &out, &errb, func(string) string { return "" }); code != exitOK {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"bf16 tensor 100 TFLOPS\n", "memory 900 GB/s\n", "GPU 0: this card is not in the reference table", "GPU 1: NVIDIA H200, a MIG slice", "GPU 1: a MIG slice"} {
		if !strings.Contains(s, want) {
			t.Errorf("the text lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "% of") {
		t.Errorf("a ratio for a card without a reference:\n%s", s)
	}
}
