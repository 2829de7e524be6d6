//go:build cgo && linux

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// realGPU skips unless GPULEDGER_GPU_TEST=1: these tests need an NVIDIA GPU
// and its driver (scripts/agent-bench-gpu.sh runs them on one).
func realGPU(t *testing.T) {
	t.Helper()
	if os.Getenv("GPULEDGER_GPU_TEST") != "1" {
		t.Skip("needs an NVIDIA GPU: set GPULEDGER_GPU_TEST=1 on a host with one")
	}
}

// On a machine without the driver, the real shim says so in the words a
// user reads.
func TestOpenDriver_NoLibcuda(t *testing.T) {
	if os.Getenv("GPULEDGER_GPU_TEST") == "1" {
		t.Skip("this host has a GPU driver")
	}
	_, err := openDriver()
	if err == nil {
		t.Skip("libcuda.so.1 is present on this host")
	}
	if !errors.Is(err, errNoDriver) || !strings.HasPrefix(err.Error(), "no CUDA driver: libcuda.so.1 not found") {
		t.Errorf("err = %v", err)
	}
}

func TestMeasureGPUs_RealGPU(t *testing.T) {
	realGPU(t)
	t0 := time.Now()
	gpus, skips, info := MeasureGPUs(context.Background(), GPUOptions{})
	wall := time.Since(t0)
	js, _ := json.Marshal(struct {
		G any
		S any
		I any
	}{gpus, skips, info})
	t.Logf("%.2f s: %s", wall.Seconds(), js)
	if info.Source != "cuda" || len(gpus) == 0 || len(skips) != 0 {
		t.Fatalf("source %q, %d GPUs, skips %+v", info.Source, len(gpus), skips)
	}
	for _, g := range gpus {
		for _, f := range gpuFigures {
			if figure(&g, f) <= 0 {
				t.Errorf("GPU %d: %s not measured", g.Index, f)
			}
		}
	}
	if wall > DefaultGPUBudget+time.Second {
		t.Errorf("took %v, budget %v", wall, DefaultGPUBudget)
	}
}

// spinPTX replaces the FP32 kernel with one that spins for 3 s on the
// GPU's global timer, whatever it is asked: a kernel that outlives the
// budget, on real hardware.
const spinPTX = `.version 4.0
.target sm_50
.address_size 64

.visible .entry fma_fp32(
	.param .u64 fma_fp32_out,
	.param .u32 fma_fp32_iters
)
{
	.reg .pred 	%p<2>;
	.reg .b64 	%rd<4>;

	mov.u64 	%rd1, %globaltimer;
	add.u64 	%rd2, %rd1, 3000000000;
$Lspin:
	mov.u64 	%rd3, %globaltimer;
	setp.lt.u64 	%p1, %rd3, %rd2;
	@%p1 bra 	$Lspin;
	ret;
}
`

type spinDriver struct{ driver }

func (s spinDriver) ModuleLoad(ptx []byte) (uintptr, string, error) {
	if strings.Contains(string(ptx), ".entry fma_fp32(") {
		ptx = []byte(spinPTX)
	}
	return s.driver.ModuleLoad(ptx)
}

// A kernel that runs past the budget: MeasureGPUs returns at the budget
// with the figures measured before it and says why the rest is missing.
func TestMeasureGPUs_RealGPUHungKernel(t *testing.T) {
	realGPU(t)
	o := GPUOptions{Budget: 1500 * time.Millisecond, openCUDA: func() (driver, error) {
		d, err := openDriver()
		if err != nil {
			return nil, err
		}
		return spinDriver{d}, nil
	}}
	t0 := time.Now()
	gpus, skips, _ := MeasureGPUs(context.Background(), o)
	wall := time.Since(t0)
	t.Logf("returned after %.2f s; skips %+v", wall.Seconds(), skips)
	if wall > 2500*time.Millisecond {
		t.Errorf("returned after %v: the budget was 1.5 s and the kernel spins 3 s", wall)
	}
	if len(gpus) == 0 || gpus[0].BF16TFLOPS <= 0 {
		t.Fatalf("the figure before the hang is lost: %+v", gpus)
	}
	s, ok := gpuSkipOf(skips, "fp32_tflops", gpus[0].Index)
	if !ok || !strings.Contains(s.Why, "did not finish within the bench's budget") {
		t.Errorf("fp32 skip %+v", s)
	}
}
