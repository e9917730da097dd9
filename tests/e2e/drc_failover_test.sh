#!/usr/bin/env bash
# The reply cache moves with the data in an HA pair: a client's CREATE (guarded), MKDIR, REMOVE,
# RENAME and LINK, retransmitted with the same xid from the same port, are answered with their
# original replies (byte for byte, no second execution) after
#   1. kill -9 of node a and takeover of its volume by node b (b replays its copy of a's NVRAM,
#      whose records carry each call's identity and reply);
#   2. failback of the volume to node a (a planned hand-over: the journal is trimmed, the reply
#      window saved beside the volume carries the replies);
#   3. a planned failover of the volume to node b.
# Runs in a private network namespace.
#   drc_failover_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD NASD_DRC_PROBE   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 probe=$4 test_name=drc-failover-test
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/ha_pair_lib.sh"
[[ -x $probe ]] || { echo "SKIP: no nasd-drc-probe at $probe"; exit 77; }

# probe MODE LOCAL_PORT NAME: through a's address (2049/20048) into v0, a's volume.
probe() { "$probe" "$1" 2049 20048 /r/v0 "$2" "$3" "$dir/probe-$3.state"; }
v0_on_a_ports() { nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1; }

start_pair
wait_for 30 "v0 answering on a's ports" v0_on_a_ports

# 1. kill -9 and takeover.
probe send 41001 takeover || fail "original calls before the kill"
kill -9 "$(pid_of a)"
wait_for 30 "node b serving a's address" cluster_line b "^  evs a .*: served here"
wait_for 30 "v0 answering on a's ports" v0_on_a_ports
probe resend 41001 takeover || fail "retransmissions after kill -9 and takeover were executed again"
echo "takeover: 5 retransmissions answered with their original replies"

# 2. failback (planned hand-over b -> a).
probe send 41002 failback || fail "original calls before failback"
"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 ||
  { cat "$dir/restart-a.log"; fail "restart of node a"; }
admin_on a failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "node a serving its own address again" cluster_line a "^  evs a .*: served here"
wait_for 30 "node a routing v0 to itself" cluster_line a "^    volume v0 .*routed to here"
wait_for 30 "v0 answering on a's ports" v0_on_a_ports
probe resend 41002 failback || fail "retransmissions after failback were executed again"
echo "failback: 5 retransmissions answered with their original replies"

# 3. planned failover (a -> b).
probe send 41003 planned || fail "original calls before the planned failover"
admin_on a failover >"$dir/failover.log" 2>&1 || { cat "$dir/failover.log"; fail "nasd-admin failover"; }
wait_for 30 "node b serving a's address" cluster_line b "^  evs a .*: served here"
wait_for 30 "node b routing v0 to itself" cluster_line b "^    volume v0 .*routed to here"
wait_for 30 "v0 answering on a's ports" v0_on_a_ports
probe resend 41003 planned || fail "retransmissions after a planned failover were executed again"
echo "planned failover: 5 retransmissions answered with their original replies"

stop_and_check
echo "PASS: retransmitted CREATE, MKDIR, REMOVE, RENAME, LINK got their original replies after takeover, failback and planned failover"
