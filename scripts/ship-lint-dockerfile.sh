#!/usr/bin/env bash
# Static checks of what ships, for machines without a Docker engine:
#   1. Dockerfile syntax with dockerfile-utils (the linter of the VS Code
#      Docker extension; hadolint is not in Debian bookworm), installed
#      from npm into a cache directory outside the clone;
#   2. the image's promises, read from the Dockerfile: every COPY --from
#      names a stage, the server is built with CGO_ENABLED=0, it runs as a
#      numeric non-root user, data lives in the /data volume, the hub port
#      is exposed, the HEALTHCHECK uses "gpuledger healthcheck";
#   3. docker-compose.yml keeps the volume, the port, the proxy variable;
#   4. shellcheck over scripts/ship-*.sh (installed with apt when missing).
# The generated install.sh and start.sh are checked by the Go tests
# TestInstallScript_Shellcheck and TestStartScript_Shellcheck, which run
# when the linter is on PATH (this script installs it).
#
#   scripts/ship-lint-dockerfile.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NPM_DIR=${NPM_DIR:-/var/cache/gpuledger/npm}
DFU_VERSION=0.16.3
fail=0
bad() { echo "ship-lint: FAIL: $*" >&2; fail=1; }

# 1. Syntax.
if [ ! -x "$NPM_DIR/node_modules/.bin/dockerfile-utils" ]; then
	command -v npm >/dev/null || { echo "ship-lint: npm is needed (apt-get install npm)" >&2; exit 1; }
	mkdir -p "$NPM_DIR"
	npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent "dockerfile-utils@$DFU_VERSION"
fi
if "$NPM_DIR/node_modules/.bin/dockerfile-utils" lint Dockerfile; then
	echo "ship-lint: dockerfile-utils lint: OK"
else
	bad "dockerfile-utils lint Dockerfile"
fi

# 2. The image's promises. Instructions are joined across line
# continuations first.
df=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' Dockerfile | grep -v '^[[:space:]]*#')
stages=$(printf '%s\n' "$df" | sed -n 's/^FROM .* AS \([a-z0-9_-]*\)$/\1/Ip')
for from in $(printf '%s\n' "$df" | grep -o -- '--from=[a-z0-9_-]*' | sed 's/--from=//' | sort -u); do
	printf '%s\n' "$stages" | grep -qx "$from" || bad "COPY --from=$from names no stage (stages: $(echo $stages))"
done
final=$(printf '%s\n' "$df" | awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}')
server=$(printf '%s\n' "$df" | awk '/^FROM .* AS server$/{on=1} /^FROM /&&!/ AS server$/{on=0} on')
printf '%s\n' "$server" | grep -q 'CGO_ENABLED=0 go build [^&]*\./cmd/gpuledger\( \|$\)' || bad "the server stage does not build ./cmd/gpuledger with CGO_ENABLED=0"
user=$(printf '%s\n' "$final" | sed -n 's/^USER \([0-9]*\)\(:[0-9]*\)\{0,1\}$/\1/p' | tail -1)
[ -n "$user" ] && [ "$user" != 0 ] || bad "the final stage does not run as a numeric non-root USER"
printf '%s\n' "$final" | grep -q '^VOLUME \["/data"\]$' || bad "no VOLUME [\"/data\"]"
printf '%s\n' "$final" | grep -q 'GPULEDGER_DB=/data/gpuledger.db' || bad "GPULEDGER_DB is not /data/gpuledger.db"
printf '%s\n' "$final" | grep -q "chown=$user:" || bad "/data is not owned by the USER ($user)"
printf '%s\n' "$final" | grep -q '^EXPOSE 8477$' || bad "the hub port 8477 is not exposed"
printf '%s\n' "$final" | grep -q 'GPULEDGER_AGENT_BINARY=/opt/gpuledger/gpuledger-agent' || bad "GPULEDGER_AGENT_BINARY is not set"
printf '%s\n' "$final" | grep -q 'COPY --from=agent /out/gpuledger-agent /opt/gpuledger/gpuledger-agent' || bad "the agent binary is not shipped"
printf '%s\n' "$final" | grep -q '^HEALTHCHECK .*CMD \["/usr/local/bin/gpuledger", "healthcheck"\]$' || bad "the HEALTHCHECK does not run gpuledger healthcheck"
printf '%s\n' "$df" | grep -q 'agent-check-glibc.sh /out/gpuledger-agent 2.17' || bad "the agent stage does not check glibc 2.17"
[ "$fail" = 0 ] && echo "ship-lint: Dockerfile promises: OK"

# 3. Compose.
for want in 'gpuledger-data:/data' '"8477:8477"' 'HTTPS_PROXY' 'TELEGRAM_BOT_TOKEN' 'GPULEDGER_ALLOWED_USERS' 'GPULEDGER_PUBLIC_URL' 'stop_grace_period'; do
	grep -qF -- "$want" docker-compose.yml || bad "docker-compose.yml lacks $want"
done
[ "$fail" = 0 ] && echo "ship-lint: docker-compose.yml: OK"

# 4. Shell scripts.
if ! command -v shellcheck >/dev/null; then
	apt-get install -y -qq shellcheck >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq shellcheck >/dev/null; }
fi
if shellcheck --severity=warning scripts/ship-*.sh; then
	echo "ship-lint: shellcheck scripts/ship-*.sh: OK"
else
	bad "shellcheck"
fi
exit "$fail"
