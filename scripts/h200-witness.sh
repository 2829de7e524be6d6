#!/usr/bin/env bash
# Real-GPU proof of the agent's witness: copies, downloads and installs are
# work, with the GPU untouched. One agent (--sample 5s, --interval 10s, all
# else at its defaults) reports to the hub stub while these loads run one
# after another, LOAD_S seconds each (default 30):
#
#   idle         nothing runs
#   matmul       a PyTorch bf16 matmul loop on the GPU (skipped without torch)
#   ddcopy       a 2 GiB file copied with dd iflag=direct,oflag=direct in a loop
#                (the H200's dataset copy that read idle before the witness)
#   rsync        rsync -a of a directory in a loop (if rsync exists)
#   tar          tar | zstd of a directory in a loop (zstd if it exists)
#   cp           cp of a directory in a loop (buffered: the page cache)
#   tarwait      a tar reading from a pipe that stays silent: a transfer
#                process that moves no bytes (a stalled download)
#   pip          a stand-in named pip run as "pip install" that only sleeps
#                (no network there: the process match alone)
#
# Each load's heartbeats after its first 12 s are summarised on one line:
# the verdicts, the last busy heartbeat's work and reasons, the agent's CPU
# time over the load and its RSS at the end. Expected: idle idle; every
# other load busy, with work "disk N MB/s" (ddcopy, rsync, tar, cp),
# "rsync running", "tar running", "pip install running" (after 10 s), or
# the GPU's utilisation for matmul. About 4 minutes.
#
#   scripts/h200-witness.sh OUTDIR
#
# Needs dist/gpuledger-agent-linux-amd64 (scripts/agent-build-portable.sh)
# or dist/gpuledger-agent (CGO_ENABLED=1 go build -o dist/gpuledger-agent
# ./cmd/gpuledger-agent), and dist/hubstub (built here with go when
# missing); python3 to summarise. DRY=1 runs without a GPU: the agent
# reads a simulated idle GPU (--simulate, with no host object, so the
# machine's own CPU, network, disk and processes are read) and matmul is
# skipped. LOADS="idle ddcopy" runs a subset. No network is used.
set -uo pipefail

OUT=${1:?usage: h200-witness.sh OUTDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${AGENT:-}
if [ -z "$AGENT" ]; then
	AGENT=$ROOT/dist/gpuledger-agent-linux-amd64
	[ -x "$AGENT" ] || AGENT=$ROOT/dist/gpuledger-agent
fi
HUB=${HUB:-$ROOT/dist/hubstub}
# shellcheck source=scripts/free-port.sh
. "$(dirname "$0")/free-port.sh"
PORT=${PORT:-$(free_port)}
LOAD_S=${LOAD_S:-30}
SKIP_S=12
DRY=${DRY:-0}
LOADS=${LOADS:-"idle matmul ddcopy rsync tar cp tarwait pip"}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${WORK_DIR:-$OUT}/witness.XXXXXX")
REPORT=$OUT/witness.txt
: >"$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }
pids=()
load_pids=()
cleanup() {
	for p in "${load_pids[@]}" "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	cp "$WORK"/hb.jsonl "$WORK"/agent.log "$OUT"/ 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ ! -x "$HUB" ] && command -v go >/dev/null; then
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$HUB" ./agent/internal/hubstub) || exit 1
fi
for f in "$AGENT" "$HUB"; do
	[ -x "$f" ] || { say "FAIL: $f missing (see the header)"; exit 1; }
done
command -v python3 >/dev/null || { say "FAIL: python3 is needed to summarise"; exit 1; }
have_torch=0
if [ "$DRY" != 1 ] && python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	have_torch=1
fi

say "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "agent: $("$AGENT" version 2>&1 | head -1)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)$([ "$DRY" = 1 ] && echo "none (DRY=1: simulated idle GPU)")"
say "disk: $(df -h "$WORK" | awk 'NR==2 {print $1, $2}') under $WORK; tools: $(for c in rsync tar zstd cp dd; do command -v $c >/dev/null && printf '%s ' $c; done)"

# The data the copies move: 2 GiB written with O_DIRECT, and a directory
# of 64 files of 16 MiB for rsync, tar and cp.
dd if=/dev/zero of="$WORK/big" oflag=direct bs=4M count=512 status=none ||
	dd if=/dev/zero of="$WORK/big" bs=4M count=512 conv=fsync status=none
mkdir -p "$WORK/src"
for i in $(seq 1 64); do head -c 16777216 /dev/urandom >"$WORK/src/f$i"; done
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nsleep "$2"\nexit 0\n' >"$WORK/bin/pip" # not exec: the process must stay pip
chmod +x "$WORK/bin/pip"
sync # the set-up's writes reach the disk before the first load, not during idle

token=witness-proof-token-0123456789abcdef0123
"$HUB" --listen 127.0.0.1:$PORT --token "$token" --log "$WORK/hb.jsonl" 2>>"$WORK/agent.log" &
pids+=($!)
sim=()
if [ "$DRY" = 1 ]; then
	printf '{"gpus":[{"name":"simulated","uuid":"GPU-dry","memory_total_mib":81920,"memory_used_mib":0,"utilization":0}]}\n' >"$WORK/sim.json"
	sim=(--simulate "$WORK/sim.json")
fi
sleep 0.5
GPULEDGER_AGENT_TOKEN=$token "$AGENT" run --server http://127.0.0.1:$PORT --sample 5s --interval 10s \
	--state-dir "$WORK/state" "${sim[@]}" >>"$WORK/agent.log" 2>&1 &
apid=$!
pids+=($apid)
sleep 12 # the CPU and network baselines, and a first heartbeat

agent_cpu() { awk '{print $14 + $15}' "/proc/$apid/stat" 2>/dev/null || echo 0; }
agent_rss() { awk '/^VmRSS/ {print $2}' "/proc/$apid/status" 2>/dev/null || echo 0; }

# run_load NAME: starts the load in the background (into load_pids).
run_load() {
	local until=$(($(date +%s) + LOAD_S))
	case $1 in
	idle) ;;
	matmul)
		python3 - "$LOAD_S" <<'PY' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
PY
		load_pids+=($!) ;;
	ddcopy)
		(while [ "$(date +%s)" -lt "$until" ]; do
			dd if="$WORK/big" of="$WORK/big.copy" iflag=direct oflag=direct bs=4M status=none
		done) &
		load_pids+=($!) ;;
	rsync)
		(while [ "$(date +%s)" -lt "$until" ]; do
			rm -rf "$WORK/dst.rsync"
			rsync -a "$WORK/src/" "$WORK/dst.rsync/"
			sync
		done) &
		load_pids+=($!) ;;
	tar)
		local z=(cat)
		command -v zstd >/dev/null && z=(zstd -1 -q -c)
		(while [ "$(date +%s)" -lt "$until" ]; do
			tar -C "$WORK" -cf - src | "${z[@]}" >"$WORK/src.tar.part"
			sync
		done) &
		load_pids+=($!) ;;
	cp)
		(while [ "$(date +%s)" -lt "$until" ]; do
			rm -rf "$WORK/dst.cp"
			cp -r "$WORK/src" "$WORK/dst.cp"
			sync
		done) &
		load_pids+=($!) ;;
	tarwait)
		(sleep "$LOAD_S" | tar -xf - -C "$WORK" 2>/dev/null) & # an empty archive at the end
		load_pids+=($!) ;;
	pip)
		"$WORK/bin/pip" install "$LOAD_S" &
		load_pids+=($!) ;;
	esac
}

say ""
say "$(printf '%-8s %-13s %-9s %-8s %s' load verdicts agent_cpu rss_kib 'work | reasons (last busy heartbeat, else last)')"
for load in $LOADS; do
	case $load in
	matmul) [ "$have_torch" = 1 ] || { say "$(printf '%-8s skipped: no torch with CUDA' "$load")"; continue; } ;;
	rsync | zstd) command -v "$load" >/dev/null || { say "$(printf '%-8s skipped: no %s here' "$load" "$load")"; continue; } ;;
	esac
	t0=$(date +%s)
	c0=$(agent_cpu)
	load_pids=()
	run_load "$load"
	sleep "$LOAD_S"
	for p in "${load_pids[@]}"; do
		pkill -P "$p"
		kill "$p"
		wait "$p" # never a bare wait: it would wait for the agent
	done 2>/dev/null # and no "Terminated" from the shell
	t1=$(date +%s)
	c1=$(agent_cpu)
	rss=$(agent_rss)
	line=$(python3 - "$WORK/hb.jsonl" $((t0 + SKIP_S)) "$t1" <<'PY'
import json, sys, datetime
path, lo, hi = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
hbs = []
for l in open(path):
    h = json.loads(l)
    t = datetime.datetime.fromisoformat(h["received"].replace("Z", "+00:00")).timestamp()
    if lo < t <= hi + 1:
        hbs.append(h)
if not hbs:
    print("none          -")
    sys.exit()
counts = {}
for h in hbs:
    counts[h["verdict"]] = counts.get(h["verdict"], 0) + 1
v = " ".join("%s %d/%d" % (k, n, len(hbs)) for k, n in sorted(counts.items()))
busy = [h for h in hbs if h["verdict"] == "busy"]
last = busy[-1] if busy else hbs[-1]
print("%-13s %s | %s" % (v, last.get("work") or "-", "; ".join(last.get("reasons") or [])))
PY
	)
	say "$(printf '%-8s %-13s %-9s %-8s %s' "$load" "${line:0:13}" "$(((c1 - c0) * 10))ms" "$rss" "${line:14}")"
done
say ""
say "agent cpu is utime+stime over the load (10 ms ticks); rss is VmRSS at its end"
