#!/usr/bin/env bash
# A 4-node cluster with 16 volumes (4 per node), started with deploy/start-cluster.sh --nodes 4:
# every node mounts every volume; a file written through one node is read through another for
# a volume of every owner; then, under four verifying clients (one per owner, each writing
# through the owner's EVS address and verifying through another node), node n2 is killed with
# kill -9. n3, which holds n2's NVRAM mirror (the ring), must fence it, replay its mirror, serve
# v4..v7 and answer on evs2's address; n2 then restarts and takes everything back with
# `nasd-admin failback`. Every acknowledged operation must be found, and all 16 volumes must
# pass fsck. Runs in a private network namespace.
#   n_node_cluster_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=n-node-cluster
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/n_node_lib.sh"
# The clients run until the failback is done and a few seconds more (end_load), at most this
# long, so that they show they resumed after it however slow the machine is.
load_seconds=${LOAD_SECONDS:-150}

start_nodes --nodes 4 --volumes-per-node 4
[[ $(wc -l <"$dir/cluster.nodes") == 4 ]] || fail "cluster.nodes has not 4 lines"
grep -q "^name=n3 address=127.0.1.3 nfs_port=2049 mount_port=20048 interconnect=127.0.1.3:7001 .*volumes=v8,v9,v10,v11 evs=evs3" \
  "$dir/cluster.nodes" || fail "cluster.nodes does not describe n3"

# /r lists every volume on every node, and every node reaches every volume.
for i in 1 2 3 4; do
  listing=$(nfs-ls "$(url 127.0.1.$i "")" 2>&1) || fail "nfs-ls /r through n$i: $listing"
  for v in $(seq 0 15); do
    grep -qw "v$v" <<<"$listing" || fail "/r through n$i does not list v$v"
    wait_for 5 "n$i reaching v$v" reaches 127.0.1.$i v$v
  done
done
# Written through one node, read through another, for a volume of every owner.
head -c 300000 /dev/urandom >"$dir/payload"
for owner in 1 2 3 4; do
  v=v$(( (owner - 1) * 4 + 1 ))
  writer=$(( owner % 4 + 1 )) reader=$(( (owner + 1) % 4 + 1 ))
  nfs-cp "$dir/payload" "$(url 127.0.1.$writer "$v/cross-$owner")" >/dev/null ||
    fail "write to $v through n$writer"
  nfs-cp "$(url 127.0.1.$reader "$v/cross-$owner")" "$dir/back-$owner" >/dev/null ||
    fail "read of $v through n$reader"
  cmp -s "$dir/payload" "$dir/back-$owner" || fail "$v: written through n$writer, read through n$reader: differs"
done
echo "every node reaches all 16 volumes; writes through one node read back through another"

# Load: one client per owner through its EVS, verified through another node.
for owner in 1 2 3 4; do
  client "o$owner" 127.0.2.$owner v$(( (owner - 1) * 4 )) 127.0.1.$(( owner % 4 + 1 )) "$load_seconds"
done
client "o2b" 127.0.1.1 v6 127.0.1.4 "$load_seconds"   # forwarded to n2, then to n3
sleep 3
for pid in "${clients[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a client ended before the kill"; done

kill -9 "$(pid_of n2)"
killed=$(now_ms)
wait_for 30 "n3 serving evs2's address" cluster_line n3 "^  evs evs2 .*served here"
for v in 4 5 6 7; do wait_for 20 "n3 serving v$v" cluster_line n3 "^    volume v$v .*served here"; done
wait_for 20 "v5 answering on evs2's address" reaches 127.0.2.2 v5
taken_over=$(now_ms)
echo "takeover: n3 answers for n2's volumes on evs2 $((taken_over - killed)) ms after the kill"
wait_for 20 "n1 routing v4 to n3" cluster_line n1 "^    volume v4 .*routed to n3"
cluster_line n4 "^member n2: down" || fail "n4 does not see n2 down"

# n2 comes back and takes its volumes and its EVS back.
"$root/deploy/start-node.sh" "$dir/n2/nasd.conf" >"$dir/restart-n2.log" 2>&1 ||
  { cat "$dir/restart-n2.log"; fail "restart of n2"; }
wait_for 10 "n2's admin socket" cluster_line n2 "^member n2: this node"
admin_on n2 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
asked=$(now_ms)
wait_for 30 "n2 serving evs2 again" cluster_line n2 "^  evs evs2 .*served here"
for v in 4 5 6 7; do wait_for 20 "n2 serving v$v" cluster_line n2 "^    volume v$v .*served here"; done
cluster_line n3 "^  evs evs2 .*served here" && fail "n3 still serves evs2 after failback"
echo "failback: n2 serves its volumes again $(( $(now_ms) - asked )) ms after nasd-admin failback"

sleep 3  # the load carries on after the failback
end_load
wait_clients
[[ $(report_value o2 retried) -ge 1 ]] || fail "client o2 never retried: was n2 killed under it?"
[[ $(report_value o2 acknowledged_since_retry) -ge 1 ]] || fail "client o2 did not resume"
for owner in 1 2 3 4; do
  v=v$(( (owner - 1) * 4 + 1 ))
  nfs-cp "$(url 127.0.1.1 "$v/cross-$owner")" "$dir/after-$owner" >/dev/null && cmp -s "$dir/payload" "$dir/after-$owner" ||
    fail "$v/cross-$owner changed or lost after the takeover and failback"
done
stop_and_check 16
echo "PASS: 4 nodes, 16 volumes: forwarding everywhere, kill -9 of n2 taken over by n3, failback, nothing acknowledged lost"
