#!/usr/bin/env bash
# The scale-out data path against a single-node LFS volume, as ratios (one run, one machine):
# streaming write and read of 6+2/2 groups over four in-process nodes of four drives each,
# degraded read with one node down, CPU per MiB of parity against 3-way mirroring, and the
# re-protect rate after that node's loss, and the rebalance rate when a new fifth node joins
# the three survivors, and the restripe rate when every directory's policy becomes +3d:1n. No network: it measures the placement, ISA-L coding
# and unit stores (nasd-scaleout-bench); bench/ifs_nfs_bench.sh measures the volume over NFS
# (cluster/scaleout/README.md).
#   bench/scaleout_bench.sh BUILD_DIR [MiB]
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,8p' "$0" >&2; exit 2; }
build=$1
mib=${2:-128}
dir=$(mktemp -d /tmp/nasd-scaleout-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
out="$dir/raw.txt"
"$build/cluster/scaleout/nasd-scaleout-bench" "$dir/data" "$mib" | tee "$out"
rate() { awk -v n="$1" '$1 == n { print $6 }' "$out"; }
cpu() { awk -v n="$1" '$1 == n { print $(NF-1) }' "$out"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "ratios ($mib MiB):"
echo "  write  scale-out 6+2 / single-node LFS        $(ratio "$(rate scaleout-write-6+2)" "$(rate lfs-write)")"
echo "  read   scale-out / single-node LFS            $(ratio "$(rate scaleout-read)" "$(rate lfs-read)")"
echo "  read   degraded (1 node down) / healthy        $(ratio "$(rate scaleout-read-degraded)" "$(rate scaleout-read)")"
echo "  cpu/MiB write: 6+2 parity / 3-way mirror      $(ratio "$(cpu scaleout-write-6+2)" "$(cpu mirror-write-3x)")"
echo "  cpu/MiB codec: 6+2 encode / 2 copies           $(ratio "$(cpu encode-6+2)" "$(cpu copy-2x)")"
echo "  re-protect rate / healthy read rate           $(ratio "$(rate reprotect)" "$(rate scaleout-read)")"
echo "  re-protect rate: $(rate reprotect) MiB/s of data brought back to +2d:1n"
echo "  rebalance rate / re-protect rate              $(ratio "$(rate rebalance)" "$(rate reprotect)")"
echo "  restripe (+2d:1n -> +3d:1n) / rebalance rate   $(ratio "$(rate restripe)" "$(rate rebalance)")"
echo "  rebalance rate / healthy read rate            $(ratio "$(rate rebalance)" "$(rate scaleout-read)")"
echo "  rebalance rate: $(rate rebalance) MiB/s of volume data spread onto a new fifth node"
