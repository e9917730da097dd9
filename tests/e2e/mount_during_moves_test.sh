#!/usr/bin/env bash
# What a client that mounts sees while a volume changes hands (issue 35). On the HA pair, new
# clients mount v0 over and over (nasd-mount-probe: MNT on a new connection, then FSINFO of the
# root it got) through both nodes while
#   1. node a is killed -9 and b takes v0 over after the lease (through b, which never opened v0
#      before); a restarts and takes v0 back (failback);
#   2. `nasd-admin failover` hands v0 from a to b, and `failback` takes it back (planned moves).
# Every MNT must answer MNT3_OK -- a MNT of a moving volume waits for its next owner instead of
# answering at once (MNT3ERR_SERVERFAULT when the node did not know the volume's root yet, on
# which a Linux mount gives up; a handle whose FSINFO then answered JUKEBOX otherwise) --, the
# FSINFO right after a MNT made during a move NFS3_OK, every other FSINFO NFS3_OK or
# NFS3ERR_JUKEBOX; and mounts must have been made while each move was under way.
#   mount_during_moves_test.sh NASD NASD_FSCK NASD_HA_LOAD NASD_MOUNT_PROBE   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 probe=$4 test_name=mount-moves
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
source "$(dirname "$0")/ha_pair_lib.sh"
[[ -x $probe ]] || { echo "SKIP: no nasd-mount-probe at $probe"; exit 77; }

declare -A probe_pid
# start_probe NAME NFS_PORT MOUNT_PORT VOLUME: new clients mount VOLUME through that node until
# $dir/stop-NAME appears.
start_probe() {
  "$probe" --nfs-port "$2" --mount-port "$3" --export "/r/$4" --log "$dir/probe-$1.log" \
    --stop-file "$dir/stop-$1" --seconds 150 >"$dir/probe-$1.out" 2>&1 &
  probe_pid[$1]=$!
  clients+=($!)
}
# end_probe NAME: stops it; fails the test when it saw an answer a moving volume must not give.
end_probe() {
  touch "$dir/stop-$1"
  local status=0
  wait "${probe_pid[$1]}" || status=$?
  sed "s/^/probe $1: /" "$dir/probe-$1.out"
  if [[ $status != 0 ]]; then
    grep -Ev " (MNT MNT3_OK|FSINFO NFS3_OK|FSINFO NFS3ERR_JUKEBOX)$" "$dir/probe-$1.log" | head -10 | sed "s/^/  /"
    fail "probe $1: a client mounting during a move got an error"
  fi
}
# mounts_within NAME FROM_MS TO_MS: MNTs of probe NAME that began inside the window (all of
# them answered MNT3_OK, or end_probe failed).
mounts_within() { awk -v from="$2" -v to="$3" '$3 == "MNT" && $1 >= from && $1 < to' "$dir/probe-$1.log" | wc -l; }
# unusable_mounts_within NAME FROM_MS TO_MS: of those MNTs, the ones whose FSINFO right after
# did not answer NFS3_OK. A MNT waits until the volume answers, so a client that mounted during a
# move can use the mount at once (before, MNT answered at once and FSINFO then JUKEBOX).
unusable_mounts_within() {
  awk -v from="$2" -v to="$3" '
    $3 == "MNT" { pending = ($1 >= from && $1 < to && $4 == "MNT3_OK"); next }
    $3 == "FSINFO" && pending && $4 != "NFS3_OK" { n++ }
    { pending = 0 }
    END { print n + 0 }' "$dir/probe-$1.log"
}
# longest_mount_within NAME FROM_MS TO_MS: the longest of those MNTs in ms.
longest_mount_within() {
  awk -v from="$2" -v to="$3" '$3 == "MNT" && $1 >= from && $1 < to && $2 > m { m = $2 } END { print m + 0 }' "$dir/probe-$1.log"
}
serves() { cluster_line "$1" "^    volume $2 .*served here"; }

start_pair
start_probe via-b 2149 20148 v0
sleep 1

# 1. Takeover: node a dies, b takes v0 after the lease. b has never opened v0: until it has, it
# does not even know v0's root (before, MNT answered MNT3ERR_SERVERFAULT here).
kill -9 "$(pid_of a)"
killed=$(now_ms)
wait_for 30 "node b serving v0 after node a died" serves b v0
taken=$(now_ms)
sleep 1
n=$(mounts_within via-b "$killed" "$taken")
echo "takeover: b serves v0 $(( taken - killed )) ms after the kill; $n mounts began meanwhile," \
  "the longest took $(longest_mount_within via-b "$killed" "$taken") ms"
(( n > 0 )) || fail "no mount began during the takeover"
bad=$(unusable_mounts_within via-b "$killed" "$taken")
(( bad == 0 )) || fail "$bad of $n mounts made during the takeover answered before v0 did (FSINFO not OK)"

# Node a comes back and takes v0 back (failback), mounted through both nodes meanwhile.
"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 ||
  { cat "$dir/restart-a.log"; fail "restart of node a"; }
start_probe via-a 2049 20048 v0
back=$(now_ms)
admin_on a failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback"; }
wait_for 30 "node a serving v0 again after failback" serves a v0
home=$(now_ms)
sleep 1

# 2. Planned failover and failback of v0.
moved=$(now_ms)
admin_on a failover >"$dir/failover.log" 2>&1 || { cat "$dir/failover.log"; fail "nasd-admin failover"; }
wait_for 30 "node b serving v0 after the planned failover" serves b v0
arrived=$(now_ms)
sleep 1
again=$(now_ms)
admin_on a failback >"$dir/failback2.log" 2>&1 || { cat "$dir/failback2.log"; fail "nasd-admin failback"; }
wait_for 30 "node a serving v0 again after the planned failback" serves a v0
returned=$(now_ms)
sleep 1
end_probe via-a
end_probe via-b
for window in "failback-after-restart $back $home" "failover $moved $arrived" "failback $again $returned"; do
  read -r what from to <<<"$window"
  n=$(( $(mounts_within via-a "$from" "$to") + $(mounts_within via-b "$from" "$to") ))
  echo "$what: v0 moved in $(( to - from )) ms; $n mounts began meanwhile, the longest took" \
    "$(longest_mount_within via-a "$from" "$to") ms via a, $(longest_mount_within via-b "$from" "$to") ms via b"
  (( n > 0 )) || fail "no mount began while v0 moved ($what)"
  bad=$(( $(unusable_mounts_within via-a "$from" "$to") + $(unusable_mounts_within via-b "$from" "$to") ))
  (( bad == 0 )) || fail "$bad of $n mounts made while v0 moved ($what) answered before v0 did (FSINFO not OK)"
done
echo "PASS: every mount during the takeover and the moves answered MNT3_OK, FSINFO only OK or JUKEBOX"
