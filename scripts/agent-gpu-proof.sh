#!/usr/bin/env bash
# Real-hardware proof of gpuledger-agent on an NVIDIA host with python3 and
# torch. Needs dist/gpuledger-agent-linux-amd64 and dist/hubstub, built by
# scripts/agent-gpu-proof-build.sh; needs no network. About 5 minutes.
#
#   scripts/agent-gpu-proof.sh OUTDIR
#
# 1. check on the fresh host                      -> OUTDIR/check.txt
# 2. run (--sample 1s --interval 5s) against the hub stub while a bf16
#    matmul loop starts and stops on a schedule    -> OUTDIR/timeline.txt
#    (every heartbeat: OUTDIR/heartbeats.jsonl; agent log: OUTDIR/agent.log)
# 3. a second process holds GPU memory, no compute; check again
#                                                  -> OUTDIR/check-neighbour.txt
# 4. footprint over the same 120 s: the agent at --sample 5s (CPU per hour and
#    per sample from schedstat, VmRSS, VmHWM, RssAnon/RssFile, RSS per
#    mapping) against nvidia-smi --query-gpu once per 5 s
#                                                  -> OUTDIR/footprint.txt
# OUTDIR/summary.txt collects the verdicts.
set -uo pipefail

OUT=${1:?usage: agent-gpu-proof.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${AGENT:-$ROOT/dist/gpuledger-agent-linux-amd64}
HUB=${HUB:-$ROOT/dist/hubstub}
# shellcheck source=scripts/free-port.sh
. "$(dirname "$0")/free-port.sh"
PORT=${PORT:-$(free_port)}
FOOT_S=${FOOT_S:-120}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$SUMMARY"; }
fail=0
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

for f in "$AGENT" "$HUB"; do
	[ -x "$f" ] || { say "FAIL: $f missing: run scripts/agent-gpu-proof-build.sh first"; exit 1; }
done
command -v nvidia-smi >/dev/null || say "note: nvidia-smi not found; footprint comparison will be skipped"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
	{ say "FAIL: python3 with torch and CUDA is required"; exit 1; }
say "agent: $("$AGENT" version)"
say "glibc here: $(ldd --version 2>&1 | head -1)"

# 1. check on the fresh host.
"$AGENT" check >"$OUT/check.txt" 2>&1
rc=$?
say "check exit $rc"
sed 's/^/    /' "$OUT/check.txt" | tee -a "$SUMMARY" >/dev/null

# Helpers in Python: a bf16 matmul loop for N seconds, and a memory holder.
cat >"$WORK/matmul.py" <<'PY'
import sys, time, torch
dur = float(sys.argv[1])
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn_like(a)
torch.cuda.synchronize()
print("matmul start", time.time(), flush=True)
t = time.time()
while time.time() - t < dur:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
print("matmul stop", time.time(), flush=True)
PY
cat >"$WORK/hold.py" <<'PY'
import sys, time, torch
x = torch.empty(int(sys.argv[1]) << 30, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print("holding", x.numel() >> 30, "GiB", flush=True)
time.sleep(float(sys.argv[2]))
PY

# 2. Verdict timeline.
TOKEN=proof-$RANDOM$RANDOM
"$HUB" --listen 127.0.0.1:$PORT --token "$TOKEN" --log "$OUT/heartbeats.jsonl" 2>>"$OUT/agent.log" &
pids+=($!)
sleep 0.5
T0=$(date +%s.%N)
# CPU and network are switched off as signals here so the timeline shows the
# GPU signal alone (the python process itself burns a core while it runs).
GPULEDGER_AGENT_TOKEN=$TOKEN "$AGENT" run --server http://127.0.0.1:$PORT --sample 1s --interval 5s \
	--cpu-threshold 0 --net-threshold 0 >>"$OUT/agent.log" 2>&1 &
APID=$!
pids+=($APID)
say "timeline: agent pid $APID; idle 20 s, then bf16 matmul 30 s, then idle 25 s"
sleep 20
python3 "$WORK/matmul.py" 30 >"$WORK/matmul.log" 2>&1
sleep 25
kill -TERM $APID; wait $APID 2>/dev/null
MSTART=$(awk '/matmul start/ {print $3}' "$WORK/matmul.log")
MSTOP=$(awk '/matmul stop/ {print $3}' "$WORK/matmul.log")
python3 - "$OUT/heartbeats.jsonl" "$T0" "${MSTART:-0}" "${MSTOP:-0}" >"$OUT/timeline.txt" <<'PY'
import json, sys, datetime
path, t0, mstart, mstop = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
def ts(s):
    s = s.rstrip("Z")
    if "." in s:
        a, b = s.split(".")
        s = a + "." + b[:6]
    return datetime.datetime.fromisoformat(s).replace(tzinfo=datetime.timezone.utc).timestamp()
print(f"matmul ran from t={mstart - t0:.1f}s to t={mstop - t0:.1f}s (agent started at t=0)")
print(f"{'t(s)':>6}  {'verdict':8} {'util mean/max':>14} {'mem MiB':>8} {'W':>5} {'busy/idle/unk':>13} {'idle_s':>6}  reasons")
states = []
for line in open(path):
    h = json.loads(line)
    t = ts(h["received"]) - t0
    g = (h.get("gpus") or [{}])[0]
    um, ux = g.get("util_mean"), g.get("util_max")
    util = f"{um:.0f}/{ux:.0f}" if um is not None else "?"
    print(f"{t:6.1f}  {h['verdict']:8} {util:>14} {g.get('memory_used_mib') or 0:>8} {g.get('power_mean_w') or 0:5.0f} "
          f"{h['busy_samples']:>4}/{h['idle_samples']}/{h['unknown_samples']:<4} {h.get('idle_seconds', 0):>6}  {'; '.join(h.get('reasons') or [])[:70]}")
    if not states or states[-1] != h["verdict"]:
        states.append(h["verdict"])
print("verdict sequence:", " -> ".join(states))
want = ["idle", "busy", "idle"]
it = iter(states)
ok = all(any(s == w for s in it) for w in want)
print("RESULT:", "PASS idle -> busy -> idle seen" if ok else "FAIL idle -> busy -> idle not seen")
PY
cat "$OUT/timeline.txt" | tee -a "$SUMMARY" >/dev/null
grep -q "RESULT: PASS" "$OUT/timeline.txt" || fail=1
tail -1 "$OUT/timeline.txt"

# 3. Noisy neighbour: another process holds 8 GiB, no compute.
python3 "$WORK/hold.py" 8 60 >"$WORK/hold.log" 2>&1 &
HPID=$!
pids+=($HPID)
for _ in $(seq 60); do grep -q holding "$WORK/hold.log" && break; sleep 1; done
"$AGENT" check >"$OUT/check-neighbour.txt" 2>&1
say "check with a neighbour holding memory: exit $?"
sed 's/^/    /' "$OUT/check-neighbour.txt" | tee -a "$SUMMARY" >/dev/null
if grep -q "GPU memory already in use" "$OUT/check-neighbour.txt"; then
	say "RESULT: PASS noisy-neighbour warning shown"
else
	say "RESULT: FAIL no noisy-neighbour warning"; fail=1
fi
kill $HPID 2>/dev/null; wait $HPID 2>/dev/null

# 4. Footprint, side by side over the same window (scripts/agent-footprint.sh:
# the agent's CPU from the nanosecond schedstat of all its threads, RSS split
# into anonymous and file-backed pages; nvidia-smi's from getrusage).
say "footprint: ${FOOT_S} s, agent at --sample 5s --interval 30s vs nvidia-smi every 5 s"
AGENT=$AGENT HUB=$HUB PORT= SAMPLE=5s INTERVAL=30s WINDOW=$FOOT_S SMI=auto \
	"$ROOT/scripts/agent-footprint.sh" >"$OUT/footprint.txt" 2>&1 || fail=1
sed 's/^/    /' "$OUT/footprint.txt" | tee -a "$SUMMARY"
grep -c '"verdict"' "$OUT/heartbeats.jsonl" >/dev/null 2>&1
say "largest heartbeat body: $(python3 -c "import json,sys; print(max(json.loads(l)['bytes'] for l in open(sys.argv[1])))" "$OUT/heartbeats.jsonl") bytes"
if grep -qiE 'panic|fatal error' "$OUT/agent.log"; then say "RESULT: FAIL agent log shows a panic"; fail=1; fi
say "done: $([ $fail = 0 ] && echo ALL PASS || echo SOME FAILED); files in $OUT"
exit $fail
