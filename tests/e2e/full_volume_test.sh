#!/usr/bin/env bash
# A volume of the README's drill size (256M, 4 MiB segments) filled to NFS3ERR_NOSPC by a
# metadata-heavy load (nasd-full-load: small files, overwrites, truncates, renames, directories,
# removes; 1 MiB files only until the first NOSPC), which then goes on on the full volume. The
# volume must never fail ("read-only until restart", FAILED): running out of its own space is
# not a disk fault (issue 36). Then kill -9 at the fullest point, with the last calls only in
# the NVRAM journal, and
#   restart:  the same node starts again and replays its journal onto the full volume;
#   takeover: the partner of an HA pair fences the node and replays its mirrored journal.
# Everything acknowledged must be there; deletes go through and new files are acknowledged
# again without anything else done; the volume passes fsck.
#   full_volume_test.sh NASD_BINARY NASD_FSCK NASD_FULL_LOAD restart|takeover
# FULL_SECONDS (default 10): how long the load goes on on the full volume.
set -euo pipefail
nasd=$1 fsck=$2 load=$3 mode=$4
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
full_seconds=${FULL_SECONDS:-10}
common=(--nfs-port 2049 --mount-port 20048 --export /r/v0 --dir full)
not_failed() {  # LOG...: no volume failed for want of its own space
  if grep -h "read-only until restart\|write failed" "$@"; then fail "a volume failed"; fi
}

if [[ $mode == takeover ]]; then
  test_name=full-volume-takeover ha_load=$load
  export PAIR_VOLUME_SIZE=256M
  source "$(dirname "$0")/ha_pair_lib.sh"
  start_pair
  state=$dir/state
  # kill -9 of node a by the load itself, right after its last acknowledged call on the full
  # volume: the newest calls are only in the NVRAM journal (and its mirror on b).
  "$load" fill "${common[@]}" --state "$state" --full-seconds "$full_seconds" --kill-pid "$(pid_of a)" ||
    fail "fill"
  wait_for 60 "node b serving a's address" cluster_line b "^  evs a .*: served here"
  v0_on_a_ports() { nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1; }
  wait_for 60 "v0 answering on a's ports" v0_on_a_ports
  grep -h "volume v0.*replayed" "$dir"/b/data/nasd.log || true
  grep -q "volume v0.*replayed [1-9]" "$dir"/b/data/nasd.log ||
    fail "node b replayed nothing of v0: the kill came too late to prove anything"
  "$load" verify "${common[@]}" --state "$state" || fail "verify after the takeover"
  "$load" drain "${common[@]}" --state "$state" --share 0.2 || fail "deletes and writes after the takeover"
  admin_on b volumes | grep -q FAILED && fail "node b says a volume FAILED"
  not_failed "$dir"/a/data/nasd.log "$dir"/b/data/nasd.log
  "$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
  for v in v0 v1; do "$fsck" "$dir/san/$v.lfs" >"$dir/fsck-$v.log" 2>&1 || { cat "$dir/fsck-$v.log"; fail "fsck of $v"; }; done
  echo "PASS: full volume taken over by the partner: nothing acknowledged lost, deletes and writes go on, fsck clean"
  exit 0
fi

[[ $mode == restart ]] || { echo "usage: $0 NASD FSCK LOAD restart|takeover"; exit 2; }
dir=$(mktemp -d /tmp/nasd-full-volume-XXXXXX)
admin=$(dirname "$(dirname "$nasd")")/server/admin/nasd-admin
pid=
cleanup() {
  [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  tail -30 "$dir"/nasd*.log 2>/dev/null || true
  exit 1
}
cat >"$dir/nasd.conf" <<CONF
[node]
name = full
data_dir = $dir
listen = 127.0.0.1
nfs_port = 2049
mount_port = 20048
udp = off
rpcbind = off
admin_socket = $dir/nasd.sock
handle_key = $dir/handle.key
[nvram]
file = nvram.img
size = 64M
flush_interval_ms = 200
[volume v0]
id = 0
backing = v0.lfs
size = 256M
[export /r/v0]
volume = v0
clients = 127.0.0.0/8
access = rw
squash = none
CONF
start() {  # LOG
  "$nasd" --config "$dir/nasd.conf" >"$1" 2>&1 &
  pid=$!
  for _ in $(seq 300); do nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1 && return; sleep 0.1; done
  fail "nasd did not come up"
}
start "$dir/nasd.log"
"$admin" --socket "$dir/nasd.sock" volumes >/dev/null || fail "nasd-admin volumes"
# kill -9 by the load itself, right after its last acknowledged call on the full volume: the
# newest calls are only in the NVRAM journal.
"$load" fill "${common[@]}" --state "$dir/state" --full-seconds "$full_seconds" --kill-pid "$pid" ||
  fail "fill"
wait "$pid" 2>/dev/null || true
pid=
start "$dir/nasd-restart.log"
grep -h "replayed" "$dir/nasd-restart.log" || true
grep -q "replayed [1-9]" "$dir/nasd-restart.log" || fail "nothing was replayed: the kill came too late to prove anything"
"$admin" --socket "$dir/nasd.sock" volumes | grep -E "space:|FAILED|FULL"
"$load" verify "${common[@]}" --state "$dir/state" || fail "verify after the restart"
"$load" drain "${common[@]}" --state "$dir/state" --share 0.2 || fail "deletes and writes after the restart"
"$admin" --socket "$dir/nasd.sock" volumes | grep -q FAILED && fail "admin says the volume FAILED"
not_failed "$dir"/nasd*.log
kill -TERM "$pid"
wait "$pid" || fail "nasd did not stop cleanly"
pid=
"$fsck" "$dir/v0.lfs" >"$dir/fsck.log" 2>&1 || { cat "$dir/fsck.log"; fail "fsck"; }
echo "PASS: full volume, kill -9 at the fullest point, replay onto it: nothing acknowledged lost, deletes and writes go on, fsck clean"
