package agent

import (
	"context"
	"testing"
)

// BenchmarkSampleCycle measures one sample as the sampling loop in Run
// takes it on this machine's real /proc and cgroup files: GPU source, host
// readers (CPU, network; memory and disk on the first sample of each
// heartbeat window), verdict, idle tracking and the window that the next
// heartbeat summarises. One op is one sample; a window is 6 samples (30 s
// of heartbeat at 5 s samples).
func BenchmarkSampleCycle(b *testing.B) {
	b.Run("Simulate", func(b *testing.B) {
		benchCycle(b, &SimulateSource{Path: "testdata/sim/idle.json"})
	})
	b.Run("NoGPU", func(b *testing.B) {
		benchCycle(b, NoGPU(ErrNoNVML))
	})
}

func benchCycle(b *testing.B, src GPUSource) {
	ctx := context.Background()
	host := HostReader{}.Cached()
	defer host.Close()
	s := &Sampler{GPU: src, Host: host, Thresholds: DefaultThresholds}
	var w Window
	w.Add(s.SampleLevel(ctx, ReadFull))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		level := ReadFast
		if n == 0 {
			level = ReadFull
		}
		w.Add(s.SampleLevel(ctx, level))
		if n++; n == 6 { // a heartbeat cuts the window every 6 samples
			w.Cut()
			n = 0
		}
	}
}
