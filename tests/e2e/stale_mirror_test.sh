#!/usr/bin/env bash
# The drill's lost writes, reproduced with real processes: node a of an HA pair acknowledges
# stable writes while its NVRAM mirror at b is unreachable (b SIGSTOPped; mirror_policy =
# continue), then a is killed before the mirror could resync. b must not take v0 over from its
# stale copy (a marked it stale at the authority before the first unmirrored acknowledgement):
# v0 stays unserved while a is away, `nasd-admin cluster` shows the mark, and when a returns
# every acknowledged write is there. Then the mark clears once a's mirror caught up. Runs in a
# private network namespace.
# With a fourth argument `etcd` the pair's leases and placement (with the mark) live in a
# one-member etcd instead of the shared folder.
#   stale_mirror_test.sh NASD NASD_ADMIN NASD_HA_LOAD [etcd]   (exit 77 = skipped)
set -euo pipefail
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
nasd=$1
ha_load=$3
authority=${4:-file}
test_name=stale-mirror-$authority
command -v nfs-cp >/dev/null || { echo "skipped: nfs-cp (libnfs-utils) missing"; exit 77; }
if [[ $authority == etcd ]]; then
  command -v etcd >/dev/null && command -v etcdctl >/dev/null || { echo "SKIP: no etcd/etcdctl"; exit 77; }
fi
# shellcheck source=ha_pair_lib.sh
source "$(dirname "$0")/ha_pair_lib.sh"
url() { echo "nfs://127.0.0.1/r/$2$3?nfsport=$1&mountport=$(( $1 == 2049 ? 20048 : 20148 ))&version=3"; }

start_pair
if [[ $authority == etcd ]]; then
  etcd_dir=$dir/etcd
  etcd_cleanup() {
    "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
    "$root/deploy/stop-etcd.sh" --dir "$etcd_dir" >/dev/null 2>&1 || true
    ha_cleanup
  }
  trap etcd_cleanup EXIT
  "$root/deploy/start-etcd.sh" --members 1 --dir "$etcd_dir" >"$dir/etcd-start.log" 2>&1 ||
    { cat "$dir/etcd-start.log"; fail "start-etcd.sh"; }
  endpoints=$(sed -n 's/^etcd_endpoints = //p' "$dir/etcd-start.log")
  "$root/deploy/stop-cluster.sh" >"$dir/stop-file.log" 2>&1 || { cat "$dir/stop-file.log"; fail "stop-cluster.sh"; }
  for n in a b; do
    sed -i "/^\[cluster\]/a authority = etcd\netcd_endpoints = $endpoints\netcd_prefix = /nasd/e2e/\netcd_timeout_ms = 1000" \
      "$dir/$n/nasd.conf"
  done
  for n in a b; do "$root/deploy/start-node.sh" "$dir/$n/nasd.conf" >"$dir/start-$n.log" 2>&1 & done
  for job in $(jobs -p); do wait "$job" || fail "a node did not start with authority = etcd"; done
  wait_for 30 "node a serving its address" cluster_line a "^  evs a .*: served here"
  wait_for 30 "node b serving its address" cluster_line b "^  evs b .*: served here"
  wait_for 60 "node a's journal mirrored to b" journal_mirrored a
  wait_for 60 "node b's journal mirrored to a" journal_mirrored b
fi
head -c 200000 /dev/urandom >"$dir/before"
nfs-cp "$dir/before" "$(url 2049 v0 /before)" >/dev/null || fail "write before the fault"

# 1. b stops: a's mirror link gets no acks, a goes DEGRADED and marks its mirror stale before
#    it acknowledges anything b lacks.
bpid=$(pid_of b)
kill -STOP "$bpid"
acked=()
t_end=$(( $(now_ms) + 4000 ))
i=0
while (( $(now_ms) < t_end )); do
  head -c 65536 /dev/urandom >"$dir/f$i"
  if timeout 20 nfs-cp "$dir/f$i" "$(url 2049 v0 /f$i)" >/dev/null 2>&1; then acked+=("$i"); fi
  i=$((i + 1))
done
cluster_line a "^STALE MIRROR: a " || fail "a acknowledged writes with its mirror stopped but shows no stale-mirror mark"
(( ${#acked[@]} > 0 )) || fail "no write was acknowledged while b was stopped (mirror_policy = continue)"
if [[ $authority == etcd ]]; then
  ETCDCTL_API=3 etcdctl --endpoints "${endpoints// /}" --command-timeout=2s get /nasd/e2e/placement \
    --print-value-only | grep -q "^stale-mirror a b " || fail "no stale-mirror mark in etcd's placement"
fi
echo "acknowledged while b was stopped: ${#acked[@]} files; the mark is at the $authority authority"

# 2. a dies before its mirror resynced; b wakes up.
kill -9 "$(pid_of a)"
kill -CONT "$bpid"
# b notices a is gone (heartbeats), a's leases run out; b must not serve v0 from its copy.
sleep "${STALE_WAIT_S:-15}"
admin_on b cluster >"$dir/b-cluster.txt" 2>&1 || true
grep -qE "^STALE MIRROR: a " "$dir/b-cluster.txt" || { cat "$dir/b-cluster.txt"; fail "b does not show a's stale-mirror mark"; }
if grep -qE "volume v0 .*served here" "$dir/b-cluster.txt"; then
  cat "$dir/b-cluster.txt"; fail "b took v0 over from a stale mirror"
fi
if timeout 10 nfs-cat "$(url 2149 v0 /f${acked[-1]})" >/dev/null 2>&1; then
  fail "b served a's last acknowledged file from its stale copy"
fi
echo "b did not take v0 over from its stale copy"

# 3. a returns: it replays its own NVRAM; every acknowledged write is there.
"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 || { cat "$dir/restart-a.log"; fail "restart of a"; }
v0_here() { cluster_line a "volume v0 .*served here"; }
wait_for 60 "a serving v0 again" v0_here
nfs-cat "$(url 2049 v0 /before)" | cmp -s - "$dir/before" || fail "the file written before the fault differs"
for k in "${acked[@]}"; do
  nfs-cat "$(url 2049 v0 /f$k)" 2>/dev/null | cmp -s - "$dir/f$k" || fail "acknowledged file f$k lost or different"
done
echo "all ${#acked[@]} acknowledged files are there after a returned"

# 4. a's mirror catches up at b: the mark is cleared.
no_mark() { ! cluster_line a "^STALE MIRROR: a "; }
wait_for 60 "the stale-mirror mark cleared after the resync" no_mark
"$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
echo PASS
