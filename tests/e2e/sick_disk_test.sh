#!/usr/bin/env bash
# A sick disk under one volume (issue 35): volume v0's backing file lives on nasd-sickfs, a FUSE
# pass-through whose faults the test switches on and off while the node serves; v1 and the NVRAM
# region live on a healthy disk. Under nasd-ha-load clients (acknowledged operations, read back):
#   0. baseline: v1's rate with nothing wrong (beside a load on v0, as in 1);
#   1. slow: every write and fsync of v0's disk waits 200 ms -- v0 keeps serving, everything
#      acknowledged reads back, and v1 goes on without a stall (its pace is printed);
#   2. full: v0's disk has no more space -- v0 answers NOSPC to calls that need space, says HOST
#      FULL, reads go on; once space returns it writes again by itself; v1 keeps its pace;
#   3. EIO on every write of v0's disk -- v0 turns read-only (FAILED), reads go on; v1 keeps
#      its pace;
#   4. kill -9 with the faults still on, restart with the disk healthy: everything the clients
#      of 2 and 3 had acknowledged on v0 is there, and both volumes pass nasd-fsck.
# Runs in private network and mount namespaces (root: the FUSE mount).
#   sick_disk_test.sh NASD NASD_ADMIN NASD_FSCK NASD_HA_LOAD NASD_SICKFS   (exit 77 = skipped)
set -euo pipefail
nasd=$1 admin=$2 fsck=$3 ha_load=$4 sickfs=$5
[[ $(id -u) == 0 ]] || { echo "skipped: needs root (a FUSE mount in a private mount namespace)"; exit 77; }
[[ -c /dev/fuse && -x $sickfs ]] || { echo "skipped: no /dev/fuse or no nasd-sickfs"; exit 77; }
command -v nfs-ls >/dev/null || { echo "skipped: nfs-ls (libnfs-utils) missing"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
[[ ${NASD_IN_MNTNS:-} == 1 ]] || exec env NASD_IN_MNTNS=1 unshare -m --propagation private "$0" "$@"

dir=$(mktemp -d /tmp/nasd-sickdisk-XXXXXX)
pid= sick_pid=
loads=()
declare -A load_pid
cleanup() {
  for p in "${loads[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
  umount -l "$dir/sick" 2>/dev/null || true
  [[ -n $sick_pid ]] && kill "$sick_pid" 2>/dev/null || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  "$admin" --socket "$dir/nasd.sock" volumes 2>&1 | head -20 || true
  "$admin" --socket "$dir/nasd.sock" nvram 2>&1 | head -20 || true
  tail -30 "$dir/nasd.log" 2>/dev/null || true
  for f in "$dir"/load-*.out; do [[ -f $f ]] && { echo "--- $(basename "$f")"; cat "$f"; }; done
  exit 1
}
now_ms() { date +%s%3N; }
sick() { "$sickfs" --control "$dir/sick.sock" "$@" >>"$dir/sick-control.log" || fail "nasd-sickfs $*: $(tail -1 "$dir/sick-control.log")"; }
volumes() { "$admin" --socket "$dir/nasd.sock" volumes 2>/dev/null; }
url() { echo "nfs://127.0.0.1/r/$1?nfsport=2049&mountport=20048&version=3"; }

mkdir -p "$dir/data" "$dir/sick" "$dir/sick-backing"
"$sickfs" --backing "$dir/sick-backing" --mount "$dir/sick" --control "$dir/sick.sock" >"$dir/sickfs.log" 2>&1 &
sick_pid=$!
for _ in $(seq 100); do [[ -S $dir/sick.sock ]] && mountpoint -q "$dir/sick" && break; sleep 0.1; done
mountpoint -q "$dir/sick" || { cat "$dir/sickfs.log"; fail "nasd-sickfs did not mount"; }

cat >"$dir/nasd.conf" <<CONF
[node]
name = sick
data_dir = $dir/data
listen = 127.0.0.1
nfs_port = 2049
mount_port = 20048
udp = off
workers = 1
threads = 8
rpcbind = off
admin_socket = $dir/nasd.sock
[nvram]
file = nvram.img
size = 32M
flush_interval_ms = 200
space_wait_ms = 5000
[volume v0]
id = 0
backing = $dir/sick/v0.lfs
size = 256M
segment_size = 1M
cache = 32M
allocation = thin
[volume v1]
id = 1
backing = v1.lfs
size = 256M
segment_size = 1M
cache = 32M
allocation = thin
[export /r/v0]
volume = v0
clients = 127.0.0.0/8
options = rw,insecure,no_root_squash
[export /r/v1]
volume = v1
clients = 127.0.0.0/8
options = rw,insecure,no_root_squash
CONF
start_nasd() {
  "$nasd" --config "$dir/nasd.conf" >>"$dir/nasd.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do nfs-ls "$(url v1)" >/dev/null 2>&1 && nfs-ls "$(url v0)" >/dev/null 2>&1 && break; sleep 0.1; done
  nfs-ls "$(url v0)" >/dev/null || fail "server did not come up"
}
# load NAME VOLUME SECONDS [ARGS...]: one nasd-ha-load in the background.
load() {
  "$ha_load" --export "/r/$2" --dir "$1" --seconds "$3" --call-timeout-ms 5000 --retry-budget-s 30 \
    --report "$dir/load-$1.report" "${@:4}" >"$dir/load-$1.out" 2>&1 &
  loads+=($!)
  load_pid[$1]=$!
}
# finish NAME: waits for it; its exit status.
finish() { wait "${load_pid[$1]}"; }
value() { sed -n "s/^$2=//p" "$dir/load-$1.report"; }
# v1_kept_pace NAME SECONDS: the v1 load NAME passed and never went a second without an
# acknowledgement (held back by v0, it would wait for v0's disk: seconds). Its rate against the
# baseline is printed, and must not collapse (a tenth at least); it is no finer check: on the
# shared 2-core machine one phase measured from 0.30 to 1.45 of the baseline over eight runs.
v1_kept_pace() {
  finish "$1" || fail "the v1 load during $1 did not pass"
  local acked stall
  acked=$(value "$1" acknowledged) stall=$(value "$1" longest_stall_ms)
  echo "v1 during $1: $acked operations in $2 s (baseline $base in 4 s), longest stall $stall ms"
  (( acked * 4 * 10 >= base * $2 )) || fail "v1 collapsed during $1: $acked in $2 s against $base in 4 s"
  (( stall < 1000 )) || fail "v1 stalled for $stall ms during $1"
}

# sick_under_load PHASE FAULTS STATE ENDED: a v0 load (read back after the restart, step 4) runs
# into FAULTS on v0's disk while a v1 load starts; `nasd-admin volumes` must show STATE for v0
# and the v0 load end on an answer matching ENDED.
sick_under_load() {
  load "v0-$1" v0 60 --verify-after "$dir/restarted"
  sleep 2
  sick faults $2 path=v0.lfs
  load "v1-$1" v1 6
  for _ in $(seq 150); do volumes | grep -q "^volume 0 .*$3" && break; sleep 0.1; done
  volumes | grep -q "^volume 0 .*$3" || fail "admin volumes does not say v0 is $3"
  for _ in $(seq 100); do grep -q "load ended" "$dir/load-v0-$1.out" && break; sleep 0.1; done
  grep -Eq "load ended \(.*$4\)" "$dir/load-v0-$1.out" ||
    fail "the v0 load did not end on $4: $(cat "$dir/load-v0-$1.out")"
}

start_nasd
# The baseline has the same shape as the slow phase (a load on each volume at once): the node's
# one event loop is shared by both.
load base v1 4
load base-v0 v0 4
finish base || fail "the baseline load on v1"
finish base-v0 || fail "the baseline load on v0"
base=$(value base acknowledged)
echo "baseline: v1 takes $base operations in 4 s beside a load on v0"

# 1. A slow disk.
sick faults slow_ms=200 path=v0.lfs
load v0-slow v0 6
load v1-slow v1 6
finish v0-slow || fail "the v0 load on the slow disk did not pass (acknowledged, read back)"
echo "v0 on a slow disk: $(value v0-slow acknowledged) operations acknowledged and read back"
v1_kept_pace v1-slow 6
"$sickfs" --control "$dir/sick.sock" status | grep -Eq "slowed=[1-9]" || fail "no write of v0 was slowed"
sick clear

# 2. The disk fills up.
sick_under_load full "full_after=0" "HOST FULL" "NFS3ERR_NOSPC"
nfs-ls "$(url v0/v0-full)" >/dev/null || fail "listing v0 while its disk is full"
v1_kept_pace v1-full 6
sick clear
written=
for try in $(seq 40); do
  head -c 65536 /dev/urandom >"$dir/after-full"
  if nfs-cp "$dir/after-full" "$(url "v0/after-full-$try")" >/dev/null 2>&1; then written=$try; break; fi
  sleep 0.5
done
[[ -n $written ]] || fail "v0 takes no write after its disk has space again"
for _ in $(seq 50); do volumes | grep -q "HOST FULL" || break; sleep 0.1; done
volumes | grep -q "HOST FULL" && fail "v0 still HOST FULL after space returned"
echo "v0 on a full disk: NOSPC, HOST FULL, reads served; writes again once space returned"

# 3. EIO on every write.
# The call that met the failing write may get EIO, every change after it ROFS.
sick_under_load eio "eio=1" "FAILED" "NFS3ERR_(ROFS|IO)"
grep -q "read-only" "$dir/nasd.log" || fail "the log does not report the read-only volume"
head -c 4096 /dev/urandom >"$dir/refused"
if nfs-cp "$dir/refused" "$(url v0/refused)" >/dev/null 2>&1; then fail "a write to the read-only v0 succeeded"; fi
nfs-ls "$(url v0/v0-eio)" >/dev/null || fail "listing the read-only v0"
v1_kept_pace v1-eio 6
echo "v0 on a disk failing its writes: read-only, reads served"

# 4. kill -9 with the faults on; restart on a healthy disk; everything acknowledged is there.
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
sick clear
start_nasd
touch "$dir/restarted"
for l in v0-full v0-eio; do
  finish "$l" || true  # ended on its error, by design: the read-back decides
  cat "$dir/load-$l.out"
  [[ $(value "$l" verify) == OK ]] || fail "$l: acknowledged operations lost across the kill -9 and restart"
  (( $(value "$l" acknowledged) > 0 )) || fail "$l acknowledged nothing"
done
kill -TERM "$pid"
wait "$pid" || fail "nasd did not stop cleanly"
pid=
for v in sick-backing/v0 data/v1; do
  "$fsck" "$dir/$v.lfs" >"$dir/fsck.log" 2>&1 || { cat "$dir/fsck.log"; fail "nasd-fsck of $v"; }
done
echo "PASS: slow, full and failing disk under v0 degraded it as documented, v1 kept its pace," \
  "nothing acknowledged lost across kill -9, both volumes pass fsck"
