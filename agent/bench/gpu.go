package bench

// The GPU side of the bench: MeasureGPUs opens the CUDA driver API at run
// time (libcuda.so.1, no toolkit), has the driver compile the embedded PTX,
// and times an FP32 FMA loop, bf16 and fp16 mma.sync loops, a device copy
// and pinned copies with events; NVML says what the card is and what held
// it back (PCIe link, power limit, clocks, ECC, neighbours).
//
// It runs in the bench's own process (`gpuledger-agent bench --json`),
// never in the daemon: a CUDA call cannot be interrupted, so a hung kernel
// is ended by killing that process. Inside it, MeasureGPUs returns by its
// budget whatever a driver call does: the work runs on its own locked
// thread and what it measured until then is kept.

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// DefaultGPUBudget is the GPU part's share of the bench's 10 s: JIT, every
// test of every GPU and the NVML reads.
const DefaultGPUBudget = 6 * time.Second

// MaxDevices is the most GPUs one bench measures.
const MaxDevices = 16

// GPUOptions says what MeasureGPUs measures.
type GPUOptions struct {
	// Budget bounds the whole GPU part (default DefaultGPUBudget); a
	// deadline of the caller's ctx that comes sooner wins. A slow card
	// gets fewer iterations, never a longer run.
	Budget time.Duration
	// Devices are the GPUs to measure, by NVML index (nvidia-smi's); nil
	// all, at most MaxDevices.
	Devices []int
	// FactsOnly reads NVML's facts and puts no load on the GPU: for a GPU
	// busy with the user's work.
	FactsOnly bool

	// openNVML and openCUDA replace NVML and libcuda in tests (nil: the
	// real libraries, where this build has them).
	openNVML func() (factReader, error)
	openCUDA func() (driver, error)
}

// GPUInfo is what MeasureGPUs says of the run as a whole.
type GPUInfo struct {
	DriverVersion string // NVML's, e.g. "580.159.04"
	CUDADriver    string // the CUDA version the driver supports, e.g. "13.0"
	// GPUSeconds is the time kernels and copies kept the GPUs busy
	// (events, summed); JITSeconds the driver's compiling of the PTX.
	GPUSeconds float64
	JITSeconds float64
	// Source is "cuda" when at least one figure was measured through the
	// driver API, else "none".
	Source string
}

// The embedded kernels: one module per family, so a card or driver that
// refuses one still gets the others.
var (
	//go:embed kernels/fp32.ptx
	ptxFP32 []byte
	//go:embed kernels/bf16.ptx
	ptxBF16 []byte
	//go:embed kernels/fp16.ptx
	ptxFP16 []byte
	//go:embed kernels/fp16_sm75.ptx
	ptxFP16SM75 []byte
)

// kernel is one embedded kernel and what one iteration of it does.
type kernel struct {
	figure string // the perf.GPU JSON field it fills
	ptx    []byte
	entry  string
	// minCC is the compute capability it needs (major*10+minor); ptx's
	// .target says the same.
	minCC int
	// flopsPerIter counts per thread (FP32) or per warp (mma) and
	// iteration; perWarp says which.
	flopsPerIter float64
	perWarp      bool
}

var (
	kFP32     = kernel{"fp32_tflops", ptxFP32, "fma_fp32", 50, 8 * 8 * 2, false}
	kBF16     = kernel{"bf16_tflops", ptxBF16, "mma_bf16", 80, 16 * 2 * 16 * 8 * 16, true}
	kFP16     = kernel{"fp16_tflops", ptxFP16, "mma_fp16", 80, 16 * 2 * 16 * 8 * 16, true}
	kFP16SM75 = kernel{"fp16_tflops", ptxFP16SM75, "mma_fp16_k8", 75, 16 * 2 * 16 * 8 * 8, true}
)

// The figures of one GPU, in the order they are measured: the headline
// (tensor) first, so a short budget still gets it.
var gpuFigures = []string{"bf16_tflops", "fp16_tflops", "fp32_tflops", "mem_gbps", "h2d_gbps", "d2h_gbps"}

// Sizes and times of the tests.
const (
	blockThreads = 256
	// targetMs is a timed run's length on a card that has the time;
	// calibMs what a calibration run aims at; minStepMs the least a test
	// needs (calibration and a short timed run) to be started at all.
	targetMs  = 150.0
	calibMs   = 4.0
	minStepMs = 20.0
	// memCopyBytes is the device copy's buffer (each of two), unless a
	// quarter of free memory is less; pinnedBytes the host copies'.
	memCopyBytes = 1 << 30
	pinnedBytes  = 256 << 20
	minBufBytes  = 32 << 20
	// jitLogClip bounds the JIT log quoted in a Skip.
	jitLogClip = 200
)

// MeasureGPUs measures the GPUs o names (nil: all) and returns their
// figures and facts, what it could not measure and why (Skip.GPU is the
// NVML index, -1 when no GPU could be told apart), and the run's totals.
// It never panics on a driver's answer and returns by o.Budget or ctx's
// deadline, whichever comes first, keeping what it measured until then.
// Safe for concurrent use, but GPUs measured by two calls at once slow
// each other down.
func MeasureGPUs(ctx context.Context, o GPUOptions) ([]perf.GPU, []perf.Skip, GPUInfo) {
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultGPUBudget
	}
	start := time.Now()
	deadline := start.Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	r := &run{opts: o, deadline: deadline, budget: budget}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A CUDA context is current on the thread that made it; the
		// thread is left to die with the goroutine if a call hangs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer func() {
			if p := recover(); p != nil {
				r.skipAll(fmt.Sprintf("the GPU bench stopped on an internal error: %v", p))
			}
		}()
		r.measure(ctx)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
	case <-ctx.Done():
		r.abandon(fmt.Sprintf("stopped before it finished: %v", context.Cause(ctx)))
	case <-timer.C:
		r.abandon(fmt.Sprintf("the GPU did not finish within the bench's budget (%s): a hung kernel or a driver that stopped answering", budget.Round(100*time.Millisecond)))
	}
	return r.result()
}

// run is one MeasureGPUs call's state. The worker goroutine and the NVML
// sampler write it under mu; MeasureGPUs reads it under mu when the work
// ends or is abandoned, so what was measured before a hang is kept.
type run struct {
	opts     GPUOptions
	deadline time.Time
	budget   time.Duration

	mu        sync.Mutex
	gpus      []perf.GPU
	skipped   []perf.Skip
	info      GPUInfo
	cur       int // index into gpus of the GPU being measured, -1 none
	abandoned bool
}

// skip records why a figure (or "gpu": all of a GPU's) of GPU idx was not
// measured.
func (r *run) skip(what string, idx int, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.abandoned {
		r.addSkipLocked(what, idx, why)
	}
}

func (r *run) addSkipLocked(what string, idx int, why string) {
	for _, s := range r.skipped {
		if s.GPU == idx && (s.What == what || s.What == "gpu") {
			return
		}
	}
	r.skipped = append(r.skipped, perf.Skip{What: what, GPU: idx, Why: why})
}

// skipAll records why for every GPU without figures, or for the host's
// GPUs as a whole when none is known.
func (r *run) skipAll(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abandoned {
		return
	}
	if len(r.gpus) == 0 {
		r.addSkipLocked("gpu", -1, why)
		return
	}
	for _, g := range r.gpus {
		r.addSkipLocked("gpu", g.Index, why)
	}
}

// abandon ends the run from MeasureGPUs' side: every figure not yet
// measured is skipped with why, and later writes of a worker still stuck in
// a driver call are dropped.
func (r *run) abandon(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.gpus) == 0 {
		r.addSkipLocked("gpu", -1, why)
	}
	for _, g := range r.gpus {
		for _, f := range gpuFigures {
			if figure(&g, f) == 0 {
				r.addSkipLocked(f, g.Index, why)
			}
		}
	}
	r.abandoned = true
}

// set stores a measured figure of gpus[i].
func (r *run) set(i int, what string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abandoned || i < 0 || i >= len(r.gpus) {
		return
	}
	switch what {
	case "fp32_tflops":
		r.gpus[i].FP32TFLOPS = v
	case "bf16_tflops":
		r.gpus[i].BF16TFLOPS = v
	case "fp16_tflops":
		r.gpus[i].FP16TFLOPS = v
	case "mem_gbps":
		r.gpus[i].MemGBps = v
	case "h2d_gbps":
		r.gpus[i].H2DGBps = v
	case "d2h_gbps":
		r.gpus[i].D2HGBps = v
	}
}

func (r *run) addGPUTime(ms float64) {
	r.mu.Lock()
	r.info.GPUSeconds += ms / 1000
	r.mu.Unlock()
}

// figure reads a figure of g by its JSON name.
func figure(g *perf.GPU, what string) float64 {
	switch what {
	case "fp32_tflops":
		return g.FP32TFLOPS
	case "bf16_tflops":
		return g.BF16TFLOPS
	case "fp16_tflops":
		return g.FP16TFLOPS
	case "mem_gbps":
		return g.MemGBps
	case "h2d_gbps":
		return g.H2DGBps
	case "d2h_gbps":
		return g.D2HGBps
	}
	return 0
}

// result copies the run's outcome; rounding keeps the JSON short.
func (r *run) result() ([]perf.GPU, []perf.Skip, GPUInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gpus := append([]perf.GPU(nil), r.gpus...)
	measured := false
	for i := range gpus {
		g := &gpus[i]
		for _, f := range gpuFigures {
			if figure(g, f) > 0 {
				measured = true
			} else {
				// A worker that stopped between tests (ctx) left no
				// reason; every missing figure has one.
				r.addSkipLocked(f, g.Index, "not measured: the bench stopped before this test")
			}
		}
		g.FP32TFLOPS, g.BF16TFLOPS, g.FP16TFLOPS = round(g.FP32TFLOPS, 1), round(g.BF16TFLOPS, 1), round(g.FP16TFLOPS, 1)
		g.MemGBps, g.H2DGBps, g.D2HGBps = round(g.MemGBps, 1), round(g.H2DGBps, 2), round(g.D2HGBps, 2)
	}
	info := r.info
	info.GPUSeconds, info.JITSeconds = round(info.GPUSeconds, 3), round(info.JITSeconds, 3)
	info.Source = "none"
	if measured {
		info.Source = "cuda"
	}
	return gpus, append([]perf.Skip(nil), r.skipped...), info
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// left is the time until the run's deadline.
func (r *run) left() time.Duration { return time.Until(r.deadline) }

// measure is the worker: NVML's facts, then each GPU through the driver.
func (r *run) measure(ctx context.Context) {
	nv, _ := r.openNVML() // without NVML, the driver alone names the GPUs
	if nv != nil {
		defer nv.Close()
	}
	wanted := func(idx int) bool {
		if r.opts.Devices == nil {
			return true
		}
		for _, d := range r.opts.Devices {
			if d == idx {
				return true
			}
		}
		return false
	}
	// byUUID maps an NVML UUID to its entry in r.gpus.
	byUUID := map[string]int{}
	if nv != nil {
		drv, cudaV := nv.Versions()
		r.mu.Lock()
		r.info.DriverVersion, r.info.CUDADriver = drv, cudaV
		r.mu.Unlock()
		for i := 0; i < nv.Count() && len(r.gpus) < MaxDevices; i++ {
			if !wanted(i) {
				continue
			}
			g := perf.GPU{Index: i}
			nv.Static(i, &g)
			r.mu.Lock()
			r.gpus = append(r.gpus, g)
			if g.UUID != "" {
				byUUID[g.UUID] = len(r.gpus) - 1
			}
			r.mu.Unlock()
		}
	}
	if r.opts.FactsOnly {
		r.skipAll("not loaded: the GPU was busy with other work, so only NVML's facts were read")
		return
	}
	if ctx.Err() != nil {
		return
	}
	d, err := r.openCUDA()
	if err != nil {
		r.skipAll(err.Error())
		return
	}
	if err := d.Init(); err != nil {
		r.skipAll(initWhy(err))
		return
	}
	if v, err := d.Version(); err == nil && v > 0 {
		r.mu.Lock()
		r.info.CUDADriver = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		r.mu.Unlock()
	}
	n, err := d.DeviceCount()
	if err != nil || n == 0 {
		why := "the CUDA driver sees no GPU (CUDA_VISIBLE_DEVICES, or a container without GPU access)"
		if err != nil {
			why = "the CUDA driver cannot count GPUs: " + err.Error()
		}
		r.skipAll(why)
		return
	}
	// Pair each CUDA device with NVML's entry (by UUID: CUDA's order and
	// CUDA_VISIBLE_DEVICES differ from NVML's), else by position.
	type pair struct{ ord, gi int }
	var pairs []pair
	seen := map[int]bool{}
	for ord := 0; ord < n && ord < 4*MaxDevices; ord++ {
		name, _ := d.DeviceName(ord)
		gi, ok := -1, false
		if u := d.DeviceUUID(ord); u != "" {
			gi, ok = byUUID[u]
		}
		if !ok && nv == nil || !ok && len(byUUID) == 0 {
			// No UUIDs to match: NVML's index is CUDA's ordinal when
			// nothing reorders them (CUDA_DEVICE_ORDER=PCI_BUS_ID).
			r.mu.Lock()
			for i := range r.gpus {
				if r.gpus[i].Index == ord {
					gi, ok = i, true
				}
			}
			r.mu.Unlock()
		}
		if !ok && isMIGName(name) {
			// A MIG slice has its own UUID; its parent is the one
			// NVML GPU in MIG mode.
			r.mu.Lock()
			for i := range r.gpus {
				if r.gpus[i].MIG && !seen[i] {
					gi, ok = i, true
					break
				}
			}
			r.mu.Unlock()
		}
		if !ok {
			if nv != nil || !wanted(ord) {
				continue // not one of the GPUs asked for
			}
			r.mu.Lock()
			if len(r.gpus) >= MaxDevices {
				r.mu.Unlock()
				break
			}
			r.gpus = append(r.gpus, perf.GPU{Index: ord, Name: name, Model: perf.DisplayName(name)})
			gi = len(r.gpus) - 1
			r.mu.Unlock()
		}
		if seen[gi] {
			continue
		}
		seen[gi] = true
		r.mu.Lock()
		g := &r.gpus[gi]
		if g.Name == "" {
			g.Name, g.Model = name, perf.DisplayName(name)
		}
		if isMIGName(name) {
			g.MIG = true
		}
		r.mu.Unlock()
		pairs = append(pairs, pair{ord, gi})
	}
	r.mu.Lock()
	for i, g := range r.gpus {
		if !seen[i] {
			r.addSkipLocked("gpu", g.Index, "the CUDA driver does not show this GPU to the bench (CUDA_VISIBLE_DEVICES)")
		}
	}
	r.mu.Unlock()
	for k, p := range pairs {
		if ctx.Err() != nil {
			return
		}
		// Each GPU gets an equal share of what is left.
		share := time.Until(r.deadline) / time.Duration(len(pairs)-k)
		r.measureGPU(ctx, d, nv, p.ord, p.gi, time.Now().Add(share))
	}
}

func (r *run) openNVML() (factReader, error) {
	if r.opts.openNVML != nil {
		return r.opts.openNVML()
	}
	return openFacts()
}

func (r *run) openCUDA() (driver, error) {
	if r.opts.openCUDA != nil {
		return r.opts.openCUDA()
	}
	return openDriver()
}

// initWhy says why cuInit failed in words a user can act on.
func initWhy(err error) string {
	switch cuCode(err) {
	case cuErrNoDevice:
		return "the CUDA driver sees no GPU (cuInit: no CUDA-capable device; a container without GPU access?)"
	case cuErrInsufficientDrv:
		return "the CUDA driver is older than the kernel module (cuInit: " + err.Error() + ")"
	}
	return "the CUDA driver did not start: " + err.Error()
}

func isMIGName(name string) bool {
	return strings.Contains(name, " MIG ") || strings.HasPrefix(name, "MIG ")
}

var ptxVersionRE = regexp.MustCompile(`(?m)^\.version\s+(\d+\.\d+)\s*$`)
var ptxTargetRE = regexp.MustCompile(`(?m)^\.target\s+(sm_\d+)\s*$`)

// ptxHeader reads a module's .version and .target.
func ptxHeader(ptx []byte) (isa, target string) {
	if m := ptxVersionRE.FindSubmatch(ptx); m != nil {
		isa = string(m[1])
	}
	if m := ptxTargetRE.FindSubmatch(ptx); m != nil {
		target = string(m[1])
	}
	return isa, target
}

// clip collapses s's white space and cuts it to at most n bytes (on a
// rune boundary), marking a cut with "…".
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// formatUUID writes a 16-byte device UUID as NVML does.
func formatUUID(b [16]byte) string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// reasonGPUIdle is NVML's clock-event reason "GPU idle".
const reasonGPUIdle = 0x1

// nvSample is what NVML says of a GPU while the bench runs it.
type nvSample struct {
	SMClockMHz int
	Reasons    uint64
	TempC      int
	PCIeGen    int
	PCIeWidth  int
}

// factReader is NVML as the bench reads it (nvml.go: go-nvml over the real
// library or its mock).
type factReader interface {
	// Versions are the driver's version and the CUDA version it supports.
	Versions() (driver, cuda string)
	// Count is how many GPUs NVML sees.
	Count() int
	// Static fills g with GPU i's facts before the bench.
	Static(i int, g *perf.GPU)
	// Sample reads what changes while the bench runs GPU i.
	Sample(i int) nvSample
	Close()
}
