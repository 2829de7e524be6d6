#!/usr/bin/env bash
# Builds what scripts/agent-gpu-proof.sh needs on the GPU machine:
# dist/gpuledger-agent-linux-amd64 (portable, glibc 2.17+, via the bullseye
# sysroot) and dist/hubstub (pure Go).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/agent-build-portable.sh"
(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o dist/hubstub ./agent/internal/hubstub)
ls -l "$ROOT/dist/gpuledger-agent-linux-amd64" "$ROOT/dist/hubstub"
