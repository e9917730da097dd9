#!/usr/bin/env bash
# An N+1 cluster (deploy/start-cluster.sh --nodes 3 --standby): three primaries with two volumes
# each, and a standby n4 that serves nothing and holds the NVRAM mirror of every primary. Under
# verifying clients, primary n1 is killed with kill -9: the standby must fence it, replay its
# mirror, serve v0 and v1 and answer on evs1's address, while the other primaries keep their
# own. n1 then restarts and takes everything back with `nasd-admin failback`; the standby is
# idle again. Every acknowledged operation must be found, and every volume must pass fsck.
#   n_plus_one_standby_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=n-plus-one
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/n_node_lib.sh"
# The clients run until the failback is done and a few seconds more (end_load), at most this
# long, so that they show they resumed after it however slow the machine is.
load_seconds=${LOAD_SECONDS:-150}

start_nodes --nodes 3 --volumes-per-node 2 --standby
grep -q "^name=n4 .* volumes= evs= evs_address= role=standby" "$dir/cluster.nodes" ||
  fail "cluster.nodes does not describe the standby n4"
cluster_line n4 "^member n4 \(standby\): this node, mirrored to nobody, covers n1 n2 n3" ||
  fail "the standby does not cover every primary"
for v in 0 1 2 3 4 5; do cluster_line n4 "^    volume v$v .*served here" && fail "the standby serves v$v"; done
reaches 127.0.1.4 v3 || fail "the standby does not forward to v3"

client s1 127.0.2.1 v0 127.0.1.2 "$load_seconds"
client s3 127.0.2.3 v4 127.0.1.4 "$load_seconds"
sleep 3
kill -9 "$(pid_of n1)"
killed=$(now_ms)
wait_for 30 "the standby serving evs1's address" cluster_line n4 "^  evs evs1 .*served here"
for v in 0 1; do wait_for 20 "the standby serving v$v" cluster_line n4 "^    volume v$v .*served here"; done
wait_for 20 "v1 answering on evs1's address" reaches 127.0.2.1 v1
echo "takeover: the standby answers for n1's volumes on evs1 $(( $(now_ms) - killed )) ms after the kill"
for v in 2 3 4 5; do cluster_line n4 "^    volume v$v .*served here" && fail "the standby took v$v too"; done
cluster_line n2 "^    volume v0 .*served here" && fail "n2 took v0, which it does not cover"

"$root/deploy/start-node.sh" "$dir/n1/nasd.conf" >"$dir/restart-n1.log" 2>&1 ||
  { cat "$dir/restart-n1.log"; fail "restart of n1"; }
wait_for 10 "n1's admin socket" cluster_line n1 "^member n1: this node"
admin_on n1 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "n1 serving evs1 again" cluster_line n1 "^  evs evs1 .*served here"
for v in 0 1; do wait_for 20 "n1 serving v$v" cluster_line n1 "^    volume v$v .*served here"; done
cluster_line n4 "^  evs evs1 .*served here" && fail "the standby still serves evs1 after failback"

sleep 3  # the load carries on after the failback
end_load
wait_clients
[[ $(report_value s1 retried) -ge 1 ]] || fail "client s1 never retried: was n1 killed under it?"
[[ $(report_value s1 acknowledged_since_retry) -ge 1 ]] || fail "client s1 did not resume"
stop_and_check 6
echo "PASS: N+1: the standby took over a killed primary's volumes and address, failback, nothing acknowledged lost"
