package agent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

func gpu(util float64) GPUReading {
	return GPUReading{Index: 0, UtilOK: true, UtilMean: util, UtilMax: util, MemOK: true}
}

func TestDecide(t *testing.T) {
	th := DefaultThresholds
	base := func(mut func(*Sample)) *Sample {
		s := &Sample{GPUs: []GPUReading{gpu(0)}, CPUOK: true, CPUPercent: 1, NetOK: true, NetBytesPerS: 100}
		if mut != nil {
			mut(s)
		}
		return s
	}
	tests := []struct {
		name string
		s    *Sample
		want wire.Verdict
	}{
		{"Idle", base(nil), wire.VerdictIdle},
		{"BusyGPU", base(func(s *Sample) { s.GPUs[0] = gpu(80) }), wire.VerdictBusy},
		{"AtThresholdIsIdle", base(func(s *Sample) { s.GPUs[0] = gpu(5) }), wire.VerdictIdle},
		// 50 history samples, one at 60 %: the mean is 1.2 %, the max decides.
		{"BusyOnMaxNotMean", base(func(s *Sample) { s.GPUs[0].UtilMean, s.GPUs[0].UtilMax, s.GPUs[0].UtilSamples = 1.2, 60, 50 }), wire.VerdictBusy},
		{"MaxAtThresholdIsIdle", base(func(s *Sample) { s.GPUs[0].UtilMean, s.GPUs[0].UtilMax, s.GPUs[0].UtilSamples = 0.1, 5, 50 }), wire.VerdictIdle},
		{"BusySecondGPU", base(func(s *Sample) { g := gpu(50); g.Index = 1; s.GPUs = append(s.GPUs, g) }), wire.VerdictBusy},
		{"BusyJob", base(func(s *Sample) { s.Job = &wire.JobState{Running: true, PID: 7} }), wire.VerdictBusy},
		{"ExitedJobIsIdle", base(func(s *Sample) { s.Job = &wire.JobState{Exited: true} }), wire.VerdictIdle},
		{"BusyWatch", base(func(s *Sample) { s.Watches = []WatchReading{{Path: "log", Growing: true}} }), wire.VerdictBusy},
		{"BusyCPU", base(func(s *Sample) { s.CPUPercent = 120 }), wire.VerdictBusy},
		{"BusyNet", base(func(s *Sample) { s.NetBytesPerS = 10 << 20 }), wire.VerdictBusy},
		{"UnknownGPUFailed", base(func(s *Sample) { s.GPUs = nil; s.GPUErr = "nvml: gpu is lost" }), wire.VerdictUnknown},
		{"UnknownNoGPUs", base(func(s *Sample) { s.GPUs = nil }), wire.VerdictUnknown},
		{"UnknownOneGPU", base(func(s *Sample) { g := gpu(0); g.Index, g.UtilOK = 1, false; s.GPUs = append(s.GPUs, g) }), wire.VerdictUnknown},
		{"UnknownCPU", base(func(s *Sample) { s.CPUOK = false }), wire.VerdictUnknown},
		{"UnknownNet", base(func(s *Sample) { s.NetOK = false }), wire.VerdictUnknown},
		{"BusyBeatsUnknown", base(func(s *Sample) { s.CPUOK = false; s.GPUs[0] = gpu(99) }), wire.VerdictBusy},
		{"ProcessesDecideNothing", base(func(s *Sample) { s.GPUs[0].Procs = []wire.Proc{{PID: 1, UsedMemoryMiB: 9000}} }), wire.VerdictIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Decide(tt.s, th)
			if got != tt.want {
				t.Fatalf("Decide = %s (%v), want %s", got, why, tt.want)
			}
			if len(why) == 0 {
				t.Fatal("no reasons")
			}
		})
	}
	t.Run("DisabledSignals", func(t *testing.T) {
		s := base(func(s *Sample) { s.CPUOK, s.NetOK, s.CPUPercent = false, false, 999 })
		got, _ := Decide(s, Thresholds{UtilPercent: 5})
		if got != wire.VerdictIdle {
			t.Fatalf("disabled cpu/net still decided: %s", got)
		}
	})
}

func TestIdleTracker(t *testing.T) {
	var tr IdleTracker
	t0 := time.Now()
	tr.Observe(wire.VerdictIdle, t0)
	tr.Observe(wire.VerdictIdle, t0.Add(time.Minute))
	if d := tr.IdleFor(t0.Add(2 * time.Minute)); d != 2*time.Minute {
		t.Fatalf("idle for %v", d)
	}
	since, ok := tr.Since()
	if !ok || !since.Equal(t0) {
		t.Fatal(since, ok)
	}
	tr.Observe(wire.VerdictUnknown, t0.Add(3*time.Minute))
	if _, ok := tr.Since(); ok || tr.IdleFor(t0.Add(4*time.Minute)) != 0 {
		t.Fatal("unknown did not end the idle streak")
	}
	tr.Observe(wire.VerdictIdle, t0.Add(5*time.Minute))
	tr.Observe(wire.VerdictBusy, t0.Add(6*time.Minute))
	if _, ok := tr.Since(); ok {
		t.Fatal("busy did not end the idle streak")
	}
}

func BenchmarkDecide(b *testing.B) {
	s := &Sample{CPUOK: true, CPUPercent: 3, NetOK: true}
	for i := range 8 {
		g := gpu(float64(i))
		g.Index = i
		s.GPUs = append(s.GPUs, g)
	}
	for b.Loop() {
		Decide(s, DefaultThresholds)
	}
}

func BenchmarkHeartbeatEncode(b *testing.B) {
	var w Window
	s := &Sample{At: time.Now(), CPUOK: true, CPUPercent: 3, NetOK: true, Verdict: wire.VerdictIdle, Reasons: []string{"all signals below thresholds"}}
	for i := range 8 {
		g := gpu(float64(i))
		g.Index, g.UUID, g.PowerOK, g.PowerW = i, "GPU-0287225a-83d4-1d0b-31ea-0c5b80b64937", true, 77
		g.Procs = []wire.Proc{{PID: 100, UsedMemoryMiB: 1000}}
		s.GPUs = append(s.GPUs, g)
	}
	b.ReportAllocs()
	for b.Loop() {
		for range 6 {
			w.Add(s)
		}
		hb := wire.HeartbeatRequest{Version: wire.Version}
		win := w.Cut()
		win.fill(&hb)
		if _, err := json.Marshal(hb); err != nil {
			b.Fatal(err)
		}
	}
}
