#!/usr/bin/env bash
# The other failover drills of an HA pair, under four retrying, verifying clients:
#  1. planned: `nasd-admin failover` on node a hands v0 and a's address to node b (drained and
#     checkpointed, no replay needed); `failback` on a takes them back;
#  2. hung node: node a is stopped (SIGSTOP) past its lease. Node b fences it and takes v0 over
#     although a still holds its address; when a runs again it must find its lease gone and stop
#     serving v0 before doing anything with it (no split brain: nothing more written to v0's
#     backing file), give up its address, and leave v0 to b until `failback`. If a was stopped
#     inside a write, b's takeover waits for that write (the storage fence), so a is resumed.
# Every client must verify at the end, and both volumes pass fsck. Runs in a private netns.
#   failover_drills_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=failover-drills
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/ha_pair_lib.sh"

start_pair
four_clients "${LOAD_SECONDS:-40}"
sleep 3

# 1. Planned failover and failback.
admin_on a failover >"$dir/failover.log" 2>&1 || { cat "$dir/failover.log"; fail "nasd-admin failover"; }
wait_for 30 "node b serving a's address after the planned failover" cluster_line b "^  evs a .*: served here"
wait_for 10 "node b serving v0" cluster_line b "^    volume v0 .*served here"
cluster_line a "standby" || fail "node a does not show itself on standby"
grep -q "volume v0: closed" "$dir/a/data/nasd.log" || fail "node a did not close v0 cleanly"
sleep 2
admin_on a failback >/dev/null || fail "nasd-admin failback"
wait_for 30 "node a serving its address again" cluster_line a "^  evs a .*: served here"
wait_for 10 "node a serving v0 again" cluster_line a "^    volume v0 .*served here"
echo "planned failover and failback done"
sleep 2

# 2. Node a hangs past its lease.
kill -STOP "$(pid_of a)"
stopped=$(now_ms)
b_took_v0() { cluster_line b "^    volume v0 .*served here"; }
# The storage fence makes a takeover wait for a write the hung node had already begun.
b_waits_for_a_write() { grep -q "taking the fence: .* still running" "$dir/b/data/nasd.log"; }
b_took_or_waits() { b_took_v0 || b_waits_for_a_write; }
wait_for 30 "node b taking v0 from the hung node" b_took_or_waits
if ! b_took_v0; then
  echo "hung node: a stopped inside a write to v0; b waits for that write, a is resumed"
  kill -CONT "$(pid_of a)"
  wait_for 30 "node b taking v0 once the hung node's write ended" b_took_v0
fi
echo "hung node: node b serves v0 $(( $(now_ms) - stopped )) ms after node a stopped"
kill -CONT "$(pid_of a)"
wait_for 20 "node a giving up v0 after it woke" grep -q "volume v0: abandoned (lease lost)" "$dir/a/data/nasd.log"
wait_for 20 "node b serving a's address once a let it go" cluster_line b "^  evs a .*: served here"
cluster_line a "^    volume v0 .*routed to b" || fail "node a still routes v0 to itself"
echo "hung node: woke, found its lease gone, gave up v0 and its address"
admin_on a failback >/dev/null || fail "nasd-admin failback after the hang"
wait_for 30 "node a serving its address after the hang" cluster_line a "^  evs a .*: served here"

wait_clients
stop_and_check
# Had the woken node written v0 after b took it, fsck or the clients' verification (every
# acknowledged call there, nothing else) would catch the two writers' mix.
echo "PASS: planned failover and failback, and a hung node fenced, under load"
