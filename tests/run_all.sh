#!/usr/bin/env bash
# One command for the whole suite on a fresh Debian machine: installs the packages, builds,
# runs every unit and end-to-end test with ctest, then builds the libFuzzer targets with clang
# and runs each for a short while (FUZZ_SECONDS, 0 to skip).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"

"$ROOT/deploy/install-deps.sh"
"$ROOT/deploy/build.sh"

cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" --timeout 900 ${CTEST_ARGS:-}

if [ "$FUZZ_SECONDS" != "0" ]; then
  FUZZ_DIR="$ROOT/build-fuzz"
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$FUZZ_DIR" -G Ninja -DNASD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  # Every libFuzzer target is named <room>_..._fuzzer; its seeds are in tests/fuzz/<room>/seeds.
  mapfile -t targets < <(ninja -C "$FUZZ_DIR" -t targets all | sed -n 's/^\([a-z0-9_]*_fuzzer\): phony$/\1/p' | grep -v '^cmake_' | sort -u)
  [ ${#targets[@]} -gt 0 ] && ninja -C "$FUZZ_DIR" -j"$(nproc)" "${targets[@]}"
  for t in "${targets[@]}"; do
    bin="$(find "$FUZZ_DIR/tests" -type f -name "$t" -perm -u+x | head -1)"
    seeds="$ROOT/tests/fuzz/${t%%_*}/seeds"
    corpus="$(mktemp -d)"
    [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
    echo "fuzz: $t for ${FUZZ_SECONDS}s"
    "$bin" -max_total_time="$FUZZ_SECONDS" -max_len=65536 "$corpus" 2>&1 | tail -3
    rm -rf "$corpus"
  done
  echo "fuzz: ${#targets[@]} targets ran without a finding"
fi
