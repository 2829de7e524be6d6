#!/usr/bin/env bash
# Runs .ci/run as a new machine would: in a fresh clone of the committed
# HEAD, with no bullseye sysroot, an empty Go module cache and an empty
# build cache (SYSROOT, GOMODCACHE and GOCACHE point at new empty folders).
# Needs root and the package mirrors, like .ci/run; takes 10-25 minutes.
#
#   scripts/ci-cold.sh [LOG]        # default log: /tmp/gpuledger-ci-cold.log
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOG=${1:-/tmp/gpuledger-ci-cold.log}
TMP=$(mktemp -d /tmp/gpuledger-cold.XXXXXX)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
git clone -q "$ROOT" "$TMP/clone"
rev=$(git -C "$TMP/clone" rev-parse --short HEAD)
mkdir -p "$TMP/sys" "$TMP/mod" "$TMP/build"
t0=$(date +%s)
rc=0
(cd "$TMP/clone" && CI=true SYSROOT="$TMP/sys/bullseye" GOMODCACHE="$TMP/mod" GOCACHE="$TMP/build" \
	bash .ci/run </dev/null) >"$LOG" 2>&1 || rc=$?
echo "ci-cold: .ci/run exit $rc after $(($(date +%s) - t0)) s on $rev; log: $LOG"
exit "$rc"
