# shellcheck shell=bash
# What the N-node cluster tests share: a cluster as `deploy/start-cluster.sh --nodes N` starts
# it in a scratch folder (small volumes), its admin view, bounded waits, and the retrying,
# verifying nasd-ha-load clients. Source after setting nasd, fsck, ha_load and test_name.
#   node i: 127.0.1.i (NFS 2049, MOUNT 20048); its EVS evs<i>: 127.0.2.i, same ports.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d "/tmp/nasd-$test_name.XXXXXX")
BUILD_DIR=$(dirname "$(dirname "$nasd")")
export CLUSTER_DIR="$dir" BUILD_DIR
# Backing files are allocated in full: keep the 16 of them small.
export VOLUME_SIZE=${VOLUME_SIZE:-256M} SEGMENT_SIZE=${SEGMENT_SIZE:-1M} NVRAM_SIZE=${NVRAM_SIZE:-64M}
export LEASE_MS=${LEASE_MS:-3000} EXPORT_OPTIONS=rw,insecure,no_root_squash
admin=$BUILD_DIR/server/admin/nasd-admin
clients=()
n_cleanup() {
  for pid in "${clients[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap n_cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$dir"/n*/data/nasd.log; do echo "--- $log"; tail -25 "$log" || true; done
  for f in "$dir"/client-*.out; do [[ -f $f ]] && { echo "--- $(basename "$f")"; cat "$f"; }; done
  exit 1
}
[[ -x $BUILD_DIR/cluster/nasd && -x $admin ]] || { echo "SKIP: $nasd is not inside a build folder"; exit 77; }
[[ -x $ha_load ]] || { echo "SKIP: no nasd-ha-load at $ha_load"; exit 77; }

now_ms() { date +%s%3N; }
cluster_line() { "$admin" --socket "$dir/$1/data/nasd.sock" cluster 2>/dev/null | grep -qE "$2"; }
wait_for() {
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 10))); do "$@" && return 0; sleep 0.1; done
  fail "$what not within $limit s"
}
pid_of() { cat "$dir/$1/data/nasd.pid"; }
admin_on() { "$admin" --socket "$dir/$1/data/nasd.sock" "${@:2}"; }
url() { echo "nfs://$1/r/$2?nfsport=2049&mountport=20048&version=3"; }
reaches() { nfs-ls "$(url "$1" "$2")" >/dev/null 2>&1; }

start_nodes() {
  "$root/deploy/start-cluster.sh" "$@" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; fail "start-cluster.sh $*"; }
  cat "$dir/start.log"
}

# client NAME HOST VOLUME VERIFY_HOST SECONDS: one nasd-ha-load in the background.
# client NAME HOST VOLUME VERIFY_HOST SECONDS: a verifying load for at most SECONDS, or until
# end_load (then it verifies and reports; wait_clients collects the results).
client() {
  "$ha_load" --host "$2" --export "/r/$3" --dir "$1" --verify-host "$4" \
    --seconds "$5" --until-file "$dir/end-load" --call-timeout-ms 5000 --retry-budget-s 60 \
    --report "$dir/client-$1.report" >"$dir/client-$1.out" 2>&1 &
  clients+=($!)
}
end_load() { touch "$dir/end-load"; }
wait_clients() {
  local status=0 i f
  for i in "${!clients[@]}"; do wait "${clients[$i]}" || status=1; done
  clients=()
  for f in "$dir"/client-*.out; do cat "$f"; done
  [[ $status == 0 ]] || fail "a client did not verify"
}
report_value() { sed -n "s/^$2=//p" "$dir/client-$1.report"; }

# stop_and_check VOLUME_COUNT: every node stops cleanly and every volume passes fsck.
stop_and_check() {
  "$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
  local log v
  for log in "$dir"/n*/data/nasd.log; do grep -q "stopped cleanly" "$log" || fail "$log: did not stop cleanly"; done
  for v in $(seq 0 $(($1 - 1))); do
    "$fsck" "$dir/san/v$v.lfs" >"$dir/fsck-v$v.log" 2>&1 || { cat "$dir/fsck-v$v.log"; fail "fsck of v$v"; }
  done
}
