package agent

import (
	"context"
	"testing"
)

// BenchmarkSampleCycle measures one sample as the sampling loop takes it on
// this machine's real /proc and cgroup files: GPU source, host readers
// (CPU, network, memory, disk), verdict, idle tracking and the window that
// the next heartbeat summarises. One op is one sample.
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
	s := &Sampler{GPU: src, Thresholds: DefaultThresholds}
	var w Window
	w.Add(s.Sample(ctx))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		w.Add(s.Sample(ctx))
		if n++; n == 6 { // a heartbeat cuts the window every 6 samples
			w.Cut()
			n = 0
		}
	}
}
