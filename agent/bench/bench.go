// Package bench measures what a rented host delivers: its GPUs through
// the CUDA driver API (gpu*.go, cuda*.go, nvml*.go) and the host around
// them (host*.go), in a few seconds and without a CUDA toolkit, Python
// or PyTorch. Run is the whole bench; "gpuledger-agent bench" prints it
// and the daemon runs that command as a child process once per rental,
// so libcuda is never loaded into the daemon and a hung kernel ends with
// the child (docs/agent.md, "The bench").
//
// Nothing here fails: what could not be measured is a perf.Skip with a
// reason a user can act on, and the figure stays zero.
package bench

import (
	"context"
	"path/filepath"
	"time"

	"github.com/gpuledger/gpuledger/agent"
	"github.com/gpuledger/gpuledger/perf"
)

// Defaults.
const (
	// DefaultTimeout bounds the whole bench (GPUs and host), torch
	// probe aside.
	DefaultTimeout = 10 * time.Second
	// gpuShare is the part of the timeout the GPU part gets first; the
	// host gets what it leaves.
	gpuShare = 0.6
)

// Options says what Run measures and within how long.
type Options struct {
	// Timeout bounds the bench's wall time (default DefaultTimeout):
	// the GPUs get gpuShare of it first, the host the rest.
	Timeout time.Duration
	// Dir is the directory whose disk is measured (default the working
	// directory). A read-only or full one is a Skip.
	Dir string
	// DownloadURL, when set, is fetched (http or https only, bounded in
	// bytes and time) for the download speed; "" measures none.
	DownloadURL string
	// Simulate is a simulate file (agent.SimFile): Run returns its
	// "bench" without touching a GPU or the disk.
	Simulate string
	// FactsOnly reads facts only: NVML facts and the host's cores and
	// memory, no load on a GPU and no disk test (the GPU is busy with
	// someone's work).
	FactsOnly bool
	// Torch runs a PyTorch matmul probe beside the bench where
	// "python3 -c 'import torch'" works (TorchTimeout, beyond Timeout).
	Torch        bool
	TorchTimeout time.Duration // default 60 s
	// Python is the interpreter of the torch probe (default "python3").
	Python string

	// Host reads the cgroup and /proc files (tests point it at
	// fixtures); the zero value reads the real ones.
	Host agent.HostReader
	// Now is the clock (default time.Now).
	Now func() time.Time

	// measureGPUs replaces MeasureGPUs in tests.
	measureGPUs func(context.Context, GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo)
	// disk and download replace the host tests' knobs in tests.
	disk     diskOptions
	download downloadOptions
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Source values of perf.Bench.
const (
	SourceCUDA     = "cuda"
	SourceSimulate = "simulate"
	SourceNone     = "none"
)

// Run runs the bench: the GPUs first, within their share of the
// timeout, then the host in what is left. It never fails: a figure that
// could not be measured is zero, with a Skip saying why.
func Run(ctx context.Context, o Options) perf.Bench {
	start := o.now()
	if o.Simulate != "" {
		return simulated(o.Simulate, start)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	t0 := time.Now() // monotonic: the budget is measured on it
	b := perf.Bench{StartedAt: start.UTC().Round(0), Source: SourceNone, GPUs: []perf.GPU{}}

	measure := o.measureGPUs
	if measure == nil {
		measure = MeasureGPUs
	}
	gpus, skipped, info := measure(ctx, GPUOptions{
		Budget:    time.Duration(float64(o.timeout()) * gpuShare),
		FactsOnly: o.FactsOnly,
	})
	if gpus != nil {
		b.GPUs = gpus
	}
	b.Skipped = append(b.Skipped, skipped...)
	b.DriverVersion, b.CUDADriver, b.GPUSeconds = info.DriverVersion, info.CUDADriver, info.GPUSeconds
	if info.Source != "" {
		b.Source = info.Source
	}

	host, hskip := measureHost(ctx, o, t0.Add(o.timeout()))
	b.Host = host
	b.Skipped = append(b.Skipped, hskip...)
	b.WallSeconds = time.Since(t0).Seconds()

	if o.Torch {
		// Beside the bench, never instead, after its wall time and
		// beyond its timeout (TorchTimeout bounds it).
		tr, skip := probeTorch(parent, o)
		b.Torch = tr
		if skip != nil {
			b.Skipped = append(b.Skipped, *skip)
		}
	}
	return b
}

// Measured reports whether b holds any figure at all: a bench with none
// is still worth sending (the server stops asking) but the command exits
// 1 for it.
func Measured(b perf.Bench) bool {
	h := b.Host
	if h.CPUCores > 0 || h.MemoryMiB > 0 || h.DiskWriteMBps > 0 || h.DiskReadMBps > 0 || h.DownloadMBps > 0 {
		return true
	}
	for _, g := range b.GPUs {
		if g.FP32TFLOPS > 0 || g.BF16TFLOPS > 0 || g.FP16TFLOPS > 0 || g.MemGBps > 0 || g.H2DGBps > 0 || g.D2HGBps > 0 ||
			g.MemoryTotalMiB > 0 || g.PCIeGen > 0 || g.PowerLimitW > 0 || g.SMClockMaxMHz > 0 || g.Name != "" {
			return true
		}
	}
	return b.Torch != nil && b.Torch.BF16TFLOPS > 0
}

// absDir returns dir made absolute ("" is the working directory).
func absDir(dir string) string {
	if dir == "" {
		dir = "."
	}
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
