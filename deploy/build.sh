#!/usr/bin/env bash
# Configures and builds nasd into ./build (override with BUILD_DIR). Extra args go to cmake.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
ninja -C "$BUILD_DIR" -j"${JOBS:-$(nproc)}"
