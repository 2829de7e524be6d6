#!/usr/bin/env bash
# Replays every step of the Dockerfile without a Docker engine, and checks
# what the image promises:
#   1. the server, built as the server stage builds it (CGO_ENABLED=0,
#      timetzdata), is a static binary;
#   2. the agent, built by scripts/agent-build-portable.sh in a bullseye
#      sysroot as the agent stage builds it, needs glibc 2.17 at most
#      (AGENT_BIN=PATH reuses a portable build made earlier in the run);
#   3. the final image's layout in a temporary root (the two binaries, CA
#      roots, /data owned by a non-root user);
#   4. the server started as a system user created for the run (setpriv),
#      with GPULEDGER_DB in that root's /data and a fake Telegram, in a
#      working directory it cannot write;
#   5. the HEALTHCHECK command ("gpuledger healthcheck", run as that user)
#      succeeds within the start period, the agent is handed out with the
#      right checksum, SIGTERM stops the server with status 0, and the
#      health check then fails.
#
#   sudo scripts/ship-dockerfile-steps.sh            # builds the agent (~10 min cold)
#   AGENT_BIN=dist/gpuledger-agent-linux-amd64 scripts/ship-dockerfile-steps.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="/usr/local/go/bin:$PATH"
[ "$(id -u)" = 0 ] || { echo "ship-dockerfile-steps: needs root (a system user, setpriv)" >&2; exit 1; }
for tool in setpriv useradd userdel readelf sha256sum curl; do
	command -v "$tool" >/dev/null || { echo "ship-dockerfile-steps: $tool is missing" >&2; exit 1; }
done

IMG=$(mktemp -d /tmp/gpuledger-image.XXXXXX) # the image's file system
chmod 755 "$IMG"
WORK=$(mktemp -d /tmp/gpuledger-steps.XXXXXX)
USERNAME=gpl-ship-$$
SERVER_PID="" FAKE_PID=""
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	id "$USERNAME" >/dev/null 2>&1 && userdel "$USERNAME" 2>/dev/null || true
	rm -rf "$IMG" "$WORK"
}
trap cleanup EXIT
t0=$(date +%s)
step() { printf '\n== [%3ss] %s\n' "$(($(date +%s) - t0))" "$*"; }
fail() { echo "ship-dockerfile-steps: FAIL: $*" >&2; [ -f "$WORK/server.log" ] && tail -30 "$WORK/server.log" >&2; exit 1; }
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

step "1. server stage: CGO_ENABLED=0 go build (static)"
mkdir -p "$IMG/usr/local/bin" "$IMG/etc/ssl/certs" "$IMG/data" "$IMG/opt/gpuledger"
CGO_ENABLED=0 go build -trimpath -tags timetzdata -ldflags="-s -w -X main.version=ship-steps" \
	-o "$IMG/usr/local/bin/gpuledger" ./cmd/gpuledger
if readelf -l "$IMG/usr/local/bin/gpuledger" | grep -q 'program interpreter'; then
	fail "the server binary is dynamically linked"
fi
echo 'gpuledger:x:10001:10001:gpuledger:/data:/sbin/nologin' >"$IMG/etc/passwd"
echo 'gpuledger:x:10001:' >"$IMG/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$IMG/etc/ssl/certs/ca-certificates.crt"
echo "static: $(ls -l "$IMG/usr/local/bin/gpuledger" | awk '{print $5}') bytes"

step "2. agent stage: portable build (bullseye sysroot) and glibc 2.17 check"
if [ -n "${AGENT_BIN:-}" ]; then
	[ -f "$AGENT_BIN" ] || fail "AGENT_BIN=$AGENT_BIN does not exist"
	cp "$AGENT_BIN" "$IMG/opt/gpuledger/gpuledger-agent"
	echo "reusing $AGENT_BIN"
else
	OUT_BIN="$IMG/opt/gpuledger/gpuledger-agent" bash scripts/agent-build-portable.sh
fi
bash scripts/agent-check-glibc.sh "$IMG/opt/gpuledger/gpuledger-agent" 2.17

step "3. final stage: layout, /data owned by a non-root system user"
useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$USERNAME"
uid=$(id -u "$USERNAME") gid=$(id -g "$USERNAME")
[ "$uid" != 0 ] || fail "the system user is root"
chown "$uid:$gid" "$IMG/data"
chmod 700 "$IMG/data"
echo "user $USERNAME uid=$uid gid=$gid; /data: $(stat -c '%U %a' "$IMG/data")"

step "4. start the server as $USERNAME (the image's USER), GPULEDGER_DB=\$IMG/data/gpuledger.db"
go build -o "$WORK/tgfake-server" ./bot/telegram/tgfake/cmd/tgfake-server
fake_port=$(free_port)
"$WORK/tgfake-server" -addr "127.0.0.1:$fake_port" -token "4242:steps" >"$WORK/fake.out" 2>&1 &
FAKE_PID=$!
for _ in $(seq 50); do grep -q TELEGRAM_API_ENDPOINT "$WORK/fake.out" && break; sleep 0.1; done
endpoint=$(sed -n 's/^TELEGRAM_API_ENDPOINT=//p' "$WORK/fake.out")
[ -n "$endpoint" ] || fail "the fake Bot API did not start: $(cat "$WORK/fake.out")"
port=$(free_port)
as_user() {
	setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --no-new-privs \
		env -i PATH=/usr/bin:/bin SSL_CERT_FILE="$IMG/etc/ssl/certs/ca-certificates.crt" \
		GPULEDGER_DB="$IMG/data/gpuledger.db" GPULEDGER_LISTEN=":$port" \
		GPULEDGER_AGENT_BINARY="$IMG/opt/gpuledger/gpuledger-agent" "$@"
}
# The working directory is the image's root, which the user cannot write.
(cd "$IMG" && as_user TELEGRAM_BOT_TOKEN=4242:steps TELEGRAM_API_ENDPOINT="$endpoint" \
	"$IMG/usr/local/bin/gpuledger" serve >"$WORK/server.log" 2>&1) &
SERVER_PID=$!

step "5. HEALTHCHECK: gpuledger healthcheck as $USERNAME (start period 20 s)"
ok=""
for _ in $(seq 200); do
	if as_user "$IMG/usr/local/bin/gpuledger" healthcheck >/dev/null 2>&1; then ok=1; break; fi
	kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited"
	sleep 0.1
done
[ -n "$ok" ] || fail "the health check did not pass within 20 s"
as_user "$IMG/usr/local/bin/gpuledger" healthcheck
server_pid=$(pgrep -u "$uid" -f "$IMG/usr/local/bin/gpuledger serve" | head -1)
[ -n "$server_pid" ] || fail "no server process runs as $USERNAME"
echo "server pid $server_pid runs as uid $(ps -o uid= -p "$server_pid" | tr -d ' ')"
[ "$(stat -c %u "$IMG/data/gpuledger.db")" = "$uid" ] || fail "the database is not owned by $USERNAME"
echo "database: $(stat -c '%n %U %a' "$IMG/data/gpuledger.db")"
want=$(sha256sum "$IMG/opt/gpuledger/gpuledger-agent" | cut -d ' ' -f 1)
got=$(curl -fsS "http://127.0.0.1:$port/agent/download.sha256" | cut -d ' ' -f 1)
[ "$got" = "$want" ] || fail "/agent/download.sha256 says $got, the binary is $want"
curl -fsS -o "$WORK/agent" "http://127.0.0.1:$port/agent/download"
[ "$(sha256sum "$WORK/agent" | cut -d ' ' -f 1)" = "$want" ] || fail "/agent/download sent other bytes"
echo "agent handed out: sha256 $want"
if grep -q '4242:steps' "$WORK/server.log"; then fail "the Telegram token is in the server log"; fi

step "SIGTERM: exit status 0, then the health check fails"
kill -TERM "$server_pid"
set +e
wait "$SERVER_PID"
status=$?
set -e
SERVER_PID=""
[ "$status" = 0 ] || fail "the server exited with $status after SIGTERM"
if as_user "$IMG/usr/local/bin/gpuledger" healthcheck 2>/dev/null; then fail "the health check passed with the server stopped"; fi
echo "exit 0; health check fails when stopped"
step "OK: every Dockerfile step replayed"
