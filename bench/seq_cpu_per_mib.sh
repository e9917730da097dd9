#!/usr/bin/env bash
# Server CPU per MiB of sequential 1 MiB transfers (issue 12's data-path figures in bench/RESULTS.md):
#   bench/seq_cpu_per_mib.sh BUILD_DIR|NASD_BINARY nasd|ganesha [MiB=256] [perf]
# Starts the server (bench/servers/*.sh) in a private namespace, writes 640 MiB first (more than
# nasd's 512 MiB cache, so the measured write evicts as a long-running server does), then one
# MiB-sized file with nfs-cp (libnfs) and reads it back; prints MB/s and the server's own
# utime+stime from /proc/PID/stat over each transfer. With `perf`, records the measured write
# into /tmp/dp/SERVER.perf.data. bench/perf_vs_ganesha.sh (perfbench) is the full comparison.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,8p' "$0" >&2; exit 2; }
build=$1; server=$2; mib=${3:-256}; perf=${4:-}
bench=$(cd "$(dirname "$0")" && pwd)
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$bench/netns.sh" "$0" "$@"; fi
src=/dev/shm/dp-seq-$$; dst=/dev/shm/dp-seq-back-$$
dd if=/dev/urandom of=$src bs=1M count=$mib status=none
mkdir -p /tmp/dp; log=/tmp/dp/$server-launch.log
if [[ $server == nasd ]]; then "$bench/servers/nasd.sh" "$build" --nfs-port 2049 --mount-port 20048 >$log 2>&1 &
else "$bench/servers/ganesha.sh" --nfs-port 2049 --mount-port 20048 >$log 2>&1 & fi
lpid=$!
for _ in $(seq 150); do grep -q TARGET $log 2>/dev/null && break; sleep 0.2; done
url=$(grep TARGET $log | awk '{print $2}')
if [[ $server == nasd ]]; then spid=$(pgrep -x nasd | head -1); else spid=$(pgrep -x ganesha.nfsd | head -1); fi
cpu() { awk '{print $14+$15}' /proc/$spid/stat; }
tck=$(getconf CLK_TCK)
base=${url%%\?*}; q=${url#*\?}
measure() { # name cmd...
  local name=$1; shift
  local c0=$(cpu) t0=$(date +%s.%N)
  "$@"
  local c1=$(cpu) t1=$(date +%s.%N)
  awk -v n=$name -v m=$mib -v c=$((c1-c0)) -v tk=$tck -v a=$t0 -v b=$t1 -v s=$server 'BEGIN{w=b-a; printf "%s %s: %.0f MB/s, server CPU %.2f s = %.2f ms per MiB (%.0f%% of wall)\n", s, n, m*1.048576/w, c/tk, 1000*c/tk/m, 100*c/tk/w}'
}
# First pass warms what a long-running server has warm (NVRAM pages, cache buffers); not measured.
# 640 MiB: more than the volume's 512 MiB cache, so the measured write evicts (steady state).
dd if=/dev/zero of=$src.warm bs=1M count=640 status=none
nfs-cp $src.warm "$base/warm.bin?$q" >/dev/null
rm -f $src.warm
if [[ -n $perf ]]; then perf record -g -o /tmp/dp/$server.perf.data -p $spid 2>/dev/null & ppid=$!; sleep 0.5; fi
measure write nfs-cp $src "$base/seq.bin?$q"
if [[ -n $perf ]]; then kill -INT $ppid; wait $ppid || true; fi
sync
measure read nfs-cp "$base/seq.bin?$q" $dst
cmp $src $dst && echo "read back identical"
rm -f $src $dst
kill $lpid; wait $lpid 2>/dev/null || true
