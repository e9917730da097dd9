#!/usr/bin/env bash
# An attacker on the network, without the cluster key, against a real HA pair
# (deploy/start-cluster.sh) in a private network namespace (tests/e2e/cluster_link_attacks.py
# speaks the unauthenticated protocols the nodes spoke before):
#   - forged interconnect hellos (the right cluster and peer name; a wrong cluster) and a
#     forged heartbeat and volume call after one: met with a silent close;
#   - mirror hellos with a 2^62 byte log and with a new uuid, and a record at the tail that
#     would be copied past the log's end: silent close, the node lives, the copy stays the
#     partner's;
#   - node b killed while forged heartbeats "from b" keep coming: node a takes b's volume over
#     anyway, with everything b acknowledged (its mirror copy was not wiped);
# and afterwards b restarts and takes its volume back, both mirrors connected, both volumes
# readable through both nodes and clean under fsck.
#   cluster_link_attack_test.sh NASD NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=cluster-link-attack
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/ha_pair_lib.sh"
attack="$root/tests/e2e/cluster_link_attacks.py"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
url() { echo "nfs://127.0.0.1/r/$2$3?nfsport=$1&mountport=$(( $1 == 2049 ? 20048 : 20148 ))&version=3"; }
alive() { kill -0 "$(pid_of "$1")" 2>/dev/null || fail "node $1 died: $2"; }
same() { local got; got=$(nfs-cat "$(url "$1" "$2" "$3")" | sha256sum) || fail "read $2$3 through port $1";
         [[ $got == "$want" ]] || fail "$2$3 through port $1 differs from what was written"; }

start_pair
head -c 200000 /dev/urandom > "$dir/payload"
want=$(sha256sum < "$dir/payload")
nfs-cp "$dir/payload" "$(url 2049 v0 /before-a)" >/dev/null || fail "write v0 through a"
nfs-cp "$dir/payload" "$(url 2149 v1 /before-b)" >/dev/null || fail "write v1 through b"
wait_for 10 "b's journal mirrored to a" cluster_line b "^NVRAM mirror: connected"

echo "--- interconnect attacks on both nodes"
python3 "$attack" interconnect 127.0.0.1:7001 lab b || fail "an interconnect attack on node a got in"
python3 "$attack" interconnect 127.0.0.1:7002 lab a || fail "an interconnect attack on node b got in"
alive a "interconnect attacks"; alive b "interconnect attacks"
cluster_line a "^interconnect: [1-9][0-9]* connection\(s\) refused" || fail "node a does not count the refusals"

echo "--- mirror attacks while the real link is up"
python3 "$attack" mirror 127.0.0.1:7101 || fail "a mirror attack on node a got in"
alive a "mirror attacks"
cluster_line b "^NVRAM mirror: connected" || fail "b's mirror link dropped under the attacks"
cluster_line a "^mirror of b: .*holds records" || fail "a's copy of b's NVRAM is gone"

echo "--- node b killed; forged heartbeats from 'b' and mirror attacks on a meanwhile"
nfs-cp "$dir/payload" "$(url 2149 v1 /last-b)" >/dev/null || fail "write v1 through b before the kill"
kill -9 "$(pid_of b)"
python3 "$attack" heartbeats 127.0.0.1:7001 lab b 1 15 >"$dir/heartbeats.out" 2>&1 &
forger=$!
clients+=($forger)
python3 "$attack" mirror 127.0.0.1:7101 || fail "a mirror attack on node a got in while b was down"
alive a "mirror attacks while b was down"
wait_for 30 "node a taking v1 over despite forged heartbeats" cluster_line a "^    volume v1 .*routed to here"
alive a "the takeover"
for f in /before-b /last-b; do same 2049 v1 "$f"; done
wait "$forger" || { cat "$dir/heartbeats.out"; fail "forged heartbeats were answered"; }
clients=()
cat "$dir/heartbeats.out"

echo "--- b back while a host outside the cluster (127.0.0.2) holds a's handshake slots"
# Before: 16 slots of 2 s each, shared by every address, and no allowed_peers by default: this
# flood kept b from reconnecting its interconnect and mirror links to a for as long as it ran.
python3 "$attack" flood 127.0.0.2 60 40 127.0.0.1:7001 127.0.0.1:7101 >"$dir/flood.out" 2>&1 &
flooder=$!
clients+=($flooder)
sleep 1
"$root/deploy/start-node.sh" "$dir/b/nasd.conf" >"$dir/restart-b.log" 2>&1 ||
  { cat "$dir/restart-b.log"; fail "restart of node b"; }
wait_for 20 "b's interconnect link to a despite the flood" cluster_line b "^peer a: interconnect up"
wait_for 20 "b's journal mirrored to a despite the flood" cluster_line b "^NVRAM mirror: connected"
grep -q "refused connection from 127.0.0.2 (not in allowed_peers)" "$dir/a/data/nasd.log" ||
  fail "a did not refuse the flood by address (allowed_peers defaults to the cluster's nodes)"
kill "$flooder" 2>/dev/null; wait "$flooder" || true
clients=()
cat "$dir/flood.out"
echo "--- failback, both mirrors in sync"
admin_on b failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "node b serving its own address again" cluster_line b "^  evs b .*: served here"
wait_for 30 "node b routing v1 to itself" cluster_line b "^    volume v1 .*routed to here"
wait_for 20 "a's journal mirrored to b" cluster_line a "^NVRAM mirror: connected"
wait_for 20 "b's journal mirrored to a" cluster_line b "^NVRAM mirror: connected"
nfs-cp "$dir/payload" "$(url 2049 v1 /after)" >/dev/null || fail "write v1 through a after failback"
for port in 2049 2149; do
  for f in /before-b /last-b /after; do same $port v1 "$f"; done
  same $port v0 /before-a
done
alive a "the end"; alive b "the end"
stop_and_check
echo "PASS: no attack without the cluster key got in; takeover and failback as usual"
