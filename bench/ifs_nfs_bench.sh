#!/usr/bin/env bash
# The scale-out volume over NFS against a single-node LFS volume, as ratios (one run, one
# machine, in a private network namespace): a 4-node cluster (deploy/start-cluster.sh --nodes 4
# --scale-out), one MiB-sized random file copied with nfs-cp (libnfs) into /r/v0 (an LFS volume
# served by n1) and into /r/ifs (coordinated by n1, striped 6+2/2 over all four nodes' drives),
# both through n1's address; then read back; /r/ifs also read through n3 (a READ through a node
# that does not coordinate is answered there from the units, the coordinator giving the layout),
# streamed through all four nodes at once (four files of MiB/4 written, one through each node,
# then each read back through another node: aggregate MiB/s; nasd-ifs-stream, which retries
# JUKEBOX where nfs-cp gives up), and read with n4 killed
# (degraded: its units rebuilt from parity). The load average is printed with the ratios.
#   bench/ifs_nfs_bench.sh BUILD_DIR [MiB]
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,8p' "$0" >&2; exit 2; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/netns.sh" "$0" "$@"
build=$(cd "$1" && pwd)
mib=${2:-256}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/nasd-bench-ifs.XXXXXX)
export CLUSTER_DIR="$dir/cluster" BUILD_DIR="$build" VOLUME_SIZE=$((mib * 2 + 256))M NVRAM_SIZE=256M
export EXPORT_OPTIONS=rw,insecure,no_root_squash
trap '"$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$root/deploy/start-cluster.sh" --nodes 4 --volumes-per-node 1 --scale-out >"$dir/start.log" 2>&1 ||
  { cat "$dir/start.log"; exit 1; }
url() { echo "nfs://$1/r/$2?nfsport=2049&mountport=20048&version=3"; }
head -c $((mib << 20)) /dev/urandom >"$dir/src"
# timed NAME CMD...: MiB/s of one run of CMD
timed() {
  local name=$1 t0 t1; shift
  t0=$(date +%s%N)
  "$@" >/dev/null
  t1=$(date +%s%N)
  awk -v n="$name" -v m="$mib" -v ns=$((t1 - t0)) 'BEGIN { printf "%-28s %8.1f MiB/s\n", n, m / (ns / 1e9) }' | tee -a "$dir/raw"
}
check() { cmp -s "$dir/src" "$1" || { echo "read back differs: $1" >&2; exit 1; }; }
timed lfs-write nfs-cp "$dir/src" "$(url 127.0.1.1 v0/big)"
timed ifs-write nfs-cp "$dir/src" "$(url 127.0.1.1 ifs/big)"
sleep 7   # the journal's write-behind stripes what it holds (flush interval 5 s)
timed lfs-read nfs-cp "$(url 127.0.1.1 v0/big)" "$dir/back-lfs"; check "$dir/back-lfs"
timed ifs-read nfs-cp "$(url 127.0.1.1 ifs/big)" "$dir/back-ifs"; check "$dir/back-ifs"
timed ifs-read-via-n3 nfs-cp "$(url 127.0.1.3 ifs/big)" "$dir/back-n3"; check "$dir/back-n3"
# All four nodes at once: a verifying streaming writer through each node (nasd-ifs-stream:
# 64 KiB FILE_SYNC writes, riding out JUKEBOX), then each one's files read back and checked
# through the next node; aggregate MiB/s of acknowledged bytes.
stream=$build/tests/e2e/nasd-ifs-stream
seconds=$(( mib / 16 > 8 ? mib / 16 : 8 ))
all_nodes() {  # write|read
  local i pids=() t0 t1
  t0=$(date +%s%N)
  for i in 1 2 3 4; do
    if [[ $1 == write ]]; then
      "$stream" --host 127.0.1.$i --dir s$i --seconds "$seconds" --file-mib 16 --report "$dir/s$i.report" >"$dir/s$i.out" 2>&1 &
    else
      "$stream" --verify --host 127.0.1.$(( i % 4 + 1 )) --dir s$i --report "$dir/s$i.report" >"$dir/v$i.out" 2>&1 &
    fi
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || { cat "$dir"/s*.out "$dir"/v*.out 2>/dev/null; exit 1; }; done
  t1=$(date +%s%N)
  local bytes=0 b
  for i in 1 2 3 4; do b=$(sed -n 's/.*acknowledged \([0-9]*\) bytes.*/\1/p' "$dir/s$i.out" | head -1); bytes=$(( bytes + ${b:-0} )); done
  local ns=$(( t1 - t0 ))
  [[ $1 == write ]] && ns=$(( seconds * 1000000000 ))
  awk -v n="ifs-$1-4-nodes" -v b="$bytes" -v ns="$ns" 'BEGIN { printf "%-28s %8.1f MiB/s\n", n, b / 1048576 / (ns / 1e9) }' | tee -a "$dir/raw"
}
all_nodes write
sleep 7
all_nodes read
for n in 1 2 3 4; do
  "$build/server/admin/nasd-admin" --socket "$CLUSTER_DIR/n$n/data/nasd.sock" cluster 2>/dev/null |
    grep '^scale-out reads' | sed "s/^/  n$n: /" || true
done
kill -9 "$(cat "$CLUSTER_DIR/n4/data/nasd.pid")"
sleep 3   # n1 finds n4 dead (3 missed probes) and reads around it
timed ifs-read-degraded nfs-cp "$(url 127.0.1.1 ifs/big)" "$dir/back-deg"; check "$dir/back-deg"
rate() { awk -v n="$1" '$1 == n { print $2 }' "$dir/raw"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "ratios ($mib MiB, nfs-cp through n1):"
echo "  write  /r/ifs (6+2/2 over 4 nodes) / /r/v0 (single-node LFS)   $(ratio "$(rate ifs-write)" "$(rate lfs-write)")"
echo "  read   /r/ifs / /r/v0                                           $(ratio "$(rate ifs-read)" "$(rate lfs-read)")"
echo "  read   /r/ifs through n3 / through n1 (the coordinator)         $(ratio "$(rate ifs-read-via-n3)" "$(rate ifs-read)")"
echo "  write  /r/ifs through all 4 nodes at once / /r/v0               $(ratio "$(rate ifs-write-4-nodes)" "$(rate lfs-write)")"
echo "  read   /r/ifs through all 4 nodes at once / /r/v0               $(ratio "$(rate ifs-read-4-nodes)" "$(rate lfs-read)")"
echo "  read   /r/ifs with n4 dead (degraded) / healthy                 $(ratio "$(rate ifs-read-degraded)" "$(rate ifs-read)")"
echo "load average at the end: $(cut -d" " -f1-3 /proc/loadavg)"
