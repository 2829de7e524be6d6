package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

func TestWindow_WorstCaseSize(t *testing.T) {
	var w Window
	long := strings.Repeat("x", 4096)
	s := &Sample{At: time.Now(), CPUOK: true, NetOK: true, Verdict: wire.VerdictUnknown,
		HostErrs: []string{long, long, long, long, long, long}}
	for i := range 64 {
		g := GPUReading{Index: i, UUID: long, Err: long, UtilOK: true, MemOK: true, ClockReasons: 0xffff, ReasonsOK: true}
		for p := range 100 {
			g.Procs = append(g.Procs, wire.Proc{PID: uint32(p), UsedMemoryMiB: 1 << 20})
		}
		s.GPUs = append(s.GPUs, g)
		s.Reasons = append(s.Reasons, long)
	}
	for i := range 100 {
		s.Watches = append(s.Watches, WatchReading{Path: long + string(rune('a'+i%26)) + strings.Repeat("y", i), Exists: true, Err: long})
	}
	for range 12 {
		w.Add(s)
	}
	hb := wire.HeartbeatRequest{}
	win := w.Cut()
	win.fill(&hb)
	b, _ := json.Marshal(hb)
	if len(b) > wire.MaxBodyBytes/2 {
		t.Fatalf("worst-case heartbeat is %d bytes, over half the %d limit", len(b), wire.MaxBodyBytes)
	}
	t.Logf("worst-case heartbeat: %d bytes", len(b))
	if hb.Samples != 12 || hb.UnknownSamples != 12 || hb.Verdict != wire.VerdictUnknown {
		t.Fatalf("%+v", hb)
	}
}

func TestWindow_Summary(t *testing.T) {
	var w Window
	t0 := time.Now()
	for i, u := range []float64{0, 100, 50} {
		g := gpu(u)
		g.PowerOK, g.PowerW, g.MemoryUsedMiB = true, 100*float64(i+1), uint64(10*i)
		g.ReasonsOK, g.ClockReasons = true, uint64(1)<<i
		w.Add(&Sample{At: t0.Add(time.Duration(i) * time.Second), GPUs: []GPUReading{g}, Verdict: wire.VerdictBusy, CPUOK: true, CPUPercent: float64(i)})
	}
	w.Add(&Sample{At: t0.Add(3 * time.Second), GPUs: []GPUReading{{Index: 0, Err: "gpu is lost"}}, Verdict: wire.VerdictUnknown})
	hb := wire.HeartbeatRequest{}
	win := w.Cut()
	win.fill(&hb)
	g := hb.GPUs[0]
	if *g.UtilMean != 50 || *g.UtilMax != 100 || *g.PowerMeanW != 200 || *g.MemoryMaxMiB != 20 || g.ClockReasons != 7 || g.Samples != 3 || g.FailedSamples != 1 || g.LastError != "gpu is lost" {
		t.Fatalf("%+v", g)
	}
	if hb.Verdict != wire.VerdictBusy || hb.BusySamples != 3 || *hb.HostStats.CPUPercentMax != 2 {
		t.Fatalf("%+v", hb)
	}
	if empty := w.Cut(); empty.n != 0 {
		t.Fatal("cut did not reset")
	}
}

// A heartbeat window reads processes, host memory and disk once, at its
// first (full) sample; the fast samples after it must not erase them.
func TestWindow_FullThenFast(t *testing.T) {
	var w Window
	t0 := time.Now()
	full := gpu(0)
	full.MemOK, full.MemoryUsedMiB = true, 100
	full.ProcsOK, full.Procs = true, []wire.Proc{{PID: 7, UsedMemoryMiB: 100}}
	w.Add(&Sample{At: t0, GPUs: []GPUReading{full}, HostRead: true, MemOK: true, Mem: Memory{UsedBytes: 1 << 30},
		DiskOK: true, Disk: Disk{Path: "/", FreeBytes: 1 << 40}, HostErrs: []string{"x"}, Verdict: wire.VerdictIdle})
	fast := gpu(0)
	fast.MemOK = false
	for i := 1; i < 6; i++ {
		w.Add(&Sample{At: t0.Add(time.Duration(i) * 5 * time.Second), GPUs: []GPUReading{fast}, Verdict: wire.VerdictIdle})
	}
	var hb wire.HeartbeatRequest
	win := w.Cut()
	win.fill(&hb)
	g := hb.GPUs[0]
	if len(g.Processes) != 1 || g.Processes[0].PID != 7 || g.MemoryUsedMiB == nil || *g.MemoryUsedMiB != 100 {
		t.Fatalf("gpu %+v", g)
	}
	h := hb.HostStats
	if h.MemoryUsedB == nil || *h.MemoryUsedB != 1<<30 || h.DiskFreeBytes != 1<<40 || len(h.Errors) != 1 {
		t.Fatalf("host %+v", h)
	}
}

// A heartbeat window with any busy sample is busy, as a sample is busy with
// any utilisation reading above the threshold: a burst seen early in the
// window is not hidden by the quiet samples after it. Its reasons are the
// busy sample's. Without a busy sample the last sample's verdict stands.
func TestWindow_BusyIfAnySampleBusy(t *testing.T) {
	t0 := time.Now()
	tests := []struct {
		name     string
		verdicts []wire.Verdict
		want     wire.Verdict
	}{
		{"BurstThenQuiet", []wire.Verdict{wire.VerdictIdle, wire.VerdictBusy, wire.VerdictIdle, wire.VerdictIdle}, wire.VerdictBusy},
		{"BusyThenUnknown", []wire.Verdict{wire.VerdictBusy, wire.VerdictUnknown}, wire.VerdictBusy},
		{"UnknownThenIdle", []wire.Verdict{wire.VerdictUnknown, wire.VerdictIdle}, wire.VerdictIdle},
		{"IdleThenUnknown", []wire.Verdict{wire.VerdictIdle, wire.VerdictUnknown}, wire.VerdictUnknown},
		{"AllIdle", []wire.Verdict{wire.VerdictIdle, wire.VerdictIdle}, wire.VerdictIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w Window
			for i, v := range tt.verdicts {
				why := []string{"all signals below thresholds"}
				if v == wire.VerdictBusy {
					why = []string{"gpu0 util max 46% (mean 1% of 50 samples)"}
				}
				w.Add(&Sample{At: t0.Add(time.Duration(i) * 5 * time.Second), GPUs: []GPUReading{gpu(0)}, Verdict: v, Reasons: why})
			}
			var hb wire.HeartbeatRequest
			win := w.Cut()
			win.fill(&hb)
			if hb.Verdict != tt.want {
				t.Fatalf("verdict %s (%v), want %s", hb.Verdict, hb.Reasons, tt.want)
			}
			if tt.want == wire.VerdictBusy && (len(hb.Reasons) != 1 || !strings.Contains(hb.Reasons[0], "max 46%")) {
				t.Fatalf("reasons %v, want the busy sample's", hb.Reasons)
			}
		})
	}
}

// TestSampler_IdleStreakTravelsWithWindow: a heartbeat's idle time comes
// from the samples in its window, so a busy sample taken after the cut
// (the sampling loop runs beside the reporter) cannot leave an idle
// heartbeat without its idle_since.
func TestSampler_IdleStreakTravelsWithWindow(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	put := func(src string) {
		b, err := os.ReadFile(filepath.Join("testdata", "sim", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sim+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(sim+".tmp", sim); err != nil {
			t.Fatal(err)
		}
	}
	put("idle.json")
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	clk := t0
	s := &Sampler{GPU: &SimulateSource{Path: sim}, Host: HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup2"}, Thresholds: DefaultThresholds, Now: func() time.Time { return clk }}
	var w Window
	for range 3 {
		w.Add(s.SampleLevel(context.Background(), ReadFast))
		clk = clk.Add(5 * time.Second)
	}
	win := w.Cut()
	put("busy.json")
	if v := s.SampleLevel(context.Background(), ReadFast).Verdict; v != wire.VerdictBusy {
		t.Fatalf("busy.json sampled %s", v)
	}
	var hb wire.HeartbeatRequest
	win.fill(&hb)
	if hb.Verdict != wire.VerdictIdle || hb.IdleSince == nil || !hb.IdleSince.Equal(t0) || hb.IdleSeconds != 10 {
		t.Fatalf("verdict %s, idle_since %v, idle %d s; want idle since %s for 10 s", hb.Verdict, hb.IdleSince, hb.IdleSeconds, t0)
	}
	// Cut 4 s after the last sample: the streak reaches the cut.
	win.idleTo(&hb, t0.Add(14*time.Second))
	if hb.IdleSeconds != 14 {
		t.Fatalf("idle %d s at the cut, want 14", hb.IdleSeconds)
	}
}
