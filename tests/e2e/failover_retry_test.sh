#!/usr/bin/env bash
# A takeover that cannot be made at once is retried, never made carelessly: node a is killed
# with kill -9 while node b cannot copy its mirror of a's NVRAM (the copy's path is blocked).
# Node b must not serve v0 without replaying that copy (it would drop acknowledged operations):
# it keeps v0 answering NFS3ERR_JUKEBOX and retries. Once the path is free again it replays and
# serves v0; a client of v0 through node b must ride it out and verify. Then a comes back and
# fails back, and both volumes pass fsck. Runs in a private network namespace.
#   failover_retry_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=failover-retry
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/ha_pair_lib.sh"

start_pair
client b-v0 2149 20148 v0 2149 20148 30
sleep 3
# A folder (not empty, so it cannot simply be removed) where b writes the copy at a takeover.
blocked=$dir/b/data/takeover-v0.img
mkdir -p "$blocked/in-the-way"
kill -9 "$(pid_of a)"
b_log_has() { grep -q "$1" "$dir/b/data/nasd.log"; }
wait_for 30 "node b retrying v0's open" b_log_has "volume v0: retrying the open"
sleep 2
b_log_has "partner's NVRAM recovered" && fail "node b opened v0 although it could not copy a's NVRAM"
cluster_line b "^    volume v0 .*routed to here" && fail "node b serves v0 without the partner's NVRAM"
rm -rf "$blocked"
wait_for 30 "node b serving v0 after the retry" cluster_line b "^    volume v0 .*routed to here"
b_log_has "partner's NVRAM recovered" || fail "node b served v0 without replaying a's NVRAM"
wait_for 30 "node b serving a's address" cluster_line b "^  evs a .*: served here"

"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 ||
  { cat "$dir/restart-a.log"; fail "restart of node a"; }
admin_on a failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "node a routing v0 to itself" cluster_line a "^    volume v0 .*routed to here"
wait_clients
[[ $(report_value b-v0 jukebox) -ge 1 || $(report_value b-v0 retried) -ge 1 ]] ||
  fail "the client never noticed the takeover: was v0 held back at all?"
stop_and_check
echo "PASS: a takeover whose NVRAM copy failed was retried, replayed, and lost nothing"
