package bench

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// h100ish is a fake card: 100 SMs, 8 blocks of 256 threads each, so every
// kernel runs 800 blocks, 204800 threads, 6400 warps.
var h100ish = fakeDevice{name: "NVIDIA H200", uuid: "GPU-00000000-0000-0000-0000-000000000001", cc: 90, sms: 100, occupant: 8}

// healthy sets rates whose figures are computed by hand in the tests.
func healthyGPU(f *fakeDriver) *fakeDriver {
	f.launchMs = 0.005
	f.msPerIter["fma_fp32"] = 0.001    // 204800 threads · 128 flops / 1 µs = 26.2144 TFLOPS
	f.msPerIter["mma_bf16"] = 0.001    // 6400 warps · 65536 flops / 1 µs = 419.4304 TFLOPS
	f.msPerIter["mma_fp16"] = 0.002    // 209.7152 TFLOPS
	f.msPerIter["mma_fp16_k8"] = 0.001 // 6400 warps · 32768 flops / 1 µs = 209.7152 TFLOPS
	f.rate["dtod"] = 1e9               // bytes per ms: 1000 GB/s copied = 2000 GB/s read plus write
	f.rate["htod"] = 55e6              // 55 GB/s
	f.rate["dtoh"] = 50e6              // 50 GB/s
	return f
}

func gpuFactsFor(names ...string) *fakeFacts {
	f := &fakeFacts{drv: "580.159.04", cuda: "13.0"}
	for i, n := range names {
		f.gpus = append(f.gpus, perf.GPU{
			Name: n, Model: perf.DisplayName(n), UUID: h100ish.uuid[:len(h100ish.uuid)-1] + string(rune('1'+i)),
			MemoryTotalMiB: 143771, PCIeGen: 1, PCIeGenMax: 5, PCIeWidth: 16, PCIeWidthMax: 16,
			PowerLimitW: 700, PowerDefaultW: 700, SMClockMaxMHz: 1980, TemperatureC: 30,
		})
	}
	f.sample = nvSample{SMClockMHz: 1755, Reasons: 0x4 | reasonGPUIdle, TempC: 41, PCIeGen: 5, PCIeWidth: 16}
	return f
}

func gpuOpts(d *fakeDriver, nv *fakeFacts) GPUOptions {
	o := GPUOptions{Budget: 5 * time.Second, openCUDA: func() (driver, error) { return d, nil }}
	if nv != nil {
		o.openNVML = func() (factReader, error) { return nv, nil }
	} else {
		o.openNVML = func() (factReader, error) { return nil, errors.New("no nvml") }
	}
	return o
}

func gpuNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v (±%v)", what, got, want, tol)
	}
}

func gpuSkipOf(skips []perf.Skip, what string, gpu int) (perf.Skip, bool) {
	for _, s := range skips {
		if s.GPU == gpu && (s.What == what || s.What == "gpu") {
			return s, true
		}
	}
	return perf.Skip{}, false
}

func TestMeasureGPUs_Figures(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	nv := gpuFactsFor("NVIDIA H200")
	gpus, skips, info := MeasureGPUs(context.Background(), gpuOpts(d, nv))
	if len(skips) != 0 {
		t.Fatalf("skips: %+v", skips)
	}
	if len(gpus) != 1 {
		t.Fatalf("gpus: %+v", gpus)
	}
	g := gpus[0]
	gpuNear(t, "fp32", g.FP32TFLOPS, 26.2, 0.05)
	gpuNear(t, "bf16", g.BF16TFLOPS, 419.4, 0.05)
	gpuNear(t, "fp16", g.FP16TFLOPS, 209.7, 0.05)
	gpuNear(t, "mem", g.MemGBps, 2000, 0.1)
	gpuNear(t, "h2d", g.H2DGBps, 55, 0.01)
	gpuNear(t, "d2h", g.D2HGBps, 50, 0.01)
	if g.ComputeCap != "9.0" || g.Model != "H200" || g.Index != 0 {
		t.Errorf("identity: %+v", g)
	}
	// What NVML saw under load: the link trained up, the clocks and
	// reasons of the run (idle, between tests, is no reason).
	if g.PCIeGen != 5 || g.SMClockBenchMHz != 1755 || g.ClockReasons != 0x4 || g.TemperatureC != 41 {
		t.Errorf("samples not kept: gen %d clock %d reasons %#x temp %d", g.PCIeGen, g.SMClockBenchMHz, g.ClockReasons, g.TemperatureC)
	}
	if info.Source != "cuda" || info.DriverVersion != "580.159.04" || info.CUDADriver != "12.4" {
		t.Errorf("info: %+v", info)
	}
	if info.GPUSeconds <= 0 || info.GPUSeconds > 5 {
		t.Errorf("GPU seconds %v: want the timed runs' sum, within the budget", info.GPUSeconds)
	}
	for _, l := range d.launches {
		if l.grid != 800 || l.block != 256 {
			t.Fatalf("launch %+v: want 800 blocks of 256 (SMs × occupancy)", l)
		}
	}
	if len(d.live) != 0 || d.destroyed != 1 || !nv.closed {
		t.Errorf("left behind: %d allocations %v, %d contexts destroyed, nvml closed %v", len(d.live), d.live, d.destroyed, nv.closed)
	}
}

// A timed run lasts about targetMs of GPU time however fast the card: the
// iteration count is calibrated, not fixed.
func TestMeasureGPUs_SlowCardFewerIterations(t *testing.T) {
	fast := healthyGPU(newFakeDriver(h100ish))
	slow := healthyGPU(newFakeDriver(h100ish))
	slow.msPerIter["fma_fp32"] = 0.1 // 100x slower
	MeasureGPUs(context.Background(), gpuOpts(fast, nil))
	_, _, info := MeasureGPUs(context.Background(), gpuOpts(slow, nil))
	last := func(d *fakeDriver) uint64 {
		var n uint64
		for _, l := range d.launches {
			if l.entry == "fma_fp32" {
				n = l.iters
			}
		}
		return n
	}
	nf, ns := last(fast), last(slow)
	if ns == 0 || nf/ns < 50 {
		t.Errorf("timed iterations: fast %d, slow %d: want the slow card to get ~100x fewer", nf, ns)
	}
	if info.GPUSeconds > 2 {
		t.Errorf("slow card kept the GPU %v s", info.GPUSeconds)
	}
}

func TestMeasureGPUs_NoDriver(t *testing.T) {
	nv := gpuFactsFor("NVIDIA H200")
	o := gpuOpts(nil, nv)
	o.openCUDA = func() (driver, error) {
		return nil, gpuNoDriver("libcuda.so.1 not found")
	}
	gpus, skips, info := MeasureGPUs(context.Background(), o)
	s, ok := gpuSkipOf(skips, "gpu", 0)
	if !ok || !strings.Contains(s.Why, "no CUDA driver: libcuda.so.1 not found") {
		t.Errorf("skips %+v", skips)
	}
	if info.Source != "none" || len(gpus) != 1 || gpus[0].PowerLimitW != 700 {
		t.Errorf("NVML's facts should stay: %+v %+v", gpus, info)
	}

	// Without NVML either: one skip for the host's GPUs.
	o.openNVML = func() (factReader, error) { return nil, errors.New("no nvml") }
	gpus, skips, _ = MeasureGPUs(context.Background(), o)
	if len(gpus) != 0 || len(skips) != 1 || skips[0].GPU != -1 || skips[0].What != "gpu" {
		t.Errorf("gpus %+v skips %+v", gpus, skips)
	}
}

func gpuNoDriver(s string) error { return &gpuWrapped{errNoDriver, s} }

type gpuWrapped struct {
	err error
	s   string
}

func (w *gpuWrapped) Error() string { return w.err.Error() + ": " + w.s }
func (w *gpuWrapped) Unwrap() error { return w.err }

func TestMeasureGPUs_InitFails(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	d.initErr = &cuError{Call: "cuInit", Code: cuErrNoDevice, Text: "no CUDA-capable device is detected"}
	gpus, skips, info := MeasureGPUs(context.Background(), gpuOpts(d, nil))
	if len(gpus) != 0 || len(skips) != 1 || !strings.Contains(skips[0].Why, "sees no GPU") || info.Source != "none" {
		t.Errorf("gpus %+v skips %+v info %+v", gpus, skips, info)
	}
}

// A driver too old for a module's PTX ISA: that family is skipped with the
// JIT's words (clipped); the others are measured.
func TestMeasureGPUs_DriverTooOldForPTX(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	d.refuse = func(ptx []byte) (error, string) {
		if isa, _ := ptxHeader(ptx); isa == "7.0" {
			return &cuError{Call: "cuModuleLoadDataEx", Code: cuErrUnsupportedPTX, Text: "the provided PTX was compiled with an unsupported toolchain."},
				"ptxas application ptx input, line 12; fatal   : Unsupported .version 7.0; current version is '6.4'\n" + strings.Repeat("x", 1000)
		}
		return nil, ""
	}
	d.version = 10010
	gpus, skips, _ := MeasureGPUs(context.Background(), gpuOpts(d, gpuFactsFor("NVIDIA H200")))
	for _, f := range []string{"bf16_tflops", "fp16_tflops"} {
		s, ok := gpuSkipOf(skips, f, 0)
		if !ok || !strings.Contains(s.Why, "too old") || !strings.Contains(s.Why, "CUDA 10.1") ||
			!strings.Contains(s.Why, "Unsupported .version 7.0; current version is '6.4'") {
			t.Errorf("%s: %+v", f, s)
		}
		if len(s.Why) > 500 {
			t.Errorf("%s: JIT log not clipped (%d bytes)", f, len(s.Why))
		}
	}
	if gpus[0].FP32TFLOPS == 0 || gpus[0].MemGBps == 0 || gpus[0].BF16TFLOPS != 0 {
		t.Errorf("the other families should be measured: %+v", gpus[0])
	}
}

// A T4 (compute 7.5): no bf16 tensor cores, fp16 through the Turing module.
func TestMeasureGPUs_Turing(t *testing.T) {
	t4 := h100ish
	t4.name, t4.cc = "Tesla T4", 75
	d := healthyGPU(newFakeDriver(t4))
	gpus, skips, _ := MeasureGPUs(context.Background(), gpuOpts(d, nil))
	s, ok := gpuSkipOf(skips, "bf16_tflops", 0)
	if !ok || s.Why != "the card has no bf16 tensor cores (compute 7.5)" {
		t.Errorf("bf16 skip: %+v (all %+v)", s, skips)
	}
	if len(gpus) != 1 {
		t.Fatalf("gpus %+v", gpus)
	}
	gpuNear(t, "fp16 (m16n8k8)", gpus[0].FP16TFLOPS, 209.7, 0.05)
	for _, l := range d.launches {
		if l.entry == "mma_fp16" || l.entry == "mma_bf16" {
			t.Errorf("launched %s on compute 7.5", l.entry)
		}
	}
	if gpus[0].Name != "Tesla T4" || gpus[0].Model != perf.DisplayName("Tesla T4") {
		t.Errorf("without NVML the driver names the GPU: %+v", gpus[0])
	}
}

// A GPU that stops answering: MeasureGPUs returns by its budget with what
// was measured before, and says why the rest is missing.
func TestMeasureGPUs_Hang(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	d.hangAfter = 12 // past bf16 and into fp16
	t.Cleanup(func() { close(d.release) })
	o := gpuOpts(d, gpuFactsFor("NVIDIA H200"))
	o.Budget = 300 * time.Millisecond
	t0 := time.Now()
	gpus, skips, _ := MeasureGPUs(context.Background(), o)
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("returned after %v", el)
	}
	if gpus[0].BF16TFLOPS == 0 {
		t.Errorf("the figure measured before the hang is lost: %+v", gpus[0])
	}
	for _, f := range []string{"fp32_tflops", "mem_gbps", "d2h_gbps"} {
		s, ok := gpuSkipOf(skips, f, 0)
		if !ok || !strings.Contains(s.Why, "did not finish within the bench's budget") {
			t.Errorf("%s: %+v", f, s)
		}
	}
}

func TestMeasureGPUs_Canceled(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gpus, skips, _ := MeasureGPUs(ctx, gpuOpts(d, gpuFactsFor("NVIDIA H200")))
	for _, g := range gpus {
		for _, f := range gpuFigures {
			if figure(&g, f) == 0 {
				if _, ok := gpuSkipOf(skips, f, g.Index); !ok {
					t.Errorf("%s has neither a figure nor a skip", f)
				}
			}
		}
	}
}

func TestMeasureGPUs_OutOfMemory(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	d.allocLimit = 100 << 20 // the 1 GiB and 256 MiB buffers fail, 64 MiB fits
	gpus, skips, _ := MeasureGPUs(context.Background(), gpuOpts(d, nil))
	if len(skips) != 0 || gpus[0].MemGBps == 0 || gpus[0].H2DGBps == 0 {
		t.Errorf("smaller buffers should do: %+v %+v", gpus, skips)
	}
	gpuNear(t, "mem with 64 MiB", gpus[0].MemGBps, 2000, 0.1)

	d = healthyGPU(newFakeDriver(h100ish))
	d.allocLimit = 512 << 10 // below even the kernels' 800 KiB output
	gpus, skips, _ = MeasureGPUs(context.Background(), gpuOpts(d, nil))
	s, ok := gpuSkipOf(skips, "mem_gbps", 0)
	if !ok || !strings.Contains(s.Why, "not enough memory") || !strings.Contains(s.Why, "out of memory") {
		t.Errorf("mem skip: %+v", s)
	}
	if _, ok := gpuSkipOf(skips, "bf16_tflops", 0); !ok || gpus[0].BF16TFLOPS != 0 {
		t.Errorf("no memory for the kernels' output either: %+v %+v", gpus, skips)
	}
	if len(d.live) != 0 {
		t.Errorf("allocations left: %v", d.live)
	}
}

func TestMeasureGPUs_FactsOnly(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	o := gpuOpts(d, gpuFactsFor("NVIDIA H200", "NVIDIA H200"))
	o.FactsOnly = true
	gpus, skips, info := MeasureGPUs(context.Background(), o)
	if len(d.launches) != 0 || len(gpus) != 2 || len(skips) != 2 || info.Source != "none" {
		t.Fatalf("launches %d gpus %d skips %+v info %+v", len(d.launches), len(gpus), skips, info)
	}
	if !strings.Contains(skips[1].Why, "busy") || skips[1].GPU != 1 {
		t.Errorf("skip %+v", skips[1])
	}
}

// Devices picks GPUs by NVML index; CUDA's devices are matched by UUID
// even when CUDA lists them in another order.
func TestMeasureGPUs_DevicesByUUID(t *testing.T) {
	nv := gpuFactsFor("NVIDIA H200", "NVIDIA H100 80GB HBM3")
	a, b := h100ish, h100ish
	a.uuid, b.uuid = nv.gpus[1].UUID, nv.gpus[0].UUID
	a.name = "NVIDIA H100 80GB HBM3"
	d := healthyGPU(newFakeDriver(a, b))
	o := gpuOpts(d, nv)
	o.Devices = []int{1}
	gpus, skips, _ := MeasureGPUs(context.Background(), o)
	if len(gpus) != 1 || gpus[0].Index != 1 || gpus[0].Name != "NVIDIA H100 80GB HBM3" || gpus[0].BF16TFLOPS == 0 {
		t.Errorf("gpus %+v skips %+v", gpus, skips)
	}
}

func TestMeasureGPUs_MIG(t *testing.T) {
	nv := gpuFactsFor("NVIDIA A100-SXM4-40GB")
	nv.gpus[0].MIG = true
	slice := h100ish
	slice.name, slice.uuid, slice.cc = "NVIDIA A100-SXM4-40GB MIG 1g.5gb", "GPU-ffffffff-0000-0000-0000-000000000000", 80
	d := healthyGPU(newFakeDriver(slice))
	gpus, skips, _ := MeasureGPUs(context.Background(), gpuOpts(d, nv))
	if len(gpus) != 1 || !gpus[0].MIG || gpus[0].BF16TFLOPS == 0 || len(skips) != 0 {
		t.Errorf("gpus %+v skips %+v", gpus, skips)
	}
}

func TestMeasureGPUs_ContextRefused(t *testing.T) {
	d := healthyGPU(newFakeDriver(h100ish))
	d.ctxErr = &cuError{Call: "cuCtxCreate", Code: 46, Text: "CUDA-capable device(s) is/are busy or unavailable"}
	_, skips, info := MeasureGPUs(context.Background(), gpuOpts(d, gpuFactsFor("NVIDIA H200")))
	s, ok := gpuSkipOf(skips, "gpu", 0)
	if !ok || !strings.Contains(s.Why, "busy or unavailable") || info.Source != "none" {
		t.Errorf("skips %+v", skips)
	}
}

func TestPlanCount(t *testing.T) {
	for _, c := range []struct {
		n          uint64
		ms, target float64
		limit      uint64
		want       uint64
	}{
		{1000, 4, 150, 1 << 32, 37500},
		{1000, 4, 1, 1 << 32, 250},
		{1, 400, 150, 1 << 32, 1},           // never below 1
		{1 << 30, 1, 150, 1 << 32, 1 << 32}, // never above the limit
		{10, 0, 150, 1 << 32, 10},           // a zero time: keep the count
		{10, math.NaN(), 150, 100, 10},
	} {
		if got := planCount(c.n, c.ms, c.target, c.limit); got != c.want {
			t.Errorf("planCount(%d, %v, %v, %d) = %d, want %d", c.n, c.ms, c.target, c.limit, got, c.want)
		}
	}
}

func TestTFLOPSAndGBps(t *testing.T) {
	// 204800 threads · 128 flops · 1e6 iterations in 1 s = 26.2144 TFLOPS.
	gpuNear(t, "tflops", tflops(204800*128, 1_000_000, 1000), 26.2144, 1e-9)
	// A 1 GiB copy counted read plus write in 0.5 ms.
	gpuNear(t, "gbps", gbps(2*(1<<30), 0.5), 4294.967296, 1e-6)
	if tflops(1, 1, 0) != 0 || gbps(1, -1) != 0 {
		t.Error("a non-positive time gives a figure")
	}
}

func TestClip(t *testing.T) {
	if got := clip("a\n\tb   c", 10); got != "a b c" {
		t.Errorf("clip = %q", got)
	}
	got := clip(strings.Repeat("é", 100), 11)
	if got != strings.Repeat("é", 5)+"…" {
		t.Errorf("clip cut a rune: %q", got)
	}
}

func TestFormatUUID(t *testing.T) {
	b := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if got := formatUUID(b); got != "GPU-deadbeef-0102-0304-0506-0708090a0b0c" {
		t.Errorf("formatUUID = %s", got)
	}
}
