#!/usr/bin/env bash
# bench-vs.sh BASE NEW [ROUNDS]: the chat's and the hub's benchmarks of
# BENCHMARKS.md run on two checkouts of the tree (BASE, e.g. an export of
# an older commit, and NEW), alternating one run of each per round so that
# both see the same machine load, then compared with benchstat (medians,
# with the ratio NEW/BASE). The test binaries are built first, so no
# compilation runs between the timed runs. Needs benchstat on PATH
# (go install golang.org/x/perf/cmd/benchstat@latest). The load generator's
# figures (cmd/hubload: heartbeats/s, latency) go to standard error per round;
# HUBLOAD_DURATION sets each run's length (10s).
set -euo pipefail
base=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
rounds=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pkgof TREE FUNC: the package directory (relative) that declares FUNC.
pkgof() {
	(cd "$1" && grep -rl --include='*_test.go' "^func $2(" . | head -1 | xargs dirname)
}

# name|benchmark regexp|flags
benches=(
	"parse|BenchmarkParse|-test.benchmem -test.count 1"
	"handle|BenchmarkHandle|-test.benchtime 500x -test.count 1"
	"transport|BenchmarkTransport_Charges|-test.benchtime 400x -test.count 1"
	"heartbeat|BenchmarkHeartbeat_Kinds|-test.benchmem -test.benchtime 1000x -test.count 1"
)

for side in base new; do
	tree=${!side}
	for b in "${benches[@]}"; do
		IFS='|' read -r name re _ <<<"$b"
		dir=$(pkgof "$tree" "$re")
		echo "$dir" >"$work/$side.$name.dir"
		(cd "$tree" && go test -c -o "$work/$side.$name.test" "./$dir") >&2
	done
	(cd "$tree" && go build -o "$work/$side.hubload" ./cmd/hubload) >&2
done

for ((i = 1; i <= rounds; i++)); do
	for side in base new; do
		tree=${!side}
		for b in "${benches[@]}"; do
			IFS='|' read -r name re flags <<<"$b"
			dir=$(cat "$work/$side.$name.dir")
			# shellcheck disable=SC2086
			(cd "$tree/$dir" && "$work/$side.$name.test" -test.run '^$' -test.bench "^$re\$" $flags) |
				grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$work/$side.txt" || true
		done
		echo "round $i $side hubload:" >&2
		"$work/$side.hubload" -agents 10000 -duration "${HUBLOAD_DURATION:-10s}" -conc 32 2>&1 |
			grep -E '^(heartbeats|latency|CPU)' | sed "s/^/  $side: /" >&2
	done
done
# The packages may have moved between the trees: compare by benchmark name.
sed -i 's/^pkg: .*/pkg: gpuledger/' "$work/base.txt" "$work/new.txt"
benchstat base="$work/base.txt" new="$work/new.txt"
