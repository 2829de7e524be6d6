//go:build cgo && linux

package agent

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSampleCycle_NVMLMock is BenchmarkSampleCycle over go-nvml's mock
// with one GPU: it counts the agent's own work around the NVML calls (the
// watchdog hand-off, decoding, validation), not the driver's.
func BenchmarkSampleCycle_NVMLMock(b *testing.B) {
	lib, _ := newMock(1)
	src, err := NewNVMLSource(context.Background(), lib, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	benchCycle(b, src)
}
