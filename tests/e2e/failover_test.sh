#!/usr/bin/env bash
# Failover of an HA pair under load: four clients (through node a into v0 and v1, through node b
# into v0 and v1) run nasd-ha-load, node a is killed with kill -9, node b fences it, replays its
# mirrored NVRAM and serves a's volume and a's address; node a is started again and takes its
# volume back with `nasd-admin failback`. Every client must ride it out with the same handles
# and find, at the end, everything it was told had happened and nothing else; both volumes
# must then pass fsck. The pair is the user's own (deploy/start-cluster.sh). Runs in a private
# network namespace.
#   failover_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD   (exit 77 = skipped)
# LOAD_SECONDS (default 25) is how long each client runs; the kill comes after KILL_AFTER (4).
set -euo pipefail
nasd=$1
fsck=$2
ha_load=$3
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/nasd-failover-test.XXXXXX)
BUILD_DIR=$(dirname "$(dirname "$nasd")")
export CLUSTER_DIR="$dir" BUILD_DIR
admin=$BUILD_DIR/server/admin/nasd-admin
load_seconds=${LOAD_SECONDS:-25}
kill_after=${KILL_AFTER:-4}
clients=()
cleanup() {
  for pid in "${clients[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for n in a b; do echo "--- node $n log"; tail -30 "$dir/$n/data/nasd.log" || true; done
  for f in "$dir"/client-*.out; do [[ -f $f ]] && { echo "--- $(basename "$f")"; cat "$f"; }; done
  exit 1
}
[[ -x $BUILD_DIR/cluster/nasd && -x $admin ]] || { echo "SKIP: $nasd is not inside a build folder"; exit 77; }
[[ -x $ha_load ]] || { echo "SKIP: no nasd-ha-load at $ha_load"; exit 77; }
now_ms() { date +%s%3N; }
# cluster_line NODE PATTERN: true when `nasd-admin cluster` on NODE has a line matching PATTERN.
cluster_line() { "$admin" --socket "$dir/$1/data/nasd.sock" cluster 2>/dev/null | grep -qE "$2"; }
# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s, fails the test at the deadline.
wait_for() {
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 10))); do "$@" && return 0; sleep 0.1; done
  fail "$what not within $limit s"
}

# Node a: NFS 2049, MOUNT 20048, home of v0; node b: 2149/20148, home of v1 (start-cluster.sh).
"$root/deploy/start-cluster.sh" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; fail "start-cluster.sh"; }
cluster_line a "^virtual server a .*: served here" || fail "node a does not serve its own address"

# client NAME NFS_PORT MOUNT_PORT VOLUME VERIFY_NFS_PORT VERIFY_MOUNT_PORT: one nasd-ha-load in
# the background. Two of them read back through the other node: a handle from one node must
# work on the other.
client() {
  "$ha_load" --nfs-port "$2" --mount-port "$3" --export "/r/$4" --dir "$1" \
    --verify-nfs-port "$5" --verify-mount-port "$6" \
    --seconds "$load_seconds" --call-timeout-ms 5000 --retry-budget-s 60 \
    --report "$dir/client-$1.report" >"$dir/client-$1.out" 2>&1 &
  clients+=($!)
}
client a-v0 2049 20048 v0 2049 20048
client a-v1 2049 20048 v1 2149 20148
client b-v0 2149 20148 v0 2049 20048
client b-v1 2149 20148 v1 2149 20148
started=$(now_ms)
sleep "$kill_after"
for pid in "${clients[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a client ended before the kill"; done

# The crash. Node b must fence a, take v0 and answer on a's address.
kill -9 "$(cat "$dir/a/data/nasd.pid")"
killed=$(now_ms)
wait_for 30 "node b serving a's address" cluster_line b "^virtual server a .*: served here"
v0_on_a_ports() { nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1; }
wait_for 30 "v0 answering on a's ports" v0_on_a_ports
taken_over=$(now_ms)
echo "takeover: node b answers for v0 on a's ports $((taken_over - killed)) ms after the kill"

# Node a comes back as a standby (b keeps its address), then takes its volume back.
"$root/deploy/start-node.sh" "$dir/a/nasd.conf" >"$dir/restart-a.log" 2>&1 ||
  { cat "$dir/restart-a.log"; fail "restart of node a"; }
"$admin" --socket "$dir/a/data/nasd.sock" failback >"$dir/failback.log" 2>&1 ||
  { cat "$dir/failback.log"; fail "nasd-admin failback"; }
asked=$(now_ms)
wait_for 30 "node a serving its own address again" cluster_line a "^virtual server a .*: served here"
wait_for 30 "node a routing v0 to itself" cluster_line a "^volume v0 .*routed to here"
cluster_line b "^virtual server a .*: not here" || fail "node b still serves a's address after failback"
back=$(now_ms)
echo "failback: node a serves v0 again $((back - asked)) ms after nasd-admin failback"
(( (back - started) / 1000 + 5 < load_seconds )) ||
  echo "warning: failback ended near the end of the load (LOAD_SECONDS=$load_seconds)"

# Every client rides it out and verifies (each bounded by its own duration and retry budget).
status=0
for i in "${!clients[@]}"; do wait "${clients[$i]}" || status=1; done
clients=()
for f in "$dir"/client-*.out; do cat "$f"; done
[[ $status == 0 ]] || fail "a client did not verify"
# The clients of node a lost their connections with it: they must have retried, and resumed.
for c in a-v0 a-v1; do
  r=$dir/client-$c.report
  grep -qx 'verify=OK' "$r" || fail "client $c: verify"
  [[ $(sed -n 's/^retried=//p' "$r") -ge 1 ]] || fail "client $c never retried: was node a killed under it?"
  [[ $(sed -n 's/^acknowledged_since_retry=//p' "$r") -ge 1 ]] || fail "client $c did not resume"
done

"$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
for n in a b; do grep -q "stopped cleanly" "$dir/$n/data/nasd.log" || fail "node $n did not stop cleanly"; done
for v in v0 v1; do "$fsck" "$dir/san/$v.lfs" >"$dir/fsck-$v.log" 2>&1 || { cat "$dir/fsck-$v.log"; fail "fsck of $v"; }; done
echo "PASS: four clients rode out kill -9 of node a, takeover by b and failback, nothing acknowledged lost"
