#!/usr/bin/env bash
# The scale-out volume /r/ifs over NFS, as ratios from one run on one machine (in a private
# network namespace): a 4-node cluster (deploy/start-cluster.sh --nodes 4 --scale-out, n1
# coordinating /r/ifs, data striped 6+2/2 over all four nodes' drives) against /r/v0, a
# single-node LFS volume served by n1 on the same machine.
#  1. streaming write and read: one MiB-sized random file copied with nfs-cp (libnfs) into
#     /r/v0 and /r/ifs through n1, then read back; /r/ifs also read through n3 (forwarded);
#     and streamed through all four nodes at once (a verifying writer through each node, read
#     back through the next: aggregate MiB/s; nasd-ifs-stream);
#  2. server CPU per MiB written, parity against mirroring: the same amount written by
#     nasd-ifs-stream (64 KiB FILE_SYNC writes) as 4 MiB files (6+2 parity) and as 128 KiB
#     files (mirrored 3 ways), each until the coordinator has striped all of it; CPU is
#     utime+stime of all four nasd processes from /proc/PID/stat, less their idle rate;
#  3. (--vda METRICS) the SFS2014-style VDA workload (nasd-loadgen --workload vda, one target
#     per process rotating over the 4 nodes as the seed report's dataflow did) and its table;
#  4. one node down: n4 is killed (kill -9); /r/ifs read (degraded: n4's units rebuilt from
#     parity) and written through n1 while the re-protect job runs;
#  5. re-protect rate: from the kill until every group is back at full protection on the
#     three survivors, MiB of file data in the volume per second.
#   bench/ifs_nfs_bench.sh BUILD_DIR [MiB=256] [--vda METRICS [--vda-step-seconds S]]
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,19p' "$0" >&2; exit 2; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/netns.sh" "$0" "$@"
build=$(cd "$1" && pwd); shift
mib=256
if [[ $# -gt 0 && $1 != --* ]]; then mib=$1; shift; fi
vda="" vda_step=30
while [[ $# -gt 0 ]]; do
  case $1 in
    --vda) vda=${2:?--vda needs business metrics, e.g. 1,2,4,8}; shift ;;
    --vda-step-seconds) vda_step=${2:?}; shift ;;
    *) sed -n '2,19p' "$0" >&2; exit 2 ;;
  esac
  shift
done
root=$(cd "$(dirname "$0")/.." && pwd)
stream=$build/tests/e2e/nasd-ifs-stream loadgen=$build/bench/nasd-loadgen admin=$build/server/admin/nasd-admin
[[ -x $stream && -x $admin ]] || { echo "no nasd-ifs-stream or nasd-admin in $build" >&2; exit 2; }
dir=$(mktemp -d /tmp/nasd-bench-ifs.XXXXXX)
export CLUSTER_DIR="$dir/cluster" BUILD_DIR="$build" VOLUME_SIZE=$((mib * 2 + 256))M NVRAM_SIZE=256M
export EXPORT_OPTIONS=rw,insecure,no_root_squash
trap '"$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$root/deploy/start-cluster.sh" --nodes 4 --volumes-per-node 1 --scale-out >"$dir/start.log" 2>&1 ||
  { cat "$dir/start.log"; exit 1; }
url() { echo "nfs://$1/r/$2?nfsport=2049&mountport=20048&version=3"; }
now() { date +%s.%N; }
pids() { local n; for n in "$@"; do cat "$CLUSTER_DIR/$n/data/nasd.pid"; done; }
tck=$(getconf CLK_TCK)
# cpu PID...: their utime + stime, in seconds, all threads.
cpu() { local p s=0; for p in "$@"; do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; awk -v s=$s -v t=$tck 'BEGIN { printf "%.3f", s / t }'; }
ifs_status() { "$admin" --socket "$CLUSTER_DIR/n1/data/nasd.sock" volumes 2>/dev/null | sed -n '/scale-out/,$p'; }
# wait_until SECONDS WHAT REGEX: polls the coordinator's status of /r/ifs.
wait_until() {
  local limit=$1 what=$2 re=$3 i
  for i in $(seq $((limit * 10))); do ifs_status | grep -qE "$re" && return 0; sleep 0.1; done
  echo "$what: not within $limit s" >&2; ifs_status >&2; exit 1
}
head -c $((mib << 20)) /dev/urandom >"$dir/src"
# timed NAME CMD...: MiB/s of one run of CMD
timed() {
  local name=$1 t0 t1; shift
  t0=$(now); "$@" >/dev/null; t1=$(now)
  awk -v n="$name" -v m="$mib" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-28s %8.1f MiB/s\n", n, m / (b - a) }' | tee -a "$dir/raw"
}
check() { cmp -s "$dir/src" "$1" || { echo "read back differs: $1" >&2; exit 1; }; }
rate() { awk -v n="$1" '$1 == n { print $2 }' "$dir/raw"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# The nodes' CPU when nothing is asked of them (heartbeats, probes, write-behind timers).
all=$(pids n1 n2 n3 n4)
c0=$(cpu $all); t0=$(now); sleep 5; c1=$(cpu $all); t1=$(now)
idle=$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.4f", (b - a) / (e - s) }')
echo "idle CPU of the 4 nodes: $idle s/s"

# 1. Streaming.
timed lfs-write nfs-cp "$dir/src" "$(url 127.0.1.1 v0/big)"
timed ifs-write nfs-cp "$dir/src" "$(url 127.0.1.1 ifs/big)"
wait_until 60 "the write striped" "not yet striped 0 bytes"
timed lfs-read nfs-cp "$(url 127.0.1.1 v0/big)" "$dir/back-lfs"; check "$dir/back-lfs"
timed ifs-read nfs-cp "$(url 127.0.1.1 ifs/big)" "$dir/back-ifs"; check "$dir/back-ifs"
timed ifs-read-via-n3 nfs-cp "$(url 127.0.1.3 ifs/big)" "$dir/back-n3"; check "$dir/back-n3"
# All four nodes at once: a verifying streaming writer through each node (nasd-ifs-stream:
# 64 KiB FILE_SYNC writes, riding out JUKEBOX), then each one's files read back and checked
# through the next node; aggregate MiB/s of acknowledged bytes.
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
rm -f "$dir"/back-*

# 2. CPU per MiB written: parity (4 MiB files) against 3-way mirroring (128 KiB files).
cpu_mib=$((mib / 4 > 16 ? mib / 4 : 16))
# cpu_per_mib NAME STREAM-ARGS...: ms of the 4 nodes' CPU per MiB, striping included.
cpu_per_mib() {
  local name=$1 c0 c1 t0 t1; shift
  c0=$(cpu $all); t0=$(now)
  "$stream" --host 127.0.1.1 --dir "$name" --seconds 600 --max-mib "$cpu_mib" "$@" \
    --report "$dir/$name.report" >"$dir/$name.out" || { cat "$dir/$name.out"; exit 1; }
  wait_until 120 "$name striped" "not yet striped 0 bytes"
  c1=$(cpu $all); t1=$(now)
  awk -v n="$name" -v m="$cpu_mib" -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v i="$idle" 'BEGIN {
    w = e - s; c = (b - a) - i * w; printf "%-28s %8.2f ms CPU per MiB (%.1f s CPU over %.1f s, %d MiB)\n", n, 1000 * c / m, c, w, m }' |
    tee -a "$dir/cpu"
}
cpu_per_mib cpu-parity --file-mib 4
cpu_per_mib cpu-mirror --file-kib 128
cpu_of() { awk -v n="$1" '$1 == n { print $2 }' "$dir/cpu"; }
ifs_status | sed -n '2p'

# 3. The VDA workload, one process per node and more in rotation (SFS2014 dataflow).
if [[ -n $vda ]]; then
  [[ -x $loadgen ]] || { echo "no nasd-loadgen in $build" >&2; exit 2; }
  targets=$(for i in 1 2 3 4; do printf '%s,' "nfs://127.0.1.$i/r/ifs?nfsport=2049&mountport=20048"; done)
  "$loadgen" --targets "${targets%,}" --workload vda --business-metric "$vda" --processes 4 \
    --step-seconds "$vda_step" --warmup-seconds 5 --fileset-scale 0.0002 --workdir vda \
    --server-name "nasd /r/ifs, 4 nodes, +2d:1n" --report "$dir/vda.txt" --quiet >"$dir/vda.out" 2>&1 ||
    { cat "$dir/vda.out"; exit 1; }
  sed -n '1,/^Product and Test Information/p' "$dir/vda.txt" | sed '$d'
fi

# 4. One node down: n4 killed; degraded read and a write while re-protect runs.
# What re-protect has to bring back: every file's data in /r/ifs (nfs-ls -R sizes).
protected_mib=$(nfs-ls -R "$(url 127.0.1.1 ifs)" | awk '/^-/ { s += $5 } END { printf "%.0f", s / 1048576 }')
kill -9 "$(pids n4)"
killed=$(now)
wait_until 10 "n1 seeing n4 dead" "nodes 3/4 alive"
timed ifs-read-degraded nfs-cp "$(url 127.0.1.1 ifs/big)" "$dir/back-deg"; check "$dir/back-deg"
timed ifs-write-degraded nfs-cp "$dir/src" "$(url 127.0.1.1 ifs/big-degraded)"
io_done=$(now)

# 5. Re-protect back to full protection on the survivors.
wait_until 900 "re-protect" "below full protection 0,"
done_at=$(now)
ifs_status
reprotect=$(awk -v m="$protected_mib" -v a="$killed" -v b="$done_at" 'BEGIN { printf "%.1f", m / (b - a) }')
echo "re-protect: $protected_mib MiB of file data back at full protection in $(awk -v a="$killed" -v b="$done_at" 'BEGIN { printf "%.1f", b - a }') s after the kill ($reprotect MiB/s; the degraded read and write ran during the first $(awk -v a="$killed" -v b="$io_done" 'BEGIN { printf "%.1f", b - a }') s)"

echo
echo "ratios ($mib MiB, nfs-cp through n1; CPU: $cpu_mib MiB by nasd-ifs-stream):"
echo "  write  /r/ifs (6+2/2 over 4 nodes) / /r/v0 (single-node LFS)   $(ratio "$(rate ifs-write)" "$(rate lfs-write)")"
echo "  read   /r/ifs / /r/v0                                           $(ratio "$(rate ifs-read)" "$(rate lfs-read)")"
echo "  read   /r/ifs through n3 / through n1 (the coordinator)         $(ratio "$(rate ifs-read-via-n3)" "$(rate ifs-read)")"
echo "  write  /r/ifs through all 4 nodes at once / /r/v0               $(ratio "$(rate ifs-write-4-nodes)" "$(rate lfs-write)")"
echo "  read   /r/ifs through all 4 nodes at once / /r/v0               $(ratio "$(rate ifs-read-4-nodes)" "$(rate lfs-read)")"
echo "  write  /r/ifs with n4 dead / /r/v0                              $(ratio "$(rate ifs-write-degraded)" "$(rate lfs-write)")"
echo "  read   /r/ifs with n4 dead (degraded) / /r/v0                   $(ratio "$(rate ifs-read-degraded)" "$(rate lfs-read)")"
echo "  read   /r/ifs with n4 dead (degraded) / healthy                 $(ratio "$(rate ifs-read-degraded)" "$(rate ifs-read)")"
echo "  server CPU per MiB written, 6+2 parity / 3-way mirroring       $(ratio "$(cpu_of cpu-parity)" "$(cpu_of cpu-mirror)")"
echo "  re-protect rate / healthy read of /r/ifs                        $(ratio "$reprotect" "$(rate ifs-read)")"
echo "load average at the end: $(cut -d" " -f1-3 /proc/loadavg)"
