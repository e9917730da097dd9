#!/usr/bin/env bash
# deploy/make-cluster.sh on three namespaced hosts (netns_hosts_lib.sh), run as systemd would run
# its units: generate from a short description (3 hosts, an EVS each on fe0, a pool, etcd on the
# back end), check each unit (systemd-analyze verify), then start each node with exactly the
# unit's ExecStart, User and capabilities (setpriv: an unprivileged user holding only
# CAP_NET_ADMIN and CAP_NET_RAW, nothing else in its bounding set), so that what the unit grants
# is proven enough. Drill: a client host writes through evs1's address, n1's nasd is killed with
# -9 and the unit's ExecStopPost runs (as systemd does after any end), n2 takes evs1's volumes and
# puts 10.0.4.11 on its fe0 with gratuitous ARP (the client's neighbour entry follows), the file
# reads back; n1 is started again (Restart=always), fails back. Stop: KillSignal, ExecStopPost,
# no address left, fsck.
#   netns_deploy_test.sh NASD_BINARY NASD_FSCK   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(dirname "$(dirname "$nasd")")
admin=$BUILD_DIR/server/admin/nasd-admin
[[ -x $nasd && -x $admin ]] || { echo "SKIP: $nasd is not inside a build folder"; exit 77; }
[[ $(id -u) == 0 ]] && ip netns list >/dev/null 2>&1 || { echo "SKIP: needs root for network namespaces"; exit 77; }
for tool in etcd setpriv arping; do command -v $tool >/dev/null || { echo "SKIP: no $tool"; exit 77; }; done
source "$(dirname "$0")/netns_hosts_lib.sh"
dir=$NH_DIR
nh_build 3
nh_etcd || { echo "FAIL: etcd on the back end did not start"; exit 1; }
nodes=(n1 n2 n3)
data_of() { echo "$dir/var/$1"; }
log_of() { echo "$dir/$1.out"; }  # what systemd would send to the journal
source "$(dirname "$0")/netns_cluster_lib.sh"
# The unit runs as nobody; every folder on the way to its files must let it through.
chmod 755 "$dir"

# The site's description: the hosts lib's addresses, its folders instead of /etc and /var/lib.
cat >"$dir/site.desc" <<DESC
[cluster]
name = hosts
authority = etcd
${NH_ETCD_LINE}
shared_dir = $dir/san
interface = fe0
prefix = 24
clients = 10.0.4.0/24
export_options = rw,insecure,no_root_squash
volume_size = 256M
lease_ms = 3000
pool = 10.0.4.21-10.0.4.23
data_dir = $dir/var/{host}
config_dir = $dir/etc/{host}
bin_dir = $BUILD_DIR/cluster
user = nobody
DESC
for i in 1 2 3; do
  printf '\n[host n%d]\nfront = 10.0.4.%d\nback = 10.0.5.%d\nevs = 10.0.4.1%d\nvolumes = v%d\n' \
    "$i" "$i" "$i" "$i" "$((i - 1))" >>"$dir/site.desc"
done
# (The description's host names are the nodes', n1..; they run on the hosts lib's h1.. .)
"$root/deploy/make-cluster.sh" "$dir/site.desc" "$dir/etc" || fail "make-cluster.sh"
for i in 1 2 3; do
  [[ -s $dir/etc/n$i/nasd.conf && -s $dir/etc/n$i/cluster.conf && -s $dir/etc/n$i/nasd.service ]] ||
    fail "make-cluster.sh wrote no config or unit for n$i"
  # The same on every host but for where its config_dir keeps the key (here one per host).
  diff <(sed "s|/etc/n$i/|/etc/n1/|" "$dir/etc/n$i/cluster.conf") "$dir/etc/n1/cluster.conf" >/dev/null ||
    fail "n$i's cluster.conf differs from n1's"
  if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify "$dir/etc/n$i/nasd.service" >"$dir/verify-n$i.log" 2>&1 ||
      { cat "$dir/verify-n$i.log"; fail "systemd-analyze verify of n$i's unit"; }
  fi
done
unit_value() { sed -n "s/^$2=//p" "$dir/etc/$1/nasd.service" | head -1; }
[[ $(unit_value n1 CapabilityBoundingSet) == "CAP_NET_ADMIN CAP_NET_RAW" ]] || fail "the unit's bounding set is not CAP_NET_ADMIN CAP_NET_RAW"
[[ $(unit_value n1 AmbientCapabilities) == "CAP_NET_ADMIN CAP_NET_RAW" ]] || fail "the unit's ambient capabilities are not CAP_NET_ADMIN CAP_NET_RAW"
# Installing: the folders belong to the unit's user, the keys are its only.
mkdir -p "$dir/san" "$dir/var/n1" "$dir/var/n2" "$dir/var/n3"
chown -R nobody:nogroup "$dir/san" "$dir/var" "$dir/etc"
chmod 700 "$dir/san" "$dir/var"/n* && chmod 600 "$dir"/etc/n*/*.key && chmod 711 "$dir/var"

# unit_run NODE KEY: runs the unit's KEY command line (ExecStart, ExecStopPost) on the node's
# host as systemd would: the unit's user, its ambient capabilities, its bounding set, no new
# privileges. ExecStart in the background (pid file as start-node.sh writes it).
caps() { unit_value "$1" "$2" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g'; }
unit_run() {
  local n=$1 key=$2 cmd
  read -r -a cmd <<<"$(unit_value "$n" "$key")"
  local as=(setpriv --reuid="$(unit_value "$n" User)" --regid=nogroup --clear-groups
            --inh-caps="-all,$(caps "$n" AmbientCapabilities)" --ambient-caps="-all,$(caps "$n" AmbientCapabilities)"
            --bounding-set="-all,$(caps "$n" CapabilityBoundingSet)" --no-new-privs --)
  if [[ $key == ExecStart ]]; then
    nh_spawn "h${n#n}" "$dir/$n.out" "${as[@]}" "${cmd[@]}"
    echo "$NH_PID" >"$dir/$n.pid"
  else
    nh_exec "h${n#n}" "${as[@]}" "${cmd[@]}"
  fi
}
pid_of() { cat "$dir/$1.pid"; }
# nh_spawn's pid is the host wrapper's; nasd itself is the process that holds the data folder.
nasd_pid() { pgrep -f "nasd --config $dir/etc/$1/nasd.conf\$" | head -1; }
for n in n1 n2 n3; do unit_run $n ExecStart; done
for n in n1 n2 n3; do wait_for 30 "$n's admin socket" cluster_line $n "^member $n: this node"; done
for i in 1 2 3; do wait_for 30 "evs$i on h$i's fe0" on_interface_here n$i evs$i; done
for i in 1 2 3; do wait_for 30 "pool address 10.0.4.2$i on h$i's fe0" pool_here n$i 10.0.4.2$i; done
caps_of_nasd=$(grep -E '^(CapEff|CapBnd|Uid)' "/proc/$(nasd_pid n1)/status" | tr -s '\t' ' ')
echo "n1's nasd: $caps_of_nasd"
[[ $caps_of_nasd == *"CapEff: 0000000000003000"* && $caps_of_nasd == *"CapBnd: 0000000000003000"* ]] ||
  fail "n1's nasd holds other capabilities than CAP_NET_ADMIN and CAP_NET_RAW"
wait_for 30 "evs1 answering NFS at the client" reaches 10.0.4.11 v0
wait_for 60 "n1's journal mirrored to n2" mirrored n1
mac1=$(nh_mac h1) mac2=$(nh_mac h2)
neigh_is 10.0.4.11 "$mac1" || fail "the client's neighbour entry for 10.0.4.11 is not h1's MAC"
head -c 300000 /dev/urandom >"$dir/payload" && chmod 644 "$dir/payload"
on_client nfs-cp "$dir/payload" "$(url 10.0.4.11 v0/drill)" >/dev/null || fail "nfs-cp to 10.0.4.11"

# The drill: kill -9, then what systemd does after any end of the process.
kill -9 "$(nasd_pid n1)"
killed=$(now_ms)
for _ in $(seq 50); do [[ -z $(nasd_pid n1) ]] && break; sleep 0.1; done
unit_run n1 ExecStopPost >"$dir/stop-hook.log" 2>&1 || { cat "$dir/stop-hook.log"; fail "n1's ExecStopPost"; }
grep -q "removed: 10.0.4.11/24 on fe0" "$dir/stop-hook.log" || { cat "$dir/stop-hook.log"; fail "ExecStopPost did not remove 10.0.4.11"; }
wait_for 30 "n2 serving evs1 on its fe0" on_interface_here n2 evs1
wait_for 10 "the client's neighbour entry for 10.0.4.11 moving to h2" neigh_is 10.0.4.11 "$mac2"
echo "drill: 10.0.4.11 on h2 in the client's neighbour table $(( $(now_ms) - killed )) ms after kill -9 of n1"
wait_for 30 "evs1 answering NFS from h2" reaches 10.0.4.11 v0
on_client nfs-cp "$(url 10.0.4.11 v0/drill)" "$dir/back" >/dev/null || fail "reading the file back through 10.0.4.11"
cmp -s "$dir/payload" "$dir/back" || fail "the file written before the kill differs after the takeover"
pool_on_survivor() { pool_here n2 10.0.4.21 || pool_here n3 10.0.4.21; }
wait_for 30 "n1's pool address 10.0.4.21 on a survivor" pool_on_survivor

unit_run n1 ExecStart   # Restart=always
wait_for 30 "n1 hearing n2" cluster_line n1 "^member n2: up"
admin_on n1 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 40 "evs1 back on h1's fe0" on_interface_here n1 evs1
wait_for 10 "the client's neighbour entry for 10.0.4.11 back at h1" neigh_is 10.0.4.11 "$mac1"
wait_for 30 "pool address 10.0.4.21 back on h1" pool_here n1 10.0.4.21

# Stop as systemd does: KillSignal (SIGTERM), wait, ExecStopPost.
for n in n1 n2 n3; do kill -TERM "$(nasd_pid $n)"; done
for n in n1 n2 n3; do
  for _ in $(seq 300); do [[ -z $(nasd_pid $n) ]] && break; sleep 0.1; done
  [[ -z $(nasd_pid $n) ]] || fail "$n did not stop within 30 s"
  unit_run $n ExecStopPost >/dev/null 2>&1 || fail "$n's ExecStopPost after a clean stop"
  grep -q "stopped cleanly" "$(log_of $n)" || fail "$n did not stop cleanly"
done
for i in 1 2 3; do
  for a in 10.0.4.11 10.0.4.12 10.0.4.13 10.0.4.21 10.0.4.22 10.0.4.23; do
    ! has_address h$i $a || fail "$a is still on h$i's fe0 after the stop"
  done
done
for v in 0 1 2; do "$fsck" "$dir/san/v$v.lfs" >"$dir/fsck-v$v.log" 2>&1 || { cat "$dir/fsck-v$v.log"; fail "fsck of v$v"; }; done
echo "PASS: 3 hosts from make-cluster.sh, run with the units' user and capabilities only; kill -9 drill, failback, clean stop"
