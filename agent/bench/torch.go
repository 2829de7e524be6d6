package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// torchScript times a bf16 8192² matmul with PyTorch on the first CUDA
// device, about a second of it after a warm-up, and prints one JSON
// line. It is the figure most published runs quote, reported beside the
// bench's own (mma.sync reaches a fraction of it: docs/agent.md).
const torchScript = `
import json, sys
try:
    import torch
except Exception as e:
    print(json.dumps({"error": "no PyTorch here (%s)" % type(e).__name__}))
    sys.exit(0)
out = {"version": torch.__version__}
if not torch.cuda.is_available():
    out["error"] = "PyTorch sees no CUDA device"
else:
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record(); a @ b; e.record(); torch.cuda.synchronize()
    it = max(1, min(200, int(1000 / max(s.elapsed_time(e), 0.01))))
    s.record()
    for _ in range(it):
        a @ b
    e.record(); torch.cuda.synchronize()
    out["bf16_tflops"] = 2 * n**3 * it / (s.elapsed_time(e) / 1e3) / 1e12
print(json.dumps(out))
`

// torchOut bounds what is read of the probe's output.
const torchOut = 4 << 10

// DefaultTorchTimeout bounds the torch probe (importing torch alone
// takes seconds).
const DefaultTorchTimeout = 60 * time.Second

// probeTorch runs torchScript with o.Python and returns its figure, or
// a Skip saying why there is none. The interpreter and its children are
// killed when the timeout ends.
func probeTorch(ctx context.Context, o Options) (*perf.TorchRun, *perf.Skip) {
	skip := func(format string, args ...any) (*perf.TorchRun, *perf.Skip) {
		return nil, &perf.Skip{What: "torch", GPU: -1, Why: fmt.Sprintf(format, args...)}
	}
	py := o.Python
	if py == "" {
		py = "python3"
	}
	to := o.TorchTimeout
	if to <= 0 {
		to = DefaultTorchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", torchScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &out, max: torchOut}
	err := cmd.Run()
	if ctx.Err() != nil {
		return skip("the PyTorch probe did not finish in %s", to)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return skip("cannot run %s: %v", py, err)
	}
	line := strings.TrimSpace(out.String())
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	var res struct {
		Version    string  `json:"version"`
		BF16TFLOPS float64 `json:"bf16_tflops"`
		Error      string  `json:"error"`
	}
	if jerr := json.Unmarshal([]byte(line), &res); jerr != nil {
		if err != nil {
			return skip("the PyTorch probe failed: %v", err)
		}
		return skip("the PyTorch probe printed no result")
	}
	if res.Error != "" {
		return skip("%s", clipString(res.Error, 200))
	}
	if res.BF16TFLOPS <= 0 {
		return skip("the PyTorch probe measured nothing")
	}
	return &perf.TorchRun{Version: clipString(res.Version, 64), BF16TFLOPS: res.BF16TFLOPS}, nil
}

// limitedBuffer keeps the first max bytes written and drops the rest
// (the writer never fails, so a chatty child is not killed by a
// broken pipe).
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
