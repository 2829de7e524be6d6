#!/usr/bin/env bash
# Measures gpuledger-agent's footprint in steady state: CPU (nanosecond
# schedstat of every thread), RSS split into anonymous and file-backed pages,
# and, where nvidia-smi exists, the CPU of one `nvidia-smi --query-gpu`
# process per 5 s over the same window (what shell-out exporters do).
#
#   scripts/agent-footprint.sh [AGENT_RUN_FLAGS...]
#
# Environment: AGENT (default dist/gpuledger-agent-linux-amd64, else a fresh
# `go build`), HUB (default dist/hubstub, else `go build`), PORT (a free one),
# SAMPLE (5s), INTERVAL (30s), WINDOW seconds (120), SETTLE seconds before
# the window opens (3: past start-up and nvml.Init), SMI (auto|0|1),
# CPUPROFILE (a file: the agent writes a CPU profile of its run there),
# AGENT_LOG (a file: keep the agent's log there).
# Examples:
#   scripts/agent-footprint.sh                                  # NVML, on a GPU host
#   SAMPLE=50ms WINDOW=30 SMI=0 scripts/agent-footprint.sh --simulate agent/testdata/sim/idle.json
# Needs python3 (standard library only). Prints the report on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
hubpid=
cleanup() { [ -n "$hubpid" ] && kill "$hubpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

AGENT=${AGENT:-$ROOT/dist/gpuledger-agent-linux-amd64}
HUB=${HUB:-$ROOT/dist/hubstub}
if [ ! -x "$AGENT" ]; then
	AGENT=$WORK/gpuledger-agent
	(cd "$ROOT" && CGO_CFLAGS=-Wno-deprecated-declarations go build -trimpath -ldflags "-s -w" -o "$AGENT" ./cmd/gpuledger-agent)
fi
if [ ! -x "$HUB" ]; then
	HUB=$WORK/hubstub
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$HUB" ./agent/internal/hubstub)
fi
# shellcheck source=scripts/free-port.sh
. "$(dirname "$0")/free-port.sh"
PORT=${PORT:-$(free_port)}
TOKEN=footprint-$RANDOM$RANDOM
"$HUB" --listen 127.0.0.1:"$PORT" --token "$TOKEN" --log "$WORK/heartbeats.jsonl" 2>"$WORK/hub.log" &
hubpid=$!
sleep 0.5

GPULEDGER_AGENT_TOKEN=$TOKEN python3 - "$AGENT" "$PORT" "${SAMPLE:-5s}" "${INTERVAL:-30s}" "${WINDOW:-120}" \
	"${SETTLE:-3}" "${SMI:-auto}" "${CPUPROFILE:-}" "${AGENT_LOG:-$WORK/agent.log}" "$WORK/heartbeats.jsonl" "$@" <<'PY'
import os, re, resource, shutil, signal, subprocess, sys, time

agent, port, sample, interval, window, settle, smi_mode, prof, logpath, hblog = sys.argv[1:11]
extra = sys.argv[11:]
window, settle = float(window), float(settle)

def dur(s):
    units = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    m = re.fullmatch(r"([0-9.]+)(ms|s|m|h)", s)
    if not m:
        sys.exit(f"agent-footprint: cannot read duration {s!r}")
    return float(m.group(1)) * units[m.group(2)]

def threads(pid):
    """Per thread: (cpu ns, times scheduled) from /proc/PID/task/*/schedstat."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            f = open(f"/proc/{pid}/task/{t}/schedstat").read().split()
            out[int(t)] = (int(f[0]), int(f[2]))
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out

def status(pid):
    out = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        f = v.split()
        if f and f[0].isdigit():
            out[k] = int(f[0])
    return out

args = [agent, "run", "--server", f"http://127.0.0.1:{port}", "--sample", sample, "--interval", interval]
if prof:
    args += ["--cpuprofile", prof]
args += extra
log = open(logpath, "w")
p = subprocess.Popen(args, stdout=log, stderr=log)
time.sleep(settle)
if p.poll() is not None:
    sys.exit("agent-footprint: the agent exited at start:\n" + open(logpath).read())

smi = shutil.which("nvidia-smi") if smi_mode != "0" else None
if smi_mode == "1" and not smi:
    sys.exit("agent-footprint: SMI=1 but nvidia-smi is not on PATH")
threads0 = status(p.pid).get("Threads", 0)
th0, t0 = threads(p.pid), time.monotonic()
runs, rss = 0, []
period = 5.0
while time.monotonic() - t0 < window:
    t = time.monotonic()
    if smi:
        subprocess.run([smi, "--query-gpu=utilization.gpu,memory.used,power.draw,temperature.gpu", "--format=csv"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs += 1
    rss.append(status(p.pid)["VmRSS"])
    time.sleep(max(0.0, min(period - (time.monotonic() - t), window - (time.monotonic() - t0))))
wall = time.monotonic() - t0
th1 = threads(p.pid)
st = status(p.pid)
maps = {}
try:  # resident memory per mapped file (anonymous memory as [anon])
    name = None
    for line in open(f"/proc/{p.pid}/smaps"):
        f = line.split()
        if "-" in f[0] and not f[0].endswith(":"):
            name = f[5] if len(f) > 5 else "[anon]"
        elif f[0] == "Rss:":
            maps[name] = maps.get(name, 0) + int(f[1])
except OSError:
    pass
per_thread = []
for tid, (ns, n) in sorted(th1.items()):
    ns0, n0 = th0.get(tid, (0, 0))
    per_thread.append(f"{tid - p.pid:+d}: {(ns - ns0) / 1e6:.2f} ms/{n - n0} runs")
smi_ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the agent is not reaped yet: nvidia-smi runs only
p.send_signal(signal.SIGTERM)
_, _, agent_ru = os.wait4(p.pid, 0)

# Threads that ended in the window are not counted (the agent's do not end).
a_ns = sum(ns for ns, _ in th1.values()) - sum(ns for tid, (ns, _) in th0.items() if tid in th1)
samples = wall / dur(sample)
beats = wall / dur(interval)
per_hour_ms = a_ns / 1e6 / wall * 3600
mib = lambda kb: kb / 1024
print(f"window       : {wall:.1f} s at --sample {sample} --interval {interval} "
      f"(~{samples:.0f} samples, ~{beats:.0f} heartbeats){' ' + ' '.join(extra) if extra else ''}")
print(f"agent CPU    : {a_ns/1e6:.2f} ms in the window = {per_hour_ms:.1f} ms per hour = "
      f"{a_ns/1e3/samples:.1f} us per sample (heartbeats and runtime included); "
      f"{a_ns/wall/1e7:.4f}% of one core")
print(f"agent RSS    : VmRSS {mib(st['VmRSS']):.1f} MiB (max seen {mib(max(rss)):.1f}), VmHWM {mib(st['VmHWM']):.1f} MiB; "
      f"RssAnon {mib(st.get('RssAnon', 0)):.1f} MiB, RssFile {mib(st.get('RssFile', 0)):.1f} MiB, "
      f"RssShmem {mib(st.get('RssShmem', 0)):.1f} MiB; threads {threads0}->{st.get('Threads', 0)}")
print("agent threads: " + ", ".join(per_thread) + " (thread id - pid: CPU in the window / times scheduled)")
top = sorted(maps.items(), key=lambda kv: -kv[1])[:6]
print("agent RSS by mapping: " + ", ".join(f"{os.path.basename(k)} {v/1024:.1f}" for k, v in top) + " (MiB)")
print(f"agent whole run (start-up included, getrusage): user {agent_ru.ru_utime:.3f} s, sys {agent_ru.ru_stime:.3f} s")
if runs:
    s_cpu = smi_ru.ru_utime + smi_ru.ru_stime
    print(f"nvidia-smi   : {runs} runs; CPU {s_cpu:.3f} s = {s_cpu/wall*3600:.1f} s per hour "
          f"({s_cpu/runs*1000:.1f} ms per run); peak RSS of one run {smi_ru.ru_maxrss/1024:.1f} MiB")
    # Both per hour at the agent's sample rate: one nvidia-smi per sample.
    smi_per_hour = s_cpu / runs * 3600 / dur(sample)
    print(f"ratio        : one nvidia-smi per sample would cost {smi_per_hour*1000/max(per_hour_ms, 1e-9):.0f}x the agent's CPU "
          f"(target: at least 500x); agent RSS {'under' if st['VmRSS'] < 30000*1000/1024 else 'OVER'} 30 MB")
else:
    print("nvidia-smi   : not run")
PY
