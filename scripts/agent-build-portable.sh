#!/usr/bin/env bash
# Builds the agent so that it starts on glibc 2.17 and later (CentOS 7, Ubuntu
# 18.04-24.04, the container images of AutoDL, RunPod and Vast.ai).
#
# A cgo binary links against the glibc it was built with and needs its newest
# symbol versions; built on Debian 12 it needs glibc 2.34. Built inside a
# Debian bullseye sysroot it only needs old ones. NVML is loaded with dlopen at
# run time, so libnvidia-ml is not linked.
#
#   scripts/agent-build-portable.sh            # -> dist/gpuledger-agent-linux-amd64
#   OUT_BIN=/tmp/agent scripts/agent-build-portable.sh
#
# Needs root (debootstrap, chroot, bind mounts). The sysroot is created once
# under .sysroot/bullseye (gitignored) and reused; DEBIAN_MIRROR overrides
# debootstrap's default mirror. Go itself, the module cache and the build
# cache are bound into the sysroot read-only/read-write, so the build needs no
# network once the sysroot exists. The result is checked with
# scripts/agent-check-glibc.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SYSROOT=${SYSROOT:-$ROOT/.sysroot/bullseye}
OUT_BIN=${OUT_BIN:-$ROOT/dist/gpuledger-agent-linux-amd64}
PKG=${PKG:-./cmd/gpuledger-agent} # another main package built the same way (agent/internal/nvmlcost)
GO=${GO:-go}
GOROOT_HOST=$("$GO" env GOROOT)
GOMODCACHE_HOST=$("$GO" env GOMODCACHE)
CACHE=$ROOT/.sysroot/gocache
VERSION=${VERSION:-$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)}

if [ "$(id -u)" != 0 ]; then
	echo "agent-build-portable: needs root (debootstrap, chroot, mount)" >&2
	exit 1
fi

# The symbol check at the end reads the binary with objdump (binutils).
if ! command -v objdump >/dev/null; then
	apt-get update -qq && apt-get install -y -qq binutils >/dev/null
fi

if [ ! -x "$SYSROOT/usr/bin/gcc" ]; then
	if ! command -v debootstrap >/dev/null; then
		apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
	fi
	echo "agent-build-portable: creating bullseye sysroot in $SYSROOT (about a minute)" >&2
	rm -rf "$SYSROOT.tmp"
	mkdir -p "$(dirname "$SYSROOT")"
	# The log sits beside the sysroot, wherever SYSROOT points: the folder
	# exists by now, which $ROOT/.sysroot need not.
	log="$SYSROOT.debootstrap.log"
	# shellcheck disable=SC2086
	debootstrap --variant=minbase --include=gcc,libc6-dev bullseye "$SYSROOT.tmp" ${DEBIAN_MIRROR:-} >"$log" 2>&1 ||
		{ tail -20 "$log" >&2; exit 1; }
	mv "$SYSROOT.tmp" "$SYSROOT"
fi

# Make sure every module the agent needs is in the host's module cache, so
# the build inside the sysroot runs with GOPROXY=off.
(cd "$ROOT" && "$GO" mod download github.com/NVIDIA/go-nvml)

mkdir -p "$CACHE" "$(dirname "$OUT_BIN")" "$SYSROOT/usr/local/go" "$SYSROOT/gomod" "$SYSROOT/gocache" "$SYSROOT/src" "$SYSROOT/out"

# A private mount namespace: the bind mounts disappear when the build ends,
# whatever happens.
unshare --mount --propagation private bash -euo pipefail -c '
	S=$1
	mount --bind "$2" "$S/usr/local/go"; mount -o remount,bind,ro "$S/usr/local/go"
	mount --bind "$3" "$S/gomod"
	mount --bind "$4" "$S/gocache"
	mount --bind "$5" "$S/src"
	mount --bind "$6" "$S/out"
	mount -t proc proc "$S/proc"
	chroot "$S" /usr/bin/env -i PATH=/usr/local/go/bin:/usr/bin:/bin HOME=/tmp \
		GOROOT=/usr/local/go GOMODCACHE=/gomod GOCACHE=/gocache GOPROXY=off GOTOOLCHAIN=local \
		GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=1 CGO_CFLAGS="-O2 -Wno-deprecated-declarations" \
		sh -c "cd /src && go build -trimpath -tags netgo,osusergo -ldflags \"-s -w -X github.com/gpuledger/gpuledger/agent.Version=$7\" -o /out/$8 $9"
' _ "$SYSROOT" "$GOROOT_HOST" "$GOMODCACHE_HOST" "$CACHE" "$ROOT" "$(dirname "$OUT_BIN")" "$VERSION" "$(basename "$OUT_BIN")" "$PKG"

echo "agent-build-portable: built $OUT_BIN ($VERSION)" >&2
"$ROOT/scripts/agent-check-glibc.sh" "$OUT_BIN"
