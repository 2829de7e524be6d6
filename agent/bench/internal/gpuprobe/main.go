// Command gpuprobe runs the GPU part of the bench alone (bench.MeasureGPUs)
// and prints its figures, skips and totals as JSON, with the wall time of
// the call: the proof of the driver-API bench on real hardware
// (scripts/agent-bench-gpu.sh), independent of the agent's commands.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/gpuledger/gpuledger/agent/bench"
	"github.com/gpuledger/gpuledger/perf"
)

func main() {
	budget := flag.Duration("budget", bench.DefaultGPUBudget, "the GPU part's budget")
	factsOnly := flag.Bool("facts-only", false, "read NVML's facts only, no load on the GPU")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t0 := time.Now()
	gpus, skipped, info := bench.MeasureGPUs(ctx, bench.GPUOptions{Budget: *budget, FactsOnly: *factsOnly})
	out := struct {
		WallSeconds float64       `json:"wall_s"`
		Info        bench.GPUInfo `json:"info"`
		GPUs        []perf.GPU    `json:"gpus"`
		Skipped     []perf.Skip   `json:"skipped,omitempty"`
	}{time.Since(t0).Seconds(), info, gpus, skipped}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "gpuprobe:", err)
		os.Exit(1)
	}
}
