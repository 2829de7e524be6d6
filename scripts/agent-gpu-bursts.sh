#!/usr/bin/env bash
# Real-GPU proof of the agent's busy/idle verdict under periodic work: the
# agent at its defaults (--sample 5s; only --interval is shortened, to 10 s,
# so that a short run holds several heartbeats) against the hub stub, beside
# PyTorch loads run one after another on the same GPU:
#
#   empty        nothing on the GPU
#   hold20       a process holding 20 GiB and its CUDA context, running nothing
#   saturated    bf16 matmul without pause
#   b50ms-5s     50 ms of bf16 matmul every 5 s, the context held between bursts
#   b200ms-15s   200 ms every 15 s
#   b1s-30s      1 s every 30 s
#   b50ms-30s    50 ms every 30 s (the shortest burst with the longest gap)
#
# PASS for a bursty load: no heartbeat reports more idle time than the
# longest gap between two bursts (the start-up warm-up counts as one) plus
# one sample plus 1 s (NVML's own sample period, about 1/6 s, and the
# scheduling of three processes), and some heartbeat is busy for the GPU's
# sake. For the saturated loop: every heartbeat busy. For the idle loads:
# every heartbeat idle from the first, the idle time growing. Idle loads
# start the agent 16 s after the load is ready, so that the allocation's
# samples have left NVML's 14 s of history.
# Then, on the empty GPU, the footprint at --sample 5s --interval 30s side by
# side with one nvidia-smi per 5 s (scripts/agent-footprint.sh, WINDOW s).
#
#   scripts/agent-gpu-bursts.sh OUTDIR
#
# Needs python3 with torch and CUDA, dist/gpuledger-agent-linux-amd64 and
# dist/hubstub (scripts/agent-gpu-proof-build.sh, or AGENT=, HUB=); no
# network. About 8 minutes with the footprint (FOOT=0 skips it: 6 minutes).
# LOADS="empty b50ms-5s" runs a subset; AGENT_FLAGS adds agent flags (for a
# dry run without a GPU: a fake torch on PYTHONPATH, --simulate FILE). Writes OUTDIR/bursts.txt (the table),
# OUTDIR/footprint.txt and OUTDIR/raw.tar.gz (heartbeats, agent logs, burst
# times).
set -uo pipefail

OUT=${1:?usage: agent-gpu-bursts.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${AGENT:-$ROOT/dist/gpuledger-agent-linux-amd64}
HUB=${HUB:-$ROOT/dist/hubstub}
FOOTPRINT=${FOOTPRINT:-$ROOT/scripts/agent-footprint.sh}
# shellcheck source=scripts/free-port.sh
. "$(dirname "$0")/free-port.sh"
PORT=${PORT:-}
SAMPLE=5s
INTERVAL=${INTERVAL:-10s}
FOOT=${FOOT:-1}
WINDOW=${WINDOW:-120}
LOADS=${LOADS:-"empty hold20 saturated b50ms-5s b200ms-15s b1s-30s b50ms-30s"}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RAW=$(mktemp -d)
REPORT=$OUT/bursts.txt
: >"$REPORT"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$REPORT"; }
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	tar -C "$RAW" -czf "$OUT/raw.tar.gz" . 2>/dev/null
	rm -rf "$RAW"
}
trap cleanup EXIT

for f in "$AGENT" "$HUB"; do
	[ -x "$f" ] || { say "FAIL: $f missing: run scripts/agent-gpu-proof-build.sh first"; exit 1; }
done
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
	{ say "FAIL: python3 with torch and CUDA is required"; exit 1; }
say "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "agent: $("$AGENT" version)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
say "agent flags: run --sample $SAMPLE --interval $INTERVAL (all else at its defaults)"

# load.py KIND ARGS: writes "ready" when its context and tensors exist, then
# one line per burst ("burst START END", epoch seconds) to stdout.
cat >"$RAW/load.py" <<'PY'
import sys, time, torch
kind = sys.argv[1]
def log(*a):
    print(*a, flush=True)
if kind == "hold":
    x = torch.empty(int(sys.argv[2]) << 30, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    log("ready", time.time())
    while True:
        time.sleep(3600)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
def burst(secs):
    s = time.time()
    while True:
        c = a @ b
        torch.cuda.synchronize()
        if time.time() - s >= secs:
            break
    e = time.time()
    log("burst", s, e)
burst(0.05)  # warm-up: cuBLAS picks its kernels; a burst like any other
log("ready", time.time())
if kind == "saturated":
    while True:
        burst(5)
length, period = float(sys.argv[2]), float(sys.argv[3])
t0 = time.time() + 3
k = 0
while True:
    time.sleep(max(0, t0 + k * period - time.time()))
    burst(length)
    k += 1
PY

# run_load NAME SECONDS SETTLE PYARGS...: the load, then the agent for
# SECONDS against a fresh hub stub; all heartbeats to $RAW/NAME.hb.jsonl.
run_load() {
	local name=$1 secs=$2 settle=$3
	shift 3
	local lpid=
	: >"$RAW/$name.load.log"
	if [ $# -gt 0 ]; then
		python3 "$RAW/load.py" "$@" >"$RAW/$name.load.log" 2>&1 &
		lpid=$!
		pids+=($lpid)
		for _ in $(seq 120); do grep -q '^ready' "$RAW/$name.load.log" && break; sleep 0.25; done
		grep -q '^ready' "$RAW/$name.load.log" || { say "FAIL: $name: load did not start: $(tail -3 "$RAW/$name.load.log")"; return; }
	fi
	sleep "$settle"
	local token=bursts-$RANDOM$RANDOM port
	if [ -n "$PORT" ]; then port=$((PORT++)); else port=$(free_port); fi
	"$HUB" --listen 127.0.0.1:$port --token "$token" --log "$RAW/$name.hb.jsonl" 2>>"$RAW/$name.agent.log" &
	local hpid=$!
	pids+=($hpid)
	sleep 0.3
	date +%s.%N >"$RAW/$name.t0"
	# shellcheck disable=SC2086 # AGENT_FLAGS: extra flags, for dry runs (--simulate FILE)
	GPULEDGER_AGENT_TOKEN=$token "$AGENT" run --server http://127.0.0.1:$port --sample $SAMPLE --interval "$INTERVAL" \
		${AGENT_FLAGS:-} >>"$RAW/$name.agent.log" 2>&1 &
	local apid=$!
	pids+=($apid)
	if [ "$name" = b200ms-15s ]; then
		# check beside periodic work: the same rule as the verdict.
		sleep 20
		"$AGENT" check >"$RAW/$name.check.txt" 2>&1
		sleep $((secs - 20))
	else
		sleep "$secs"
	fi
	kill -TERM $apid
	wait $apid 2>/dev/null
	date +%s.%N >"$RAW/$name.t1"
	kill $hpid 2>/dev/null
	wait $hpid 2>/dev/null
	[ -n "$lpid" ] && { kill $lpid 2>/dev/null; wait $lpid 2>/dev/null; }
	say "$name: $(wc -l <"$RAW/$name.hb.jsonl") heartbeats, $(grep -c '^burst' "$RAW/$name.load.log") bursts"
}

for l in $LOADS; do
	case $l in
	empty) run_load empty 25 5 ;;
	hold20) run_load hold20 25 16 hold 20 ;;
	saturated) run_load saturated 20 0 saturated ;;
	b50ms-5s) run_load b50ms-5s 30 0 bursts 0.05 5 ;;
	b200ms-15s) run_load b200ms-15s 50 0 bursts 0.2 15 ;;
	b1s-30s) run_load b1s-30s 70 0 bursts 1 30 ;;
	b50ms-30s) run_load b50ms-30s 70 0 bursts 0.05 30 ;;
	*) say "unknown load $l" ;;
	esac
done

python3 - "$RAW" "$SAMPLE" $LOADS <<'PY' | tee -a "$REPORT"
import json, os, sys, datetime
raw, sample = sys.argv[1], float(sys.argv[2].rstrip("s"))
loads = sys.argv[3:]
def ts(s):
    s = s.rstrip("Z")
    if "." in s:
        a, b = s.split(".")
        s = a + "." + b[:6]
    return datetime.datetime.fromisoformat(s).replace(tzinfo=datetime.timezone.utc).timestamp()
kind = {"empty": "idle", "hold20": "idle", "saturated": "busy"}
rows, allok = [], True
for name in loads:
    p = os.path.join(raw, name + ".hb.jsonl")
    if not os.path.exists(p):
        rows.append((name, "FAIL", "no heartbeats", "", "", "", ""))
        allok = False
        continue
    t0 = float(open(os.path.join(raw, name + ".t0")).read())
    hbs = [json.loads(l) for l in open(p)]
    judged = [h for h in hbs if h["samples"] > 0]  # a shutdown beat may hold no sample
    bursts = []
    for l in open(os.path.join(raw, name + ".load.log")):
        f = l.split()
        if f and f[0] == "burst":
            bursts.append((float(f[1]), float(f[2])))
    seq = "".join({"busy": "B", "idle": "I"}.get(h["verdict"], "?") for h in judged)
    idles = [h.get("idle_seconds", 0) for h in judged]
    umax = max((g.get("util_max") or 0) for h in judged for g in (h.get("gpus") or [{}])) if judged else 0
    k = kind.get(name, "bursts")
    why = ""
    if k == "idle":
        ok = (bool(judged) and all(h["verdict"] == "idle" for h in judged) and idles[0] > 0
              and all(b >= a for a, b in zip(idles, idles[1:])) and idles[-1] > idles[0])
        bound = "-"
        if not ok:
            why = "not idle from the first heartbeat, or idle time not growing"
    elif k == "busy":
        ok = bool(judged) and all(h["verdict"] == "busy" for h in judged) and max(idles) == 0
        bound = "-"
        if not ok:
            why = "a heartbeat was not busy"
    else:
        # Bursts while the agent ran, and the warm-up before it.
        t1 = float(open(os.path.join(raw, name + ".t1")).read())
        bs = [b for b in bursts if b[0] <= t1]
        gaps = [b[0] - a[1] for a, b in zip(bs, bs[1:])]
        gaps.append(t1 - bs[-1][1])  # after the last burst, until the agent stopped
        longest = max(gaps)
        bound = longest + sample + 1
        gpu_busy = any(h["verdict"] == "busy" and any("gpu" in r for r in (h.get("reasons") or [])) for h in judged)
        ok = bool(judged) and max(idles) <= bound and gpu_busy
        bound = f"{bound:.1f}"
        if max(idles) > float(bound):
            why = "idle time over the bound"
        elif not gpu_busy:
            why = "no heartbeat busy for the GPU"
        n = sum(1 for b in bs if b[0] >= t0)
        name = f"{name} ({n} bursts)"
    allok &= ok
    rows.append((name, "PASS" if ok else "FAIL", seq, str(max(idles) if idles else "-"), bound, f"{umax:.0f}", why))
print()
print(f"{'load':24} {'result':6} {'heartbeats (B busy, I idle)':28} {'max idle_s':>10} {'bound s':>8} {'util max %':>10}  note")
for r in rows:
    print(f"{r[0]:24} {r[1]:6} {r[2]:28} {r[3]:>10} {r[4]:>8} {r[5]:>10}  {r[6]}")
print()
for name in loads:
    p = os.path.join(raw, name + ".hb.jsonl")
    if not os.path.exists(p):
        continue
    t0 = float(open(os.path.join(raw, name + ".t0")).read())
    print(f"{name}: t(s) verdict idle_s util_mean/max busy/idle/unknown reasons")
    for l in open(p):
        h = json.loads(l)
        g = (h.get("gpus") or [{}])[0]
        um, ux = g.get("util_mean"), g.get("util_max")
        util = f"{um:.1f}/{ux:.0f}" if um is not None else "?"
        print(f"  {ts(h['received']) - t0:6.1f} {h['verdict']:7} {h.get('idle_seconds', 0):4} {util:>9} "
              f"{h['busy_samples']}/{h['idle_samples']}/{h['unknown_samples']}  {'; '.join(h.get('reasons') or [])[:90]}")
print("RESULT:", "ALL PASS" if allok else "SOME FAILED")
PY
if [ -f "$RAW/b200ms-15s.check.txt" ]; then
	say "check beside 200 ms every 15 s:"
	grep -E 'work seen|Warnings|No warnings|util' "$RAW/b200ms-15s.check.txt" | sed 's/^/    /' | tee -a "$REPORT"
fi

if [ "$FOOT" = 1 ]; then
	sleep 15 # the GPU settles to its idle clocks after the last load
	say "footprint: ${WINDOW} s, agent at --sample 5s --interval 30s vs nvidia-smi every 5 s, empty GPU"
	AGENT=$AGENT HUB=$HUB PORT=$PORT SAMPLE=5s INTERVAL=30s WINDOW=$WINDOW SMI=auto \
		"$FOOTPRINT" >"$OUT/footprint.txt" 2>&1
	say "footprint exit $?"
	sed 's/^/    /' "$OUT/footprint.txt" | tee -a "$REPORT"
fi
grep -q "RESULT: ALL PASS" "$REPORT"
