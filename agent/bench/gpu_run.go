package bench

// The tests on one GPU: its kernels and copies, each calibrated and then
// timed with events inside the GPU's share of the budget, beside an NVML
// sampler; and the arithmetic that turns counts and milliseconds into
// figures.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// gpuRun is the driver state of one GPU being measured.
type gpuRun struct {
	r        *run
	d        driver
	gi, idx  int
	until    time.Time
	stream   uintptr
	ev0, ev1 uintptr
	sms      int
	cc       int
}

// measureGPU measures one GPU until its share of the budget ends, with an
// NVML sampler beside it for the clocks, reasons, temperature and PCIe link
// seen under load.
func (r *run) measureGPU(ctx context.Context, d driver, nv factReader, ord, gi int, until time.Time) {
	r.mu.Lock()
	idx := r.gpus[gi].Index
	r.cur = gi
	r.mu.Unlock()
	if nv != nil {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.sample(nv, gi, idx, stop)
		}()
		defer func() { close(stop); wg.Wait() }()
	}
	g := &gpuRun{r: r, d: d, gi: gi, idx: idx, until: until}
	major, err1 := d.Attribute(attrComputeMajor, ord)
	minor, err2 := d.Attribute(attrComputeMinor, ord)
	sms, err3 := d.Attribute(attrMultiprocessorCount, ord)
	if err := errors.Join(err1, err2, err3); err != nil {
		r.skip("gpu", idx, "the CUDA driver cannot describe this GPU: "+err.Error())
		return
	}
	g.cc, g.sms = major*10+minor, sms
	r.mu.Lock()
	r.gpus[gi].ComputeCap = fmt.Sprintf("%d.%d", major, minor)
	r.mu.Unlock()
	if g.cc < 50 {
		r.skip("gpu", idx, fmt.Sprintf("compute %d.%d is older than the bench's kernels (5.0)", major, minor))
		return
	}
	c, err := d.CtxCreate(ord)
	if err != nil {
		r.skip("gpu", idx, "cannot open the GPU: "+err.Error())
		return
	}
	defer d.CtxDestroy(c)
	if g.stream, err = d.StreamCreate(); err != nil {
		r.skip("gpu", idx, "cannot open the GPU: "+err.Error())
		return
	}
	defer d.StreamDestroy(g.stream)
	if g.ev0, err = d.EventCreate(); err != nil {
		r.skip("gpu", idx, "cannot time the GPU: "+err.Error())
		return
	}
	defer d.EventDestroy(g.ev0)
	if g.ev1, err = d.EventCreate(); err != nil {
		r.skip("gpu", idx, "cannot time the GPU: "+err.Error())
		return
	}
	defer d.EventDestroy(g.ev1)

	bf16 := kBF16
	fp16 := kFP16
	if g.cc < 80 {
		fp16 = kFP16SM75
	}
	for fi, f := range gpuFigures {
		if ctx.Err() != nil {
			return
		}
		left := time.Until(until)
		share := float64(left.Milliseconds()) / float64(len(gpuFigures)-fi)
		if share < minStepMs {
			r.skip(f, idx, fmt.Sprintf("out of time: the bench's budget (%s) ended before this test", r.budget.Round(100*time.Millisecond)))
			continue
		}
		target := math.Min(targetMs, share*0.8)
		switch f {
		case "bf16_tflops":
			if g.cc < 80 {
				r.skip(f, idx, fmt.Sprintf("the card has no bf16 tensor cores (compute %d.%d)", major, minor))
				continue
			}
			g.kernelTest(bf16, target)
		case "fp16_tflops":
			if g.cc < 75 {
				r.skip(f, idx, fmt.Sprintf("the bench's fp16 mma.sync needs compute 7.5 or newer (this card is %d.%d)", major, minor))
				continue
			}
			g.kernelTest(fp16, target)
		case "fp32_tflops":
			g.kernelTest(kFP32, target)
		case "mem_gbps":
			g.copyTest(f, target)
		case "h2d_gbps", "d2h_gbps":
			g.copyTest(f, target)
		}
	}
}

// sample reads NVML every 50 ms while GPU gi is measured, keeping the
// highest SM clock, temperature and PCIe link seen and every clock-event
// reason.
func (r *run) sample(nv factReader, gi, idx int, stop <-chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		s := nv.Sample(idx)
		r.mu.Lock()
		if !r.abandoned {
			g := &r.gpus[gi]
			g.SMClockBenchMHz = max(g.SMClockBenchMHz, s.SMClockMHz)
			// "GPU idle" (0x1) is the gap between two tests, not
			// something that held the card back.
			g.ClockReasons |= s.Reasons &^ reasonGPUIdle
			g.TemperatureC = max(g.TemperatureC, s.TempC)
			// The link trains down when idle: the bench's copies show
			// what it does under load.
			g.PCIeGen = max(g.PCIeGen, s.PCIeGen)
			g.PCIeWidth = max(g.PCIeWidth, s.PCIeWidth)
		}
		r.mu.Unlock()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// timed runs enqueue on the stream between the two events and returns the
// GPU time, ms.
func (g *gpuRun) timed(enqueue func() error) (float64, error) {
	d := g.d
	if err := d.EventRecord(g.ev0, g.stream); err != nil {
		return 0, err
	}
	if err := enqueue(); err != nil {
		_ = d.EventRecord(g.ev1, g.stream)
		_ = d.EventSynchronize(g.ev1)
		return 0, err
	}
	if err := d.EventRecord(g.ev1, g.stream); err != nil {
		return 0, err
	}
	if err := d.EventSynchronize(g.ev1); err != nil {
		return 0, err
	}
	ms, err := d.EventElapsed(g.ev0, g.ev1)
	if err != nil {
		return 0, err
	}
	if !(ms > 0) || math.IsInf(float64(ms), 0) {
		return 0, fmt.Errorf("cuEventElapsedTime: %v ms", ms)
	}
	g.r.addGPUTime(float64(ms))
	return float64(ms), nil
}

// kernelTest loads k's module, calibrates its iteration count and times
// one run of about target ms.
func (g *gpuRun) kernelTest(k kernel, target float64) {
	d, r := g.d, g.r
	t0 := time.Now()
	mod, log, err := d.ModuleLoad(k.ptx)
	jit := time.Since(t0).Seconds()
	r.mu.Lock()
	r.info.JITSeconds += jit
	r.mu.Unlock()
	if err != nil {
		r.skip(k.figure, g.idx, g.refused(k, log, err))
		return
	}
	defer d.ModuleUnload(mod)
	fn, err := d.Function(mod, k.entry)
	if err != nil {
		r.skip(k.figure, g.idx, "the driver loaded the kernel but not its entry: "+err.Error())
		return
	}
	perSM, err := d.Occupancy(fn, blockThreads)
	if err != nil || perSM < 1 {
		perSM = 1
	}
	grid := g.sms * perSM
	threads := grid * blockThreads
	out, err := d.MemAlloc(uint64(threads) * 4)
	if err != nil {
		r.skip(k.figure, g.idx, "no device memory for the test: "+err.Error())
		return
	}
	defer d.MemFree(out)
	per := k.flopsPerIter * float64(threads)
	if k.perWarp {
		per = k.flopsPerIter * float64(threads/32)
	}
	launch := func(iters uint64) (float64, error) {
		return g.timed(func() error { return d.Launch(fn, grid, blockThreads, g.stream, uint64(out), iters) })
	}
	iters, ms, err := g.calibrate(launch, 8, math.MaxUint32)
	if err != nil {
		r.skip(k.figure, g.idx, "the kernel failed: "+err.Error())
		return
	}
	iters = planCount(iters, ms, g.fit(target), math.MaxUint32)
	ms, err = launch(iters)
	if err != nil {
		r.skip(k.figure, g.idx, "the kernel failed: "+err.Error())
		return
	}
	r.set(g.gi, k.figure, tflops(per, iters, ms))
}

// fit shrinks a test's target so it ends before the GPU's share of the
// budget does: a slow card gets fewer iterations, never a longer run.
func (g *gpuRun) fit(target float64) float64 {
	left := float64(time.Until(g.until).Milliseconds())
	return math.Max(1, math.Min(target, left*0.8))
}

// calibrate runs launch with a count growing from start until one run
// takes calibMs, the first run being a warm-up (clocks ramp, lazy
// loading). It returns the last count and its time.
func (g *gpuRun) calibrate(launch func(uint64) (float64, error), start, limit uint64) (uint64, float64, error) {
	n := start
	if _, err := launch(n); err != nil { // warm-up
		return 0, 0, err
	}
	for {
		ms, err := launch(n)
		if err != nil {
			return 0, 0, err
		}
		if ms >= calibMs || n >= limit || time.Until(g.until) < time.Duration(minStepMs)*time.Millisecond {
			return n, ms, nil
		}
		// Grow towards calibMs, at most 64x a round (the first runs are
		// dominated by launch overhead).
		next := planCount(n, ms, calibMs*1.5, limit)
		n = min(max(next, n*2), n*64, limit)
	}
}

// copyTest times a device copy, or a pinned host copy each way.
func (g *gpuRun) copyTest(what string, target float64) {
	d, r := g.d, g.r
	size := uint64(pinnedBytes)
	if what == "mem_gbps" {
		size = memCopyBytes
		if free, _, err := d.MemInfo(); err == nil && free/4 < size {
			size = free / 4
		}
	}
	var src, dst uintptr
	var err error
	var moved float64 // bytes counted per copy
	var copyOnce func() error
	// allocate tries smaller buffers when memory is short.
	for ; size >= minBufBytes; size /= 2 {
		src, dst, err = g.buffers(what, size)
		if err == nil {
			break
		}
		if cuCode(err) != cuErrOutOfMemory {
			break
		}
	}
	if err != nil || size < minBufBytes {
		why := "not enough memory for the copy"
		if err != nil {
			why += ": " + err.Error()
		}
		r.skip(what, g.idx, why)
		return
	}
	defer g.freeBuffers(what, src, dst)
	switch what {
	case "mem_gbps":
		moved = 2 * float64(size) // read plus write
		copyOnce = func() error { return d.CopyDtoD(dst, src, size, g.stream) }
	case "h2d_gbps":
		moved = float64(size)
		copyOnce = func() error { return d.CopyHtoD(dst, src, size, g.stream) }
	case "d2h_gbps":
		moved = float64(size)
		copyOnce = func() error { return d.CopyDtoH(dst, src, size, g.stream) }
	}
	launch := func(n uint64) (float64, error) {
		return g.timed(func() error {
			for range n {
				if err := copyOnce(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	n, ms, err := g.calibrate(launch, 1, 1)
	if err == nil {
		n = planCount(n, ms, g.fit(target), 1000)
		ms, err = launch(n)
	}
	if err != nil {
		r.skip(what, g.idx, "the copy failed: "+err.Error())
		return
	}
	r.set(g.gi, what, gbps(moved*float64(n), ms))
}

// buffers allocates a copy test's source and destination.
func (g *gpuRun) buffers(what string, size uint64) (src, dst uintptr, err error) {
	d := g.d
	alloc := func(host bool) (uintptr, error) {
		if host {
			return d.MemHostAlloc(size)
		}
		return d.MemAlloc(size)
	}
	srcHost, dstHost := what == "h2d_gbps", what == "d2h_gbps"
	if src, err = alloc(srcHost); err != nil {
		return 0, 0, err
	}
	if dst, err = alloc(dstHost); err != nil {
		g.free(srcHost, src)
		return 0, 0, err
	}
	return src, dst, nil
}

func (g *gpuRun) freeBuffers(what string, src, dst uintptr) {
	_ = g.d.CtxSynchronize()
	g.free(what == "h2d_gbps", src)
	g.free(what == "d2h_gbps", dst)
}

func (g *gpuRun) free(host bool, p uintptr) {
	if host {
		g.d.MemFreeHost(p)
	} else {
		g.d.MemFree(p)
	}
}

// refused says why the driver would not load k's PTX, quoting the JIT's
// log (clipped): an old driver says which PTX ISA it knows.
func (g *gpuRun) refused(k kernel, log string, err error) string {
	isa, target := ptxHeader(k.ptx)
	r := g.r
	r.mu.Lock()
	cuda := r.info.CUDADriver
	r.mu.Unlock()
	var b strings.Builder
	switch cuCode(err) {
	case cuErrUnsupportedPTX:
		fmt.Fprintf(&b, "the driver (CUDA %s) is too old for the bench's PTX (ISA %s, %s)", cuda, isa, target)
	case cuErrNoBinaryForGPU, cuErrInvalidPTX:
		fmt.Fprintf(&b, "the driver could not compile the bench's PTX (ISA %s, %s) for this card", isa, target)
	default:
		fmt.Fprintf(&b, "the driver refused the bench's PTX (ISA %s, %s)", isa, target)
	}
	fmt.Fprintf(&b, ": %v", err)
	if l := clip(log, jitLogClip); l != "" {
		fmt.Fprintf(&b, "; JIT log: %s", l)
	}
	return b.String()
}

// planCount scales a count that took ms to one that takes about target
// ms, at least 1 and at most limit.
func planCount(n uint64, ms, target float64, limit uint64) uint64 {
	if !(ms > 0) || !(target > 0) {
		return max(1, min(n, limit))
	}
	v := float64(n) * target / ms
	if v >= float64(limit) {
		return limit
	}
	if v < 1 {
		return 1
	}
	return uint64(v)
}

// tflops is the rate of flopsPerIter·iters floating-point operations in ms
// milliseconds, in TFLOPS (1e12 per second).
func tflops(flopsPerIter float64, iters uint64, ms float64) float64 {
	if !(ms > 0) {
		return 0
	}
	return flopsPerIter * float64(iters) / (ms / 1000) / 1e12
}

// gbps is the rate of bytes moved in ms milliseconds, in GB/s (1e9).
func gbps(bytes, ms float64) float64 {
	if !(ms > 0) {
		return 0
	}
	return bytes / (ms / 1000) / 1e9
}
