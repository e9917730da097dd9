#!/usr/bin/env bash
# Configures and builds nasd into ./build (override with BUILD_DIR). Extra args go to cmake.
# TARGETS (space-separated ninja targets) builds only those, e.g. the programs a node runs
# without the tests (quickstart.sh); by default everything, tests included.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
# ccache, when installed, makes rebuilds of unchanged files (other checkouts, CI re-runs) free.
LAUNCHER=()
command -v ccache >/dev/null 2>&1 && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${LAUNCHER[@]}" "$@" >/dev/null
read -r -a targets <<<"${TARGETS:-}"
ninja -C "$BUILD_DIR" -j"${JOBS:-$(nproc)}" "${targets[@]}"
