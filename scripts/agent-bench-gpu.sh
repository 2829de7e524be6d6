#!/usr/bin/env bash
# The GPU bench beside a PyTorch probe on one NVIDIA host: RUNS runs of the
# driver-API bench (agent/bench/internal/gpuprobe: MeasureGPUs alone, JSON),
# then TORCH_RUNS runs of a torch probe of the same figures (bf16 and fp16
# 8192² matmuls, fp32 with TF32 off, 20 timed iterations after 3 warm-up; a
# 4 GiB device copy counted read plus write; 1 GiB pinned copies each way),
# and the medians of both side by side.
#
#   scripts/agent-bench-gpu.sh OUTDIR
#
# Environment: GPUPROBE (default dist/gpuprobe, else a fresh `go build`),
# RUNS (5), TORCH_RUNS (3). Needs python3; the torch probe runs where torch
# sees a GPU and is skipped (said so) elsewhere. No network.
set -uo pipefail
OUT=${1:?usage: agent-bench-gpu.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GPUPROBE=${GPUPROBE:-$ROOT/dist/gpuprobe}
RUNS=${RUNS:-5}
TORCH_RUNS=${TORCH_RUNS:-3}
mkdir -p "$OUT"
if [ ! -x "$GPUPROBE" ]; then
	GPUPROBE=$OUT/gpuprobe
	(cd "$ROOT" && CGO_CFLAGS=-Wno-deprecated-declarations go build -trimpath -o "$GPUPROBE" ./agent/bench/internal/gpuprobe) || exit 1
fi

for i in $(seq 1 "$RUNS"); do
	/usr/bin/time -f '%e s wall, %U s user, %S s sys, %M KiB max RSS' -o "$OUT/bench-$i.time" \
		"$GPUPROBE" >"$OUT/bench-$i.json" 2>"$OUT/bench-$i.err"
	echo "bench run $i: exit $?, $(cat "$OUT/bench-$i.time")"
done

cat >"$OUT/torchprobe.py" <<'PY'
import json, sys, time
try:
    import torch
except ImportError:
    print(json.dumps({"skipped": "no torch"})); sys.exit(0)
if not torch.cuda.is_available():
    print(json.dumps({"skipped": "torch sees no GPU"})); sys.exit(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
t0 = time.monotonic()
def timed(fn, warm=3, iters=20):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 1000 / iters
out = {"torch": torch.__version__, "cuda": torch.version.cuda, "name": torch.cuda.get_device_name(0)}
n = 8192
for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
    x = torch.randn(n, n, device="cuda", dtype=dt)
    y = torch.randn(n, n, device="cuda", dtype=dt)
    s = timed(lambda: torch.mm(x, y))
    out[name + "_tflops"] = round(2 * n**3 / s / 1e12, 1)
    del x, y
src = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
dst = torch.empty_like(src)
s = timed(lambda: dst.copy_(src), iters=10)
out["mem_gbps"] = round(2 * src.numel() / s / 1e9, 1)
del src, dst
h = torch.empty(1 << 30, dtype=torch.uint8).pin_memory()
d = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
out["h2d_gbps"] = round(h.numel() / timed(lambda: d.copy_(h, non_blocking=True), iters=10) / 1e9, 2)
out["d2h_gbps"] = round(h.numel() / timed(lambda: h.copy_(d, non_blocking=True), iters=10) / 1e9, 2)
out["wall_s"] = round(time.monotonic() - t0, 2)
print(json.dumps(out))
PY
for i in $(seq 1 "$TORCH_RUNS"); do
	python3 "$OUT/torchprobe.py" >"$OUT/torch-$i.json" 2>"$OUT/torch-$i.err"
	echo "torch run $i: exit $?: $(cat "$OUT/torch-$i.json")"
done

python3 - "$OUT" "$RUNS" "$TORCH_RUNS" <<'PY'
import json, statistics, sys
out, runs, truns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bench, torch = [], []
for i in range(1, runs + 1):
    try:
        bench.append(json.load(open(f"{out}/bench-{i}.json")))
    except Exception as e:
        print(f"bench run {i}: {e}")
for i in range(1, truns + 1):
    try:
        t = json.load(open(f"{out}/torch-{i}.json"))
        if "skipped" not in t:
            torch.append(t)
    except Exception as e:
        print(f"torch run {i}: {e}")
def med(xs):
    xs = [x for x in xs if x]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None
if bench:
    b0 = bench[-1]
    for g in b0["gpus"]:
        print(f"GPU {g['index']}: {g.get('name')} compute {g.get('compute_capability')} mig={g.get('mig', False)} "
              f"PCIe gen {g.get('pcie_gen')}/{g.get('pcie_gen_max')} x{g.get('pcie_width')}/{g.get('pcie_width_max')} "
              f"power {g.get('power_limit_w')}/{g.get('power_default_w')} W, SM max {g.get('sm_clock_max_mhz')} MHz, "
              f"under the bench {g.get('sm_clock_bench_mhz')} MHz, reasons {g.get('clock_event_reasons', 0):#x}, "
              f"ECC {g.get('ecc')}, uncorrected {g.get('ecc_uncorrected', 0)}, retired {g.get('retired_pages', 0)}, "
              f"temp max {g.get('temperature_c')} C, util before {g.get('util_percent', 0)} %, procs {g.get('other_processes', 0)}")
    print(f"driver {b0['info']['DriverVersion']}, CUDA {b0['info']['CUDADriver']}; skipped: {b0.get('skipped')}")
print(f"{'figure':<12} {'bench median (min-max) of ' + str(len(bench)):<34} {'torch median (min-max) of ' + str(len(torch)):<34} bench/torch")
for f in ["bf16_tflops", "fp16_tflops", "fp32_tflops", "mem_gbps", "h2d_gbps", "d2h_gbps"]:
    b = med([r["gpus"][0].get(f, 0) for r in bench if r.get("gpus")])
    t = med([r.get(f, 0) for r in torch])
    fmt = lambda m: f"{m[0]:.1f} ({m[1]:.1f}-{m[2]:.1f})" if m else "-"
    ratio = f"{b[0] / t[0]:.2f}" if b and t else "-"
    print(f"{f:<12} {fmt(b):<34} {fmt(t):<34} {ratio}")
for k, key in (("bench wall_s", "wall_s"),):
    m = med([r[key] for r in bench])
    print(f"{k}: median {m[0]:.3f} (min {m[1]:.3f}, max {m[2]:.3f})" if m else f"{k}: -")
for k in ("GPUSeconds", "JITSeconds"):
    m = med([r["info"][k] for r in bench])
    print(f"bench {k}: median {m[0]:.3f} (min {m[1]:.3f}, max {m[2]:.3f})" if m else f"bench {k}: -")
m = med([t["wall_s"] for t in torch])
print(f"torch probe wall_s: median {m[0]:.2f}" if m else "torch probe: not run")
PY
