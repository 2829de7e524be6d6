#!/usr/bin/env bash
# Measures, on an NVIDIA host, what the agent's reads cost and how bursts of
# work show in the GPU's energy counter (agent/internal/nvmlcost). Needs
# dist/nvmlcost, built here with
#   PKG=./agent/internal/nvmlcost OUT_BIN=dist/nvmlcost scripts/agent-build-portable.sh
# and dist/csleep (gcc -O2 -static -o dist/csleep scripts/csleep.c), and
# python3 with torch on the GPU host for the burst part. About 4 minutes.
#
#   scripts/agent-nvml-costs.sh OUTDIR
#
# OUTDIR/rss.txt     resident memory after each step of NVML start-up
# OUTDIR/calls.txt   CPU per NVML call, per host read, per sample cycle
# OUTDIR/idle.txt    5 s windows on an idle GPU: energy-counter power, utilisation history
# OUTDIR/bursts.txt  the same while a process holds a CUDA context and runs
#                    bursts of 50 ms, 200 ms and 1 s of bf16 matmul every 10 s
# OUTDIR/floor.txt   CPU per wake of a process that only wakes once a second:
#                    C (csleep), Go on a ticker, Go with one NVML read per tick
set -uo pipefail
OUT=${1:?usage: agent-nvml-costs.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/dist/nvmlcost}
mkdir -p "$OUT"
date -u +%Y-%m-%dT%H:%M:%SZ >"$OUT/date.txt"
"$BIN" rss >"$OUT/rss.txt" 2>&1
"$BIN" calls -n "${N:-2000}" >"$OUT/calls.txt" 2>&1
"$BIN" energy -seconds "${IDLE_S:-40}" -window 5s >"$OUT/idle.txt" 2>&1
{
	"$BIN" tick -seconds 60 -every 1s &
	"$BIN" tick -seconds 60 -every 1s -nvml &
	"${CSLEEP:-$ROOT/dist/csleep}" 60 1 &
	wait
} >"$OUT/floor.txt" 2>&1
cat >"$OUT/bursts.py" <<'PY'
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
torch.cuda.synchronize()
print("ready", time.time(), flush=True)
time.sleep(12)
for burst in [0.05, 0.05, 0.05, 0.2, 0.2, 0.2, 1.0, 1.0]:
    t = time.time()
    while time.time() - t < burst:
        c = a @ b
        torch.cuda.synchronize()
    print(f"burst {burst}s at {t:.2f}", flush=True)
    time.sleep(10)
PY
python3 "$OUT/bursts.py" >"$OUT/bursts-load.txt" 2>&1 &
load=$!
for _ in $(seq 1 60); do grep -q ready "$OUT/bursts-load.txt" 2>/dev/null && break; sleep 0.5; done
echo "load ready at $(date +%s.%N)" >>"$OUT/bursts-load.txt"
"$BIN" energy -seconds 105 -window 5s >"$OUT/bursts.txt" 2>&1
wait "$load"
head -50 "$OUT"/*.txt
