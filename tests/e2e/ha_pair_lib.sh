# shellcheck shell=bash
# What the HA pair tests share: the pair as deploy/start-cluster.sh starts it in a scratch
# folder, its admin view, bounded waits, and the retrying, verifying nasd-ha-load clients.
# Source after setting: nasd, fsck, ha_load (binaries) and test_name; it sets dir, admin,
# BUILD_DIR, CLUSTER_DIR and the EXIT trap.
#   node a: NFS 2049, MOUNT 20048, home of v0; node b: 2149/20148, home of v1.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d "/tmp/nasd-$test_name.XXXXXX")
BUILD_DIR=$(dirname "$(dirname "$nasd")")
export CLUSTER_DIR="$dir" BUILD_DIR
admin=$BUILD_DIR/server/admin/nasd-admin
clients=()
ha_cleanup() {
  for pid in "${clients[@]}"; do kill "$pid" 2>/dev/null || true; done
  # `|| true`: a node killed -9 leaves its pid file, and under set -e a failed kill here would
  # end the cleanup before the cluster is stopped (its survivor kept the test's ports).
  for n in a b; do [[ -f $dir/$n/data/nasd.pid ]] && kill -CONT "$(cat "$dir/$n/data/nasd.pid")" 2>/dev/null || true; done
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap ha_cleanup EXIT
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
pid_of() { cat "$dir/$1/data/nasd.pid"; }
admin_on() { "$admin" --socket "$dir/$1/data/nasd.sock" "${@:2}"; }

start_pair() {
  EXPORT_OPTIONS=rw,insecure,no_root_squash "$root/deploy/start-cluster.sh" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; fail "start-cluster.sh"; }
  cluster_line a "^  evs a .*: served here" || fail "node a does not serve its own address"
  # Until a node's journal reaches its partner's mirror (the first connection copies the whole
  # region, seconds on a busy machine) it acknowledges from its own NVRAM only (DEGRADED,
  # mirror_policy = continue), and a kill -9 then loses what the tests expect the partner to replay.
  wait_for 60 "node a's journal mirrored to b" journal_mirrored a
  wait_for 60 "node b's journal mirrored to a" journal_mirrored b
}
journal_mirrored() {
  local out
  out=$(admin_on "$1" nvram 2>/dev/null) || return 1
  ! grep -q DEGRADED <<<"$out"
}

# client NAME NFS_PORT MOUNT_PORT VOLUME VERIFY_NFS_PORT VERIFY_MOUNT_PORT SECONDS: one
# nasd-ha-load in the background. Clients that verify through the other node check that a
# handle from one node works on the other.
client() {
  "$ha_load" --nfs-port "$2" --mount-port "$3" --export "/r/$4" --dir "$1" \
    --verify-nfs-port "$5" --verify-mount-port "$6" \
    --seconds "$7" --call-timeout-ms 5000 --retry-budget-s 60 \
    --report "$dir/client-$1.report" >"$dir/client-$1.out" 2>&1 &
  clients+=($!)
}
# four_clients SECONDS: through a into v0 and v1, through b into v0 and v1.
four_clients() {
  client a-v0 2049 20048 v0 2049 20048 "$1"
  client a-v1 2049 20048 v1 2149 20148 "$1"
  client b-v0 2149 20148 v0 2049 20048 "$1"
  client b-v1 2149 20148 v1 2149 20148 "$1"
}
# wait_clients: every client ends by itself (its duration and retry budget) and must verify.
wait_clients() {
  local status=0 i f
  for i in "${!clients[@]}"; do wait "${clients[$i]}" || status=1; done
  clients=()
  for f in "$dir"/client-*.out; do cat "$f"; done
  [[ $status == 0 ]] || fail "a client did not verify"
}
report_value() { sed -n "s/^$2=//p" "$dir/client-$1.report"; }

# stop_and_check: both nodes stop cleanly and both volumes pass fsck.
stop_and_check() {
  "$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
  local n v
  for n in a b; do grep -q "stopped cleanly" "$dir/$n/data/nasd.log" || fail "node $n did not stop cleanly"; done
  for v in v0 v1; do "$fsck" "$dir/san/$v.lfs" >"$dir/fsck-$v.log" 2>&1 || { cat "$dir/fsck-$v.log"; fail "fsck of $v"; }; done
}
