#!/usr/bin/env bash
# Builds bench/nvram_first_lap_probe.cc into a temporary directory and runs it three times:
# what the first lap through a freshly mapped NVRAM region costs, by how the region is
# prepared at open (MAP_POPULATE, MADV_POPULATE_WRITE, that and one store per page).
# Usage: bench/nvram_first_lap_probe.sh [MiB, default 256]   (the region file goes under /tmp,
# on the file system a bench node's NVRAM lives on)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d /tmp/nasd-firstlap.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++20 -o "$tmp/probe" "$here/nvram_first_lap_probe.cc"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in 1 2 3; do "$tmp/probe" "$tmp" "${1:-256}"; done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
