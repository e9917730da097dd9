#!/usr/bin/env bash
# SmartConnect-style address pool on a 4-node cluster (deploy/start-cluster.sh --nodes 4 with
# POOL_ADDRESSES=8: [pool clients] 127.0.4.1..8). Every pool address answers NFS, address i from
# node (i-1) mod 4 + 1; a file written through n2's pool address is read through another node's.
# Then n2 is killed with kill -9: its addresses 127.0.4.2 and .6 must answer NFS again from two
# different survivors (the file reads back through them), the others must not move. n2 restarts
# and takes its addresses back. Clean stop, fsck of every volume. Runs in a private namespace.
#   address_pool_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 test_name=address-pool
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/n_node_lib.sh"

pool_owner() {  # the node whose `cluster` status says it serves pool address $1 ("" if none)
  local i
  for i in 1 2 3 4; do
    "$admin" --socket "$dir/n$i/data/nasd.sock" cluster 2>/dev/null | grep -q " $1=here\( \|$\)" &&
      { echo "n$i"; return; }
  done
  echo ""
}
owned_by() { [[ $(pool_owner "$1") == "$2" ]]; }
moved_off() { local o; o=$(pool_owner "$1"); [[ -n $o && $o != "$2" ]]; }

POOL_ADDRESSES=8 start_nodes --nodes 4 --volumes-per-node 1
grep -q "^\[pool clients\]" "$dir/cluster.conf" || fail "no [pool] in cluster.conf"
for i in $(seq 1 8); do
  home=n$(( (i - 1) % 4 + 1 ))
  wait_for 15 "127.0.4.$i on $home" owned_by 127.0.4.$i "$home"
  wait_for 10 "127.0.4.$i answering NFS" reaches 127.0.4.$i v$(( i % 4 ))
done
echo "pool: 127.0.4.1..8 served by n1 n2 n3 n4 n1 n2 n3 n4"

head -c 200000 /dev/urandom >"$dir/payload"
nfs-cp "$dir/payload" "$(url 127.0.4.2 v0/through-pool)" >/dev/null || fail "write through 127.0.4.2"
nfs-cp "$(url 127.0.4.3 v0/through-pool)" "$dir/back" >/dev/null || fail "read through 127.0.4.3"
cmp -s "$dir/payload" "$dir/back" || fail "written through n2's pool address, read through n3's: differs"

kill -9 "$(pid_of n2)"
killed=$(now_ms)
for a in 127.0.4.2 127.0.4.6; do
  wait_for 30 "$a moving to a survivor" moved_off $a n2
  wait_for 20 "$a answering NFS from a survivor" reaches $a v0
done
moved=$(now_ms)
o2=$(pool_owner 127.0.4.2) o6=$(pool_owner 127.0.4.6)
[[ $o2 != "$o6" ]] || fail "both of n2's addresses went to $o2 (expected two survivors)"
for i in 1 3 4 5 7 8; do
  owned_by 127.0.4.$i n$(( (i - 1) % 4 + 1 )) || fail "127.0.4.$i moved though its node is up"
done
nfs-cp "$(url 127.0.4.6 v0/through-pool)" "$dir/back2" >/dev/null || fail "read through 127.0.4.6 after the kill"
cmp -s "$dir/payload" "$dir/back2" || fail "the file read through 127.0.4.6 after the kill differs"
echo "kill -9 n2: 127.0.4.2 on $o2, 127.0.4.6 on $o6, answering NFS $((moved - killed)) ms after the kill"

"$root/deploy/start-node.sh" "$dir/n2/nasd.conf" >"$dir/restart-n2.log" 2>&1 ||
  { cat "$dir/restart-n2.log"; fail "restart of n2"; }
back_at=$(now_ms)
wait_for 10 "n2's admin socket" cluster_line n2 "^member n2: this node"
for a in 127.0.4.2 127.0.4.6; do
  wait_for 30 "$a back on n2" owned_by $a n2
  wait_for 10 "$a answering NFS from n2" reaches $a v0
done
echo "n2 back: its pool addresses served by it again $(( $(now_ms) - back_at )) ms after its restart"
admin_on n2 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "n2 serving v1 again" cluster_line n2 "^    volume v1 .*served here"
stop_and_check 4
echo "e2e: address pool passed"
