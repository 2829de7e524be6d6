#!/usr/bin/env bash
# Real-host proof of enrolment: the real server (terminal chat, its own
# SQLite file) and the real agent on a GPU host, nothing simulated.
#
#   1. /agent in the chat gives the enrolment install line;
#   2. that line (curl | sh) downloads the agent from the server, checks
#      it and starts it with the enrolment token;
#   3. the "New instance" card shows the GPU model and count that NVML
#      reads on this host; this host names no platform, so the card asks
#      for /adopt ID PRICE, which logs the rental at $2.50/h;
#   4. the agent takes the rental's own token from the heartbeat answer
#      (no second install) and reports with it;
#   5. the agent is stopped (SIGTERM: its shutdown report), and started
#      again in a new PID namespace, whose PID 1 starts now: to the agent
#      that is a new boot of the same instance;
#   6. the server asks whether the instance was stopped; "Stopped" records
#      the stop at the shutdown report and the resume at the new boot;
#   7. `gpuledger export` shows the rental's events and its money.
#
#   scripts/agent-enrol-h200.sh OUTDIR
#
# Needs SERVER (gpuledger, CGO_ENABLED=0 build) and AGENT (gpuledger-agent)
# binaries, curl, unshare (util-linux) and root for the PID namespace.
# Writes OUTDIR/enrol.txt (the steps and what was seen) and
# OUTDIR/console.txt (the whole chat).
set -uo pipefail

OUT=${1:?usage: agent-enrol-h200.sh OUTDIR}
SERVER=${SERVER:?SERVER=path of the gpuledger binary}
AGENT=${AGENT:?AGENT=path of the gpuledger-agent binary}
# shellcheck source=scripts/free-port.sh
. "$(dirname "$0")/free-port.sh"
PORT=${PORT:-$(free_port)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d)
REPORT=$OUT/enrol.txt
CONSOLE=$W/console.txt
: >"$REPORT"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$REPORT"; }
fail() {
	say "FAIL: $*"
	finish 1
}
pids=()
finish() {
	[ -n "${agentpid:-}" ] && kill "$agentpid" 2>/dev/null
	pkill -f "$W/agent/gpuledger-agent" 2>/dev/null
	pkill -f "exec sleep 900" 2>/dev/null
	exec 3>&- 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	sleep 1
	cp "$CONSOLE" "$OUT/console.txt" 2>/dev/null
	cp "$W/server.log" "$OUT/server.log" 2>/dev/null
	cat "$W"/agent*.log >"$OUT/agent.log" 2>/dev/null
	rm -rf "$W"
	exit "${1:-0}"
}
# waitfor PATTERN SECONDS: until the console shows PATTERN (grep -E).
waitfor() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		grep -qE "$1" "$CONSOLE" && return 0
		sleep 0.5
	done
	return 1
}
# button LABEL: the number of the newest button whose label starts with LABEL.
button() { grep -oE "\[[0-9]+\] $1" "$CONSOLE" | tail -1 | sed -E 's/^\[([0-9]+)\].*/\1/'; }
send() {
	echo "$*" >&3
	echo "> $*" >>"$CONSOLE.in"
}

say "host: $(hostname); GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
# A new boot is one more than 2 minutes after the stored one: on a machine
# that has just booted, the restart in step 5 would come too soon.
up=$(cut -d. -f1 /proc/uptime)
if [ "$up" -lt 150 ]; then
	say "the machine booted $up s ago; waiting until it is up 150 s"
	sleep $((150 - up))
fi
mkfifo "$W/in"
cp "$AGENT" "$W/gpuledger-agent"
GPULEDGER_DB=$W/ledger.db GPULEDGER_LISTEN=127.0.0.1:$PORT GPULEDGER_AGENT_BINARY=$W/gpuledger-agent \
	TELEGRAM_BOT_TOKEN='' "$SERVER" serve <"$W/in" >"$CONSOLE" 2>"$W/server.log" &
pids+=($!)
exec 3>"$W/in"
for _ in $(seq 1 40); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.25; done

send "/agent"
waitfor "install.sh\?token=enrol-" 15 || fail "no enrolment install line after /agent"
line=$(grep -oE "curl -fsSL '[^']+install.sh\?token=enrol-[A-Za-z0-9_-]+' \| sh" "$CONSOLE" | tail -1)
[ -n "$line" ] || fail "the install line is not a curl | sh line"
say "1. /agent answered with the enrolment line: ${line%%token=*}token=enrol-…"

say "2. running the install line (nohup init, --interval 10s)"
GPULEDGER_AGENT_DIR=$W/agent GPULEDGER_AGENT_INIT=nohup GPULEDGER_AGENT_ARGS="--interval 10s --sample 5s" \
	sh -c "$line" >"$W/install.log" 2>&1 || { cat "$W/install.log" >>"$REPORT"; fail "install line failed"; }
tail -3 "$W/install.log" | sed 's/^/   /' | tee -a "$REPORT"

waitfor "New instance" 60 || fail "no new-instance card within 60 s"
card=$(grep -A3 "New instance" "$CONSOLE" | head -4)
say "3. the card:"
echo "$card" | sed 's/^/   /' | tee -a "$REPORT"
echo "$card" | grep -q "${WANT_GPU:-H200}" || fail "the card does not name the ${WANT_GPU:-H200}"
id=$(grep -oE "/adopt [0-9]+ " "$CONSOLE" | head -1 | cut -d' ' -f2)
[ -n "$id" ] || fail "the card does not say /adopt ID"
send "/adopt $id \$2.50"
waitfor "Logged as" 15 || fail "/adopt $id did not log the rental"
rental=$(grep -oE "Logged as [A-Za-z0-9._-]+" "$CONSOLE" | tail -1 | cut -d' ' -f3)
say "   /adopt $id \$2.50: logged as $rental"

for _ in $(seq 1 60); do
	grep -q "reporting with its own token" "$W"/agent/*.log 2>/dev/null && break
	sleep 1
done
grep -h "reporting with its own token\|logged as" "$W"/agent/*.log 2>/dev/null | tail -2 | sed 's/^/   agent: /' | tee -a "$REPORT"
grep -q "reporting with its own token" "$W"/agent/*.log 2>/dev/null || fail "the agent did not switch to the rental's token"
say "4. the agent took the rental's token from the heartbeat answer"
sleep 12
send "/status"
sleep 2

agentpid=$(pgrep -f "$W/agent/gpuledger-agent" | head -1)
[ -n "$agentpid" ] || fail "no agent process"
say "5. SIGTERM to the agent (pid $agentpid); 20 s later it starts again in a new PID namespace"
kill -TERM "$agentpid"
for _ in $(seq 1 20); do kill -0 "$agentpid" 2>/dev/null || break; sleep 0.5; done
agentpid=
sleep 20
# The same installed agent, token file and state dir, as start.sh runs it,
# but with PID 1 of a new namespace starting now.
# PID 1 of the namespace stays (sleep): the agent dies with it.
unshare --pid --fork --mount-proc sh -c "sh '$W/agent/start.sh'; exec sleep 900" >"$W/agent-restart.log" 2>&1 &
pids+=($!)
sleep 3
sed 's/^/   restart: /' "$W/agent-restart.log" | tee -a "$REPORT"
pgrep -f "$W/agent/gpuledger-agent" >/dev/null || fail "the agent did not start again in a new PID namespace (unshare needs CAP_SYS_ADMIN)"
grep -h "agent started" "$W"/agent/*.log | tail -1 | sed 's/^/   agent: /' | tee -a "$REPORT"
waitfor "Stopped" 60 || fail "no question about the stop within 60 s of the new boot"
say "6. the server asks:"
grep -A2 "shut down at\|went silent at" "$CONSOLE" | tail -3 | sed 's/^/   /' | tee -a "$REPORT"
n=$(button "Stopped")
send "$n"
waitfor "recorded" 15 || fail "no stop recorded after the press"
grep -E "recorded" "$CONSOLE" | tail -1 | sed 's/^/   /' | tee -a "$REPORT"
sleep 12
send "/status"
sleep 2
say "7. export:"
"$SERVER" export -db "$W/ledger.db" --format json >"$OUT/export.json" 2>&1
python3 - "$OUT/export.json" "$rental" <<'EOF' | tee -a "$REPORT"
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc.get("rentals", []):
    if r.get("name") != sys.argv[2]:
        continue
    print("   rental", r["name"], "platform", r.get("platform"), "gpu", r.get("gpu"), "x", r.get("gpu_count"),
          "price", r.get("price"), r.get("currency"), "state", r.get("state"), "started", r.get("started_at"))
    from datetime import datetime
    t = lambda v: datetime.fromisoformat(v.replace("Z", "+00:00"))
    elapsed = (t(doc["as_of"]) - t(r["started_at"])).total_seconds()
    print("   as_of", doc.get("as_of"), "running_seconds", r.get("running_seconds"), "of", int(elapsed),
          "since the start (not billed while down:", int(elapsed) - r["running_seconds"], "s); compute", r["charges"]["compute"])
EOF
say "PASS"
finish 0
