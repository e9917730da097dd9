#!/usr/bin/env bash
# Failover of an HA pair whose lease authority is etcd ([cluster] authority = etcd), under
# load: a three-member etcd (deploy/start-etcd.sh) holds both volumes' leases; four clients run
# nasd-ha-load; one etcd member is killed (the pair keeps renewing through the others); the
# other two are paused past the lease (both nodes abandon their volumes, then reopen them in
# the same process from their journals); then
# node a is killed with kill -9, node b waits for etcd to expire a's lease, takes v0 with a
# larger epoch (the storage fence's token), replays a's mirrored NVRAM and serves a's address;
# node a comes back and takes v0 back with `nasd-admin failback` (a larger epoch again). Every
# client must verify, both volumes pass fsck. etcd and the pair are started and stopped here,
# in a private network namespace.
#   etcd_failover_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=etcd-failover
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
command -v etcd >/dev/null && command -v etcdctl >/dev/null || { echo "SKIP: no etcd/etcdctl"; exit 77; }
source "$(dirname "$0")/ha_pair_lib.sh"
load_seconds=${LOAD_SECONDS:-40}

etcd_dir=$dir/etcd
etcd_cleanup() {
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  "$root/deploy/stop-etcd.sh" --dir "$etcd_dir" >/dev/null 2>&1 || true
  ha_cleanup
}
trap etcd_cleanup EXIT
"$root/deploy/start-etcd.sh" --members 3 --dir "$etcd_dir" >"$dir/etcd-start.log" 2>&1 ||
  { cat "$dir/etcd-start.log"; fail "start-etcd.sh"; }
endpoints=$(sed -n 's/^etcd_endpoints = //p' "$dir/etcd-start.log")
[[ -n $endpoints ]] || fail "start-etcd.sh printed no endpoints"
etcdctl_() { ETCDCTL_API=3 etcdctl --endpoints "${endpoints// /}" --command-timeout=2s "$@"; }
# holder_of ID / epoch_of ID: the volume's lease key in etcd (value: the node; create_revision:
# the epoch).
holder_of() { etcdctl_ get "/nasd/e2e/volume-$1" --print-value-only 2>/dev/null | head -1; }  # line 2: the tag
epoch_of() { etcdctl_ get "/nasd/e2e/volume-$1" -w json 2>/dev/null | sed -n 's/.*"create_revision":\([0-9]*\).*/\1/p'; }

# The user's pair (deploy/start-cluster.sh), moved to etcd: the same configs with the authority
# keys added to [cluster], both nodes started again at once.
start_pair
"$root/deploy/stop-cluster.sh" >"$dir/stop-file.log" 2>&1 || { cat "$dir/stop-file.log"; fail "stop-cluster.sh"; }
for n in a b; do
  sed -i "/^\[cluster\]/a authority = etcd\netcd_endpoints = $endpoints\netcd_prefix = /nasd/e2e/\netcd_timeout_ms = 1000" \
    "$dir/$n/nasd.conf"
done
for n in a b; do "$root/deploy/start-node.sh" "$dir/$n/nasd.conf" >"$dir/start-$n.log" 2>&1 & done
for job in $(jobs -p); do wait "$job" || fail "a node did not start with authority = etcd"; done
wait_for 30 "node a serving its address" cluster_line a "^  evs a .*: served here"
wait_for 30 "node b serving its address" cluster_line b "^  evs b .*: served here"
wait_for 10 "etcd naming a as v0's holder" test "$(holder_of 0)" = a
[[ $(holder_of 1) == b ]] || fail "etcd does not name b as v1's holder"
cluster_line a "^    volume v0 .*lease a epoch $(epoch_of 0) " || fail "nasd-admin cluster does not show the etcd lease"
echo "leases in etcd: v0 held by a (epoch $(epoch_of 0)), v1 by b (epoch $(epoch_of 1))"

# Someone who can write to etcd but has no cluster key names b as v0's holder. Before, a gave
# v0 up and b took it (a failover forced from etcd); now the value's tag does not verify and
# both refuse it, logged. Deleting the forged key lets a take its lease again.
etcdctl_ put /nasd/e2e/volume-0 b >/dev/null || fail "etcdctl put of the forged holder"
forged_in_log() { grep -q "lease authority: etcd key /nasd/e2e/volume-0 carries no cluster-key tag.*: refused" "$dir/$1/data/nasd.log"; }
wait_for 10 "node a refusing the forged holder, in its log" forged_in_log a
for _ in $(seq 30); do
  cluster_line b "^    volume v0 .*served here" && fail "node b took v0 on a forged etcd value"
  sleep 0.2
done
etcdctl_ del /nasd/e2e/volume-0 >/dev/null || fail "etcdctl del of the forged holder"
wait_for 30 "node a serving v0 again after the forged key went" cluster_line a "^    volume v0 .*served here"
wait_for 10 "etcd naming a as v0's holder again" test "$(holder_of 0)" = a
epoch_a=$(epoch_of 0)
echo "a forged holder in etcd was refused (logged); b never took v0; a holds it again (epoch $epoch_a)"

four_clients "$load_seconds"
sleep 3
# One etcd member dies: a quorum of two is left, renewals go to the others.
kill -9 "$(cat "$etcd_dir/m0.pid")"
sleep 5
cluster_line a "^    volume v0 .*served here" || fail "node a stopped serving v0 when one etcd member died"
cluster_line b "^    volume v1 .*served here" || fail "node b stopped serving v1 when one etcd member died"
echo "one etcd member killed: both nodes still hold and serve their volumes"

# The rest of etcd stops answering for twice the lease: each node abandons its volume (writes
# nothing more: the partner could own it already), then takes the lease again once etcd is
# back and opens the volume in the same process. What the clients had acknowledged since the
# file system's last flush is only in the journal: that reopen must replay it.
abandoned_before=$(cat "$dir"/{a,b}/data/nasd.log | grep -c "abandoned (lease lost)" || true)
for m in 1 2; do kill -STOP "$(cat "$etcd_dir/m$m.pid")"; done
sleep 8
for m in 1 2; do kill -CONT "$(cat "$etcd_dir/m$m.pid")"; done
abandoned_after=$(cat "$dir"/{a,b}/data/nasd.log | grep -c "abandoned (lease lost)" || true)
(( abandoned_after >= abandoned_before + 2 )) ||
  fail "etcd paused past the lease, but the nodes did not both abandon their volumes"
wait_for 30 "node a serving v0 again" cluster_line a "^    volume v0 .*served here"
wait_for 30 "node b serving v1 again" cluster_line b "^    volume v1 .*served here"
echo "etcd paused past the lease: both nodes abandoned their volume and opened it again"

kill -9 "$(pid_of a)"
killed=$(now_ms)
wait_for 30 "node b serving a's address" cluster_line b "^  evs a .*: served here"
v0_on_a_ports() { nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1; }
wait_for 30 "v0 answering on a's ports" v0_on_a_ports
taken_over=$(now_ms)
[[ $(holder_of 0) == b ]] || fail "etcd does not name b as v0's holder after the takeover"
epoch_b=$(epoch_of 0)
(( epoch_b > epoch_a )) || fail "the takeover's epoch $epoch_b is not above a's $epoch_a"
[[ -f $dir/san/leases/v0.epoch-fence ]] || fail "no epoch fence for v0"
echo "takeover: node b answers for v0 on a's ports $((taken_over - killed)) ms after the kill (epoch $epoch_a -> $epoch_b)"

"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 ||
  { cat "$dir/restart-a.log"; fail "restart of node a"; }
admin_on a failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "node a serving its own address again" cluster_line a "^  evs a .*: served here"
wait_for 30 "node a routing v0 to itself" cluster_line a "^    volume v0 .*routed to here"
[[ $(holder_of 0) == a ]] || fail "etcd does not name a as v0's holder after failback"
epoch_back=$(epoch_of 0)
(( epoch_back > epoch_b )) || fail "the failback's epoch $epoch_back is not above b's $epoch_b"
echo "failback: v0 back on a (epoch $epoch_b -> $epoch_back)"

wait_clients
for c in a-v0 a-v1; do
  [[ $(report_value $c verify) == OK ]] || fail "client $c: verify"
  [[ $(report_value $c retried) -ge 1 ]] || fail "client $c never retried: was node a killed under it?"
done
stop_and_check
# A clean stop releases the leases: nothing is left in etcd.
[[ -z $(holder_of 0) && -z $(holder_of 1) ]] || fail "leases left in etcd after a clean stop"
echo "PASS: a pair with authority = etcd rode out the loss of an etcd member and kill -9 of node a, nothing acknowledged lost"
