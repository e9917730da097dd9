#!/usr/bin/env bash
# Planned online moves on an N+1 cluster (deploy/start-cluster.sh --nodes 3 --standby): three
# primaries with two volumes each (evs<i> on 127.0.2.i) and a standby n4. Under verifying
# clients that keep their file handles from the start:
#   1. `nasd-admin evs move evs1 n2`: n1 closes v0 and v1 cleanly, hands them over at the
#      authority and lets evs1's address go; n2 opens them without a replay and answers on
#      127.0.2.1. The client on that address reconnects and retransmits.
#   2. `nasd-admin volume move v2 evs3`: v2 leaves evs2 (n2) for evs3 (n3); its client on evs2's
#      address carries on through forwarding.
#   3. kill -9 n3: the standby replays its mirror of n3 and serves n3's volumes, v2 (moved
#      there) included, and evs3's address; n3 restarts and takes them back (failback).
#   4. `nasd-admin evs move evs1 n1`: back home.
# Every acknowledged stable write and namespace change must be there, no client may see a stale
# handle, `nasd-admin cluster` must show each result, and every volume must pass fsck.
# MOVES_AUTHORITY=etcd runs it all with the etcd authority (a one-member etcd; the placement
# record is then the key <prefix>placement).
#   planned_moves_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=moves
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/n_node_lib.sh"
# The clients run until the last step is done and a few seconds more (end_load), at most this
# long: on a slow machine the steps take longer, and a load that ended before the last move
# could not show that it resumed after it.
load_seconds=${LOAD_SECONDS:-200}
authority=${MOVES_AUTHORITY:-file}
if [[ $authority == etcd ]] && ! command -v etcd >/dev/null; then echo "SKIP: no etcd"; exit 77; fi

serves() { cluster_line "$1" "^    volume $2 .*served here"; }
serves_evs() { cluster_line "$1" "^  evs $2 .*served here"; }
served_by_only() {  # VOLUME NODE: NODE serves it and no other node does
  local n
  for n in n1 n2 n3 n4; do
    if [[ $n == "$2" ]]; then serves "$n" "$1" || return 1; else serves "$n" "$1" && return 1; fi
  done
  return 0
}

start_nodes --nodes 3 --volumes-per-node 2 --standby --authority "$authority"
wait_for 20 "n1 serving v0" serves n1 v0
wait_for 20 "n3 serving v5" serves n3 v5

client m1 127.0.2.1 v0 127.0.1.3 "$load_seconds"   # evs1's address: moves to n2 and back
client m2 127.0.2.2 v2 127.0.1.1 "$load_seconds"   # evs2's address: v2 moves away from it
client m3 127.0.1.1 v4 127.0.1.2 "$load_seconds"   # n1's own address, forwarded to v4's owner
client m4 127.0.2.3 v5 127.0.1.1 "$load_seconds"   # evs3's address: standby takeover, failback
sleep 3

# 1. EVS move, issued on a node that is neither source nor target.
started=$(now_ms)
admin_on n3 evs move evs1 n2 >"$dir/move-evs1.log" 2>&1 || { cat "$dir/move-evs1.log"; fail "evs move evs1 n2"; }
cat "$dir/move-evs1.log"
grep -q "evs evs1 to n2: done" "$dir/move-evs1.log" || fail "the evs move did not finish"
for v in v0 v1; do wait_for 20 "$v served by n2 alone" served_by_only "$v" n2; done
wait_for 20 "evs1's address on n2" serves_evs n2 evs1
serves_evs n1 evs1 && fail "n1 still answers on evs1's address"
wait_for 20 "v0 answering on evs1's address" reaches 127.0.2.1 v0
echo "evs move: evs1 answers on n2 $(( $(now_ms) - started )) ms after the command"
cluster_line n1 "^member n2: .*" && cluster_line n1 "^  evs evs1 .*\(moved here from n1\)" ||
  fail "nasd-admin cluster does not show evs1 under n2"
admin_on n2 evs | grep -q "^evs evs1 127.0.2.1: designated n2, volumes v0 v1 (served here)" ||
  { admin_on n2 evs; fail "nasd-admin evs does not show evs1 on n2"; }
if [[ $authority == file ]]; then
  grep -q "^evs evs1 n2 -" "$dir/san/leases/placement" || { cat "$dir/san/leases/placement"; fail "the authority's record"; }
else
  endpoint=$(sed -n 's/^ *etcd_endpoints *= *\([^ ,]*\).*/\1/p' "$dir/cluster.conf" | head -1)
  record=$(ETCDCTL_API=3 etcdctl --endpoints "$endpoint" get --prefix /nasd/ --print-value-only 2>&1 | grep "^evs evs1 " || true)
  [[ $record == "evs evs1 n2 -" ]] || fail "etcd's placement record says '$record'"
fi
grep -q "takeover-v0\|replaying" "$dir/n2/data/nasd.log" && fail "n2 replayed something for a planned move"
sleep 2

# 2. Volume move to another EVS (another node).
started=$(now_ms)
admin_on n1 volume move v2 evs3 >"$dir/move-v2.log" 2>&1 || { cat "$dir/move-v2.log"; fail "volume move v2 evs3"; }
cat "$dir/move-v2.log"
grep -q "volume v2 to evs evs3: done" "$dir/move-v2.log" || fail "the volume move did not finish"
wait_for 20 "v2 served by n3 alone" served_by_only v2 n3
serves n2 v3 || fail "n2 stopped serving v3"
serves_evs n2 evs2 || fail "evs2's address left n2 with v3 still there"
cluster_line n1 "^  evs evs3 .*" && admin_on n1 evs | grep -q "^evs evs3 .*volumes v2 v4 v5" ||
  { admin_on n1 evs; fail "nasd-admin evs does not show v2 in evs3"; }
echo "volume move: v2 served by n3 $(( $(now_ms) - started )) ms after the command"
sleep 2

# 3. N+1 takeover of n3 (with the moved v2), then failback.
wait_for 20 "n3's journal mirrored" cluster_line n3 "^NVRAM mirror: connected"
kill -9 "$(pid_of n3)"
killed=$(now_ms)
for v in v2 v4 v5; do wait_for 30 "the standby serving $v" serves n4 "$v"; done
wait_for 20 "evs3's address on the standby" serves_evs n4 evs3
echo "takeover: the standby serves n3's volumes (v2 included) $(( $(now_ms) - killed )) ms after the kill"
for v in v0 v1 v3; do serves n4 "$v" && fail "the standby took $v too"; done
"$root/deploy/start-node.sh" "$dir/n3/nasd.conf" >"$dir/restart-n3.log" 2>&1 ||
  { cat "$dir/restart-n3.log"; fail "restart of n3"; }
wait_for 10 "n3's admin socket" cluster_line n3 "^member n3: this node"
admin_on n3 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
for v in v2 v4 v5; do wait_for 30 "n3 serving $v again" served_by_only "$v" n3; done
wait_for 20 "evs3's address back on n3" serves_evs n3 evs3
serves_evs n4 evs3 && fail "the standby still answers on evs3's address"
echo "failback: n3 serves v2, v4, v5 again"

# 4. evs1 back home.
admin_on n2 evs move evs1 n1 >"$dir/move-back.log" 2>&1 || { cat "$dir/move-back.log"; fail "evs move evs1 n1"; }
grep -q "evs evs1 to n1: done" "$dir/move-back.log" || { cat "$dir/move-back.log"; fail "the move back did not finish"; }
for v in v0 v1; do wait_for 20 "$v back on n1" served_by_only "$v" n1; done
wait_for 20 "evs1's address back on n1" serves_evs n1 evs1

# A move to where it is already, and to nobody, are refused.
admin_on n1 evs move evs1 n1 >/dev/null 2>&1 && fail "a move to the node it is on was accepted"
admin_on n1 evs move evs1 n9 >/dev/null 2>&1 && fail "a move to an unknown node was accepted"

sleep 3  # the load carries on after the last move
end_load
wait_clients
[[ $(report_value m1 retried) -ge 1 ]] || fail "client m1 never retried: did evs1 move under it?"
for c in m1 m2 m3 m4; do
  [[ $(report_value "$c" acknowledged_since_retry) -ge 1 ]] || [[ $c == m3 ]] || fail "client $c did not resume"
done
stop_and_check 6
echo "PASS: evs move, volume move, N+1 takeover of a moved volume and failback under load, nothing acknowledged lost"
