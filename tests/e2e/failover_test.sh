#!/usr/bin/env bash
# Failover of an HA pair under load: four clients (through node a into v0 and v1, through node b
# into v0 and v1) run nasd-ha-load, node a is killed with kill -9, node b fences it, replays its
# mirrored NVRAM and serves a's volume and a's address; node a is started again and takes its
# volume back with `nasd-admin failback`. Every client must ride it out with the same handles
# and find, at the end, everything it was told had happened and nothing else; both volumes
# must then pass fsck. The pair is the user's own (deploy/start-cluster.sh). Runs in a private
# network namespace.
#   failover_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
# LOAD_SECONDS (default 40) is how long each client runs; the kill comes after KILL_AFTER (4).
# The clients of node a must resume after the failback, so the load outlasts kill, takeover,
# restart and failback with room to spare: on a busy 2-core machine those took over 20 s.
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=failover-test
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/ha_pair_lib.sh"
load_seconds=${LOAD_SECONDS:-40}
kill_after=${KILL_AFTER:-4}

start_pair
four_clients "$load_seconds"
started=$(now_ms)
sleep "$kill_after"
for pid in "${clients[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a client ended before the kill"; done

# The crash. Node b must fence a, take v0 and answer on a's address.
kill -9 "$(pid_of a)"
killed=$(now_ms)
wait_for 30 "node b serving a's address" cluster_line b "^  evs a .*: served here"
v0_on_a_ports() { nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1; }
wait_for 30 "v0 answering on a's ports" v0_on_a_ports
taken_over=$(now_ms)
echo "takeover: node b answers for v0 on a's ports $((taken_over - killed)) ms after the kill"

# Node a comes back as a standby (b keeps its address), then takes its volume back.
"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 ||
  { cat "$dir/restart-a.log"; fail "restart of node a"; }
admin_on a failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
asked=$(now_ms)
wait_for 30 "node a serving its own address again" cluster_line a "^  evs a .*: served here"
wait_for 30 "node a routing v0 to itself" cluster_line a "^    volume v0 .*routed to here"
cluster_line b "^  evs a .*: not here" || fail "node b still serves a's address after failback"
back=$(now_ms)
echo "failback: node a serves v0 again $((back - asked)) ms after nasd-admin failback"
(( (back - started) / 1000 + 5 < load_seconds )) ||
  echo "warning: failback ended near the end of the load (LOAD_SECONDS=$load_seconds)"

wait_clients
# The clients of node a lost their connections with it: they must have retried, and resumed.
for c in a-v0 a-v1; do
  [[ $(report_value $c verify) == OK ]] || fail "client $c: verify"
  [[ $(report_value $c retried) -ge 1 ]] || fail "client $c never retried: was node a killed under it?"
  [[ $(report_value $c acknowledged_since_retry) -ge 1 ]] || fail "client $c did not resume"
done
stop_and_check
echo "PASS: four clients rode out kill -9 of node a, takeover by b and failback, nothing acknowledged lost"
