#!/usr/bin/env bash
# Real-kernel check that the agent sees an SSH session forked by a thread
# other than its listener's first: /proc/PID/task/TID/children lists the
# children of that one thread, so a threaded server's sessions live under
# its worker threads. A listener named sshd (a copy of python3) forks each
# session from a worker thread; one connection stays open; each agent given
# runs beside it for 25 s at --log-level debug and the "people connected"
# lines it logs are counted. No GPU and no network are needed.
#
#   scripts/agent-presence-threads.sh AGENT [AGENT...]
#
# Prints the listener's children per thread, then for each agent the
# number of people it saw (no line: it saw none).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 AGENT [AGENT...]" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
D=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$D"' EXIT

cat >"$D/listener.py" <<'PY'
import os, socket, sys, threading, time
if len(sys.argv) > 1 and sys.argv[1] == "-session":
    time.sleep(3600)
    sys.exit(0)
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(5)
print(l.getsockname()[1], flush=True)
def serve():
    while True:
        c, _ = l.accept()
        pid = os.fork()
        if pid == 0:
            os.dup2(c.fileno(), 3)
            os.execv(sys.executable, ["sshd: tester@notty", __file__, "-session"])
        print("session", pid, "forked by thread", threading.get_native_id(), "of", os.getpid(), flush=True)
t = threading.Thread(target=serve, daemon=True)
t.start()
t.join()
PY
cp "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$D/sshd"
"$D/sshd" -W ignore "$D/listener.py" >"$D/listener.out" 2>&1 &
listener=$!
pids+=("$listener")
for _ in $(seq 50); do [ -s "$D/listener.out" ] && break; sleep 0.1; done
port=$(head -1 "$D/listener.out")
python3 -c "import socket, time; s = socket.create_connection(('127.0.0.1', $port)); time.sleep(3600)" &
pids+=("$!")
for _ in $(seq 50); do grep -q '^session' "$D/listener.out" && break; sleep 0.1; done
sed -n 2p "$D/listener.out"
for t in /proc/"$listener"/task/*; do
	echo "  thread $(basename "$t") children: [$(xargs <"$t/children")]"
done

hub=$ROOT/dist/hubstub
[ -x "$hub" ] || { hub=$D/hubstub; (cd "$ROOT" && CGO_ENABLED=0 go build -o "$hub" ./agent/internal/hubstub); }
for agent in "$@"; do
	tok=t$RANDOM$RANDOM
	hport=$((19000 + RANDOM % 1000))
	"$hub" --listen 127.0.0.1:$hport --token "$tok" --log "$D/hb.jsonl" 2>/dev/null &
	hp=$!
	sleep 0.5
	GPULEDGER_AGENT_TOKEN=$tok timeout 25 "$agent" run --server http://127.0.0.1:$hport --sample 2s --interval 5s \
		--state-dir "$D/state-$RANDOM" --log-level debug >"$D/agent.log" 2>&1 || true
	kill "$hp" 2>/dev/null || true
	wait "$hp" 2>/dev/null || true
	seen=$(grep -o 'people connected" count=[0-9]*' "$D/agent.log" | sed 's/.*count=//' | sort -u | tr '\n' ' ' || true)
	echo "$agent: people connected: ${seen:-none seen}"
done
