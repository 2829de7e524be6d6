package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakePython writes an executable that stands for python3: it ignores
// "-c SCRIPT" and runs body.
func fakePython(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTorch: the probe's figure is reported beside the bench; no torch,
// no CUDA, a crash, garbage, a hang or no python each give no figure
// and a Skip that says why.
func TestTorch(t *testing.T) {
	for _, c := range []struct {
		name, body string
		tflops     float64
		want       string
	}{
		{"measured", `echo 'warming up'; echo '{"version": "2.9.1+cu130", "bf16_tflops": 779.5}'`, 779.5, ""},
		{"no torch", `echo '{"error": "no PyTorch here (ModuleNotFoundError)"}'`, 0, "no PyTorch"},
		{"no cuda", `echo '{"version": "2.9.1", "error": "PyTorch sees no CUDA device"}'`, 0, "no CUDA device"},
		{"crash", `echo 'Traceback: CUDA out of memory' >&2; exit 1`, 0, "failed"},
		{"garbage", `echo 'hello'`, 0, "no result"},
		{"nothing", `echo '{"version": "2.9.1"}'`, 0, "measured nothing"},
		{"hang", `sleep 30 & wait`, 0, "did not finish"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Seconds for a script to answer on a loaded machine; one for the
			// one that hangs.
			o := Options{Python: fakePython(t, c.body), TorchTimeout: 10 * time.Second}
			if c.name == "hang" {
				o.TorchTimeout = time.Second
			}
			start := time.Now()
			tr, skip := probeTorch(t.Context(), o)
			if el := time.Since(start); el > o.TorchTimeout+3*time.Second {
				t.Fatalf("took %s", el)
			}
			if c.tflops > 0 {
				if tr == nil || tr.BF16TFLOPS != c.tflops || tr.Version != "2.9.1+cu130" || skip != nil {
					t.Fatalf("torch %+v skip %+v", tr, skip)
				}
				return
			}
			if tr != nil || skip == nil || skip.What != "torch" || !strings.Contains(skip.Why, c.want) {
				t.Fatalf("torch %+v skip %+v, want %q", tr, skip, c.want)
			}
		})
	}
	_, skip := probeTorch(t.Context(), Options{Python: filepath.Join(t.TempDir(), "nope")})
	if skip == nil || !strings.Contains(skip.Why, "cannot run") {
		t.Fatalf("no python: %+v", skip)
	}
}

// TestRun_TorchBeside: --torch adds the probe to a bench, after its wall
// time and never in place of its figures.
func TestRun_TorchBeside(t *testing.T) {
	o := Options{FactsOnly: true, Torch: true, Python: fakePython(t, `sleep 0.2; echo '{"version": "2.9.1", "bf16_tflops": 700}'`),
		measureGPUs: noGPU}
	b := Run(t.Context(), o)
	if b.Torch == nil || b.Torch.BF16TFLOPS != 700 {
		t.Fatalf("torch %+v", b.Torch)
	}
	if b.WallSeconds >= 0.2 {
		t.Errorf("wall %v s includes the probe's 0.2 s", b.WallSeconds)
	}
}
