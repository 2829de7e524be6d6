#!/usr/bin/env bash
# Does the README's set-up work on a fresh machine? Clones the committed
# repository into a new directory and, with an empty Go module cache
# (GOMODCACHE=$(mktemp -d), GOFLAGS=-mod=mod: every module comes from the
# module proxy, checked against go.sum), runs the README's commands as
# written:
#   1. the run command (go run ./cmd/gpuledger) with a chat script on stdin;
#   2. the test command: its quick form on the ledger packages here
#      (go test -race ./ledger/...), because .ci/run already runs the
#      whole suite once; and a check that .ci/run runs the README's test
#      command exactly (.ci/run adds only -count=1, which turns the test
#      cache off).
# FRESH_GOCACHE=1 also starts from an empty build cache (slower).
#
#   scripts/ship-fresh-clone.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH"
TMP=$(mktemp -d /tmp/gpuledger-fresh.XXXXXX)
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
t0=$(date +%s)
step() { printf '\n== [%3ss] %s\n' "$(($(date +%s) - t0))" "$*"; }
fail() { echo "ship-fresh-clone: FAIL: $*" >&2; exit 1; }

# The README's shell blocks, in order.
readme_cmds=$(awk '/^```sh$/{on=1; next} /^```$/{on=0} on' "$ROOT/README.md")
run_cmd=$(printf '%s\n' "$readme_cmds" | grep -m1 '^go run ')
test_cmd=$(printf '%s\n' "$readme_cmds" | grep -m1 '^go test ')
[ -n "$run_cmd" ] || fail "README.md has no go run command in a sh block"
[ -n "$test_cmd" ] || fail "README.md has no go test command in a sh block"
echo "README run command:  $run_cmd"
echo "README test command: $test_cmd"

step "the README's test command is what .ci/run runs"
ci_cmd=$(grep -E '^[[:space:]]*go test ' "$ROOT/.ci/run" | sed 's/^[[:space:]]*//' | sed 's/ -count=1//' | grep -Fx -- "$test_cmd" || true)
[ -n "$ci_cmd" ] || fail ".ci/run does not run '$test_cmd' (with at most -count=1 added); its go test lines: $(grep -E 'go test ' "$ROOT/.ci/run" | tr '\n' ';')"
echo "OK: .ci/run runs: $(grep -E '^[[:space:]]*go test .*\./\.\.\.$' "$ROOT/.ci/run" | grep -v -- '-tags' | head -1 | sed 's/^[[:space:]]*//')"

step "clone into a fresh directory, empty module cache"
git clone -q "$ROOT" "$TMP/gpuledger"
export GOMODCACHE="$TMP/gomod" GOFLAGS=-mod=mod GOTOOLCHAIN=local
unset GOPATH
if [ "${FRESH_GOCACHE:-}" = 1 ]; then export GOCACHE="$TMP/gocache"; fi
cd "$TMP/gpuledger"
echo "clone at $(git rev-parse --short HEAD); GOMODCACHE=$GOMODCACHE"

step "1. $run_cmd  (a chat script on stdin)"
printf '%s\n' '/rent box1 autodl 4090 1.88/h' '/status' '/help' >"$TMP/chat.txt"
# The README's command, run by the shell as written.
sh -c "$run_cmd" <"$TMP/chat.txt" >"$TMP/run.out" 2>"$TMP/run.err" ||
	{ cat "$TMP/run.err" >&2; fail "$run_cmd exited non-zero"; }
grep -q 'box1' "$TMP/run.out" || { cat "$TMP/run.out" "$TMP/run.err" >&2; fail "the chat did not answer about box1"; }
[ -f gpuledger.db ] || fail "no gpuledger.db in the current directory"
echo "answered $(wc -l <"$TMP/run.out") lines; gpuledger.db $(stat -c %s gpuledger.db) bytes; modules fetched: $(find "$GOMODCACHE/cache/download" -name '*.zip' | wc -l)"
sed -n '1,6p' "$TMP/run.out"

step "2. ${test_cmd/.\/.../.\/ledger\/...}  (the quick form)"
quick=${test_cmd/.\/.../.\/ledger\/...}
sh -c "$quick" || fail "$quick failed in the fresh clone"

step "OK: the README's set-up works in a fresh clone"
