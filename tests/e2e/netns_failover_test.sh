#!/usr/bin/env bash
# Failover between real hosts (issue 34): a 2-node cluster, each node on a host of its own
# (netns_hosts_lib.sh: a network namespace, its own NIC on a front-end and a back-end bridge,
# its own /tmp and /run), each EVS address on the front-end interface fe0 (`address =
# 10.0.4.1x/24`, `interface = fe0`), the interconnect and mirrors on the back end, the SAN and
# the lease files in a folder every host sees. A client host writes through evs1's address
# (nfs-cp, and a verifying nasd-ha-load the whole time). Twice, n1 crashes while serving evs1:
# first its host dies with it (kill -9 and h1's cable pulled at the switch), then only nasd dies
# (kill -9, and the unit's stop hook `nasd --remove-addresses`). Each time n2 must take the
# volume over, put 10.0.4.11 on its own fe0 and announce it with gratuitous ARP: the client's
# neighbour entry must become h2's MAC, arping from the client must be answered by h2 alone,
# and the file written before reads back. n1 restarts (the first time removing the address its
# crashed run left on fe0, before the cable is back) and fails back: the address returns to
# h1's fe0, leaves h2's, and the client's neighbour entry follows. The client must verify every
# acknowledged operation. A pool on fe0 (10.0.4.21 on n1, .22 on n2) moves the same way, and
# goes home by itself. Clean stop (no EVS or pool address left on any fe0), fsck.
#   netns_failover_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(dirname "$(dirname "$nasd")")
admin=$BUILD_DIR/server/admin/nasd-admin
[[ -x $BUILD_DIR/cluster/nasd && -x $admin ]] || { echo "SKIP: $nasd is not inside a build folder"; exit 77; }
[[ -x $ha_load ]] || { echo "SKIP: no nasd-ha-load at $ha_load"; exit 77; }
[[ $(id -u) == 0 ]] && ip netns list >/dev/null 2>&1 || { echo "SKIP: needs root for network namespaces"; exit 77; }
command -v arping >/dev/null || { echo "SKIP: no arping (iputils-arping)"; exit 77; }
authority=${AUTHORITY:-file}
[[ $authority != etcd ]] || command -v etcd >/dev/null || { echo "SKIP: no etcd (etcd-server)"; exit 77; }
source "$(dirname "$0")/netns_hosts_lib.sh"
dir=$NH_DIR
nh_build 2
NH_ETCD_LINE=""
[[ $authority != etcd ]] || nh_etcd || { echo "FAIL: etcd on the back end did not start"; exit 1; }

nodes=(n1 n2)
data_of() { echo "$dir/$1/data"; }
source "$(dirname "$0")/netns_cluster_lib.sh"

head -c 32 /dev/urandom >"$dir/cluster.key" && chmod 600 "$dir/cluster.key"
head -c 32 /dev/urandom >"$dir/handle.key" && chmod 600 "$dir/handle.key"
mkdir -p "$dir/san" && chmod 700 "$dir/san"
{
  cat <<CONF
# Two hosts; the client-facing addresses move between their fe0 interfaces.
[cluster]
name = hosts
key = $dir/cluster.key
shared_dir = $dir/san
authority = $authority
$NH_ETCD_LINE
failback = manual
lease_ms = ${LEASE_MS:-3000}
startup_grace_ms = 4000
CONF
  for i in 1 2; do
    printf '\n[member n%d]\ninterconnect = 10.0.5.%d:7001\nmirror_listen = 10.0.5.%d:7101\n' "$i" "$i" "$i"
    printf '\n[evs evs%d]\nnode = n%d\naddress = 10.0.4.1%d/24\ninterface = fe0\nvolumes = v%d\n' "$i" "$i" "$i" "$((i - 1))"
    printf '\n[volume v%d]\nid = %d\nsize = 256M\nsegment_size = 1M\n' "$((i - 1))" "$((i - 1))"
    printf '\n[export /r/v%d]\nvolume = v%d\nclients = 10.0.4.0/24\noptions = rw,insecure,no_root_squash\n' "$((i - 1))" "$((i - 1))"
  done
  # A SmartConnect-style pool on the same interface: 10.0.4.21 is n1's, 10.0.4.22 n2's.
  printf '\n[pool clients]\naddresses = 10.0.4.21-10.0.4.22\ninterface = fe0\nprefix = 24\n'
} >"$dir/cluster.conf"
for i in 1 2; do
  mkdir -p "$dir/n$i" && chmod 700 "$dir/n$i"
  cat >"$dir/n$i/nasd.conf" <<CONF
[node]
name = n$i
data_dir = data
listen = 10.0.4.$i
http_port = 0
rpcbind = off
handle_key = $dir/handle.key
cluster_config = $dir/cluster.conf
[nvram]
size = 64M
CONF
done
start_node() { nh_exec "h${1#n}" env BUILD_DIR="$BUILD_DIR" "$root/deploy/start-node.sh" "$dir/$1/nasd.conf" >"$dir/start-$1.log" 2>&1 || { cat "$dir/start-$1.log"; fail "start of $1"; }; }
start_node n1 & p1=$!
start_node n2 & p2=$!
wait $p1 && wait $p2 || fail "a node did not start"

mac1=$(nh_mac h1) mac2=$(nh_mac h2)
echo "hosts: h1 fe0 $mac1, h2 fe0 $mac2, client 10.0.4.100"
wait_for 30 "evs1 on h1's fe0" on_interface_here n1 evs1
wait_for 30 "evs2 on h2's fe0" on_interface_here n2 evs2
has_address h1 10.0.4.11 || fail "10.0.4.11 is not on h1's fe0"
wait_for 30 "evs1 answering NFS at the client" reaches 10.0.4.11 v0
wait_for 30 "pool address 10.0.4.21 on h1's fe0" pool_here n1 10.0.4.21
wait_for 30 "pool address 10.0.4.22 on h2's fe0" pool_here n2 10.0.4.22
wait_for 30 "10.0.4.21 answering NFS at the client" reaches 10.0.4.21 v1
neigh_is 10.0.4.21 "$mac1" || fail "the client's neighbour entry for 10.0.4.21 is not h1's MAC"
neigh_is 10.0.4.11 "$mac1" || fail "the client's neighbour entry for 10.0.4.11 is not h1's MAC"

# The journal of n1 must reach n2's mirror before the crash (else n1 acknowledges from its own
# NVRAM only, and the kill -9 loses what the client was told).
wait_for 60 "n1's journal mirrored to n2" mirrored n1

head -c 300000 /dev/urandom >"$dir/payload"
on_client nfs-cp "$dir/payload" "$(url 10.0.4.11 v0/before-the-crash)" >/dev/null || fail "nfs-cp to 10.0.4.11"
nh_spawn client "$dir/client-evs1.out" "$ha_load" --host 10.0.4.11 --export /r/v0 --dir load \
  --seconds 150 --until-file "$dir/end-load" --call-timeout-ms 5000 --retry-budget-s 90 --report "$dir/client-evs1.report"
client_pid=$NH_PID
sleep 3
kill -0 "$client_pid" 2>/dev/null || fail "the client ended before the crash"

# fault_and_back HOW: n1 fails while serving evs1, n2 takes the volume and the address over,
# n1 comes back and fails back. HOW says what happens to n1 and h1:
#   host: h1 dies with its NIC: nasd killed with -9 and h1's cable pulled at the switch; the
#     address the crashed run left on h1's fe0 is removed by n1's restart (while the cable is
#     still out, so the two hosts never answer for it at once), then the cable goes back in;
#   process: only nasd dies, h1 stays up: the stop hook of deploy/nasd.service (ExecStopPost,
#     `nasd --remove-addresses`) removes the address, as systemd would run it;
#   stop: nasd is SIGSTOPped: n2 takes the volume at its lease's end, but h1's kernel still
#     answers ARP for 10.0.4.11, so n2's probe refuses the address (logged) until n1 wakes,
#     finds its lease gone and lets the volume and the address go;
#   partition (etcd): both of h1's cables pulled at the switch: n2 gets the lease from etcd
#     (which n1 cannot reach to renew it) and the address (h1 cannot answer the probe); n1
#     gives up both at its lease's end; then the cables go back in.
fault_and_back() {
  local how=$1 t0 moved answers
  case $how in
    host) kill -9 "$(pid_of n1)"; t0=$(now_ms); nh_link h1 fe0 down ;;
    process)
      kill -9 "$(pid_of n1)"; t0=$(now_ms)
      for _ in $(seq 50); do kill -0 "$(pid_of n1)" 2>/dev/null || break; sleep 0.1; done
      nh_exec h1 "$nasd" --config "$dir/n1/nasd.conf" --remove-addresses >"$dir/stop-hook.log" 2>&1 ||
        { cat "$dir/stop-hook.log"; fail "nasd --remove-addresses"; }
      grep -q "removed: 10.0.4.11/24 on fe0" "$dir/stop-hook.log" ||
        { cat "$dir/stop-hook.log"; fail "the stop hook did not remove 10.0.4.11"; } ;;
    stop)
      kill -STOP "$(pid_of n1)"; t0=$(now_ms)
      wait_for 30 "n2 serving v0 while n1 is stopped" cluster_line n2 "^    volume v0 .*served here"
      wait_for 10 "n2's probe refusing 10.0.4.11 (h1 still answers for it)" \
        grep -q "10.0.4.11 is already in use on fe0's segment by $mac1" "$dir/n2/data/nasd.log"
      ! has_address h2 10.0.4.11 || fail "n2 took 10.0.4.11 while h1 still answers for it"
      echo "stop: n2 serves v0 $(( $(now_ms) - t0 )) ms after SIGSTOP; 10.0.4.11 refused while h1 answers for it"
      kill -CONT "$(pid_of n1)" ;;
    partition) nh_link h1 fe0 down; nh_link h1 be0 down; t0=$(now_ms) ;;
  esac
  wait_for 30 "n2 serving evs1 on its fe0" on_interface_here n2 evs1
  has_address h2 10.0.4.11 || fail "10.0.4.11 is not on h2's fe0"
  wait_for 10 "the client's neighbour entry for 10.0.4.11 moving to h2 ($mac2)" neigh_is 10.0.4.11 "$mac2"
  moved=$(now_ms)
  wait_for 30 "evs1 answering NFS at the client from h2" reaches 10.0.4.11 v0
  answers=$(arp_answers 10.0.4.11)
  [[ $answers == "$mac2" ]] || fail "arping 10.0.4.11 from the client: answered by '$answers', expected $mac2 only"
  echo "$how: 10.0.4.11 on h2 ($mac2) in the client's neighbour table $((moved - t0)) ms after the fault; arping sees $answers"
  if [[ $how != stop ]]; then
    wait_for 30 "pool address 10.0.4.21 on h2's fe0" pool_here n2 10.0.4.21
    wait_for 10 "the client's neighbour entry for 10.0.4.21 moving to h2" neigh_is 10.0.4.21 "$mac2"
    wait_for 30 "10.0.4.21 answering NFS at the client from h2" reaches 10.0.4.21 v1
  fi
  on_client nfs-cp "$(url 10.0.4.11 v0/before-the-crash)" "$dir/back-$how" >/dev/null || fail "reading the file back through 10.0.4.11"
  cmp -s "$dir/payload" "$dir/back-$how" || fail "the file written before the fault differs after the takeover"

  case $how in
    host)
      has_address h1 10.0.4.11 || fail "the crashed run's 10.0.4.11 is not on h1's fe0 (nothing to clean up?)"
      start_node n1
      ! has_address h1 10.0.4.11 || fail "10.0.4.11 is on h1's fe0 after n1's restart"
      grep -q "left by an earlier run, removed: 10.0.4.11/24 on fe0" "$dir/n1/data/nasd.log" ||
        fail "n1 did not log the removal of its crashed run's address"
      nh_link h1 fe0 up ;;
    process) start_node n1 ;;
    stop) ! has_address h1 10.0.4.11 || fail "10.0.4.11 is still on h1's fe0 after n1 woke" ;;
    partition)
      wait_for 30 "n1 letting 10.0.4.11 go behind the partition" eval "! has_address h1 10.0.4.11"
      nh_link h1 fe0 up; nh_link h1 be0 up ;;
  esac
  wait_for 30 "n1 hearing n2" cluster_line n1 "^member n2: up"
  admin_on n1 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
  wait_for 40 "evs1 back on h1's fe0" on_interface_here n1 evs1
  cluster_line n2 "^  evs evs1 .*: not here" || fail "n2 still serves evs1 after the failback"
  ! has_address h2 10.0.4.11 || fail "10.0.4.11 is still on h2's fe0 after the failback"
  wait_for 10 "the client's neighbour entry for 10.0.4.11 back at h1 ($mac1)" neigh_is 10.0.4.11 "$mac1"
  wait_for 30 "evs1 answering NFS at the client from h1 again" reaches 10.0.4.11 v0
  wait_for 60 "n1's journal mirrored to n2 again" mirrored n1
  # The pool address goes home by itself once n1 is back (no failback needed).
  wait_for 30 "pool address 10.0.4.21 back on h1's fe0" pool_here n1 10.0.4.21
  ! has_address h2 10.0.4.21 || fail "10.0.4.21 is still on h2's fe0 after n1 took it back"
  wait_for 10 "the client's neighbour entry for 10.0.4.21 back at h1" neigh_is 10.0.4.21 "$mac1"
  echo "$how: failback put 10.0.4.11 back on h1, the client's neighbour entry at $mac1"
}
# The file authority's leases live in the SAN folder, which a network partition does not cut:
# a partitioned n1 keeps its lease there, so only the etcd authority is partitioned.
default_faults="host process stop"
[[ $authority != etcd ]] || default_faults="host partition"
for how in ${FAULTS:-$default_faults}; do fault_and_back "$how"; done

touch "$dir/end-load"
wait "$client_pid" || { cat "$dir/client-evs1.out"; fail "the client did not verify"; }
cat "$dir/client-evs1.out"
grep -q "^verify=OK" "$dir/client-evs1.report" || fail "client: verify"
[[ $(sed -n 's/^retried=//p' "$dir/client-evs1.report") -ge 1 ]] || fail "the client never retried: was the crash under it?"

"$root/deploy/stop-node.sh" "$dir/n1/data" >/dev/null & "$root/deploy/stop-node.sh" "$dir/n2/data" >/dev/null & wait
for i in 1 2; do grep -q "stopped cleanly" "$dir/n$i/data/nasd.log" || fail "n$i did not stop cleanly"; done
for h in h1 h2; do
  for a in 10.0.4.11 10.0.4.12 10.0.4.21 10.0.4.22; do
    ! has_address $h $a || fail "$a is still on $h's fe0 after the stop"
  done
done
for v in 0 1; do "$fsck" "$dir/san/v$v.lfs" >"$dir/fsck-v$v.log" 2>&1 || { cat "$dir/fsck-v$v.log"; fail "fsck of v$v"; }; done
echo "PASS: evs1's address moved h1 -> h2 -> h1 with gratuitous ARP, the client's neighbour table followed, nothing acknowledged lost"
