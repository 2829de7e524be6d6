#!/usr/bin/env bash
# Fails unless BINARY starts on glibc MAX (default 2.17, CentOS 7) and later:
# no GLIBC_x.y symbol version newer than MAX in `objdump -T`, and no library
# but glibc's own (libc, libpthread, libdl, ...) needed at load time (NVML is
# loaded with dlopen).
#
#   scripts/agent-check-glibc.sh dist/gpuledger-agent-linux-amd64 [2.17]
set -euo pipefail
BIN=${1:?usage: agent-check-glibc.sh BINARY [MAX_GLIBC]}
MAX=${2:-2.17}
command -v objdump >/dev/null || { echo "agent-check-glibc: objdump not found (apt-get install binutils)" >&2; exit 1; }
[ -f "$BIN" ] || { echo "agent-check-glibc: $BIN does not exist" >&2; exit 1; }

versions=$(objdump -T "$BIN" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V)
newest=$(printf '%s\n' "$versions" | tail -1)
echo "agent-check-glibc: $BIN uses GLIBC versions: $(echo $versions)"
too_new=$(printf '%s\n' "$versions" | awk -v max="$MAX" '
	function cmp(a, b,   x, y, i, n) {
		n = split(a, x, "."); split(b, y, ".")
		for (i = 1; i <= 3; i++) { if ((x[i]+0) != (y[i]+0)) return (x[i]+0) - (y[i]+0) }
		return 0
	}
	NF && cmp($0, max) > 0 { print }')
if [ -n "$too_new" ]; then
	echo "agent-check-glibc: FAIL: needs GLIBC $(echo $too_new), newer than $MAX" >&2
	objdump -T "$BIN" | grep -E "GLIBC_($(echo $too_new | tr ' ' '|' | sed 's/\./\\./g'))[^0-9.]" >&2 || true
	exit 1
fi
needed=$(objdump -p "$BIN" | awk '/NEEDED/ {print $2}')
echo "agent-check-glibc: NEEDED: $(echo $needed)"
for lib in $needed; do
	case $lib in
	libc.so.6 | libpthread.so.0 | libdl.so.2 | libresolv.so.2 | librt.so.1 | libm.so.6 | ld-linux-x86-64.so.2 | ld-linux-aarch64.so.1) ;;
	*) echo "agent-check-glibc: FAIL: links $lib at load time" >&2; exit 1 ;;
	esac
done
echo "agent-check-glibc: OK: newest GLIBC_$newest <= $MAX"
