#!/usr/bin/env bash
# Builds bench/send_zc_probe.cc into a temporary directory and runs it: does io_uring's
# zero-copy send pay for 1 MiB scatter-gather replies on this machine's loopback?
# Usage: bench/send_zc_probe.sh [MiB per mode, default 2048]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d /tmp/nasd-sendzc.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++20 -pthread -o "$tmp/probe" "$here/send_zc_probe.cc" -luring
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/probe" "${1:-2048}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
