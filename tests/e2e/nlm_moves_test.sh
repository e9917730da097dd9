#!/usr/bin/env bash
# NLM locks in an N-node cluster whose virtual servers move: three nodes from
# deploy/start-cluster.sh --nodes 3 (evs<i> on 127.0.2.i, lease 3 s, NLM grace 12 s) in a private
# namespace with its own rpcbind, where the test plays the clients' lockd and statd. The case
# NlmClusterTest in e2e_nlm_test checks that GRANTED comes from the address the client called
# (n3's own, which forwards, or evs1's), locks v0 through evs1's address, moves evs1 to n2 (the lock
# table goes with v0: a conflicting lock is refused at once), kill -9's n2 (the node taking v0
# over begins its grace period and sends SM_NOTIFY; the client that reclaims keeps its lock).
#   nlm_moves_test.sh NASD_BINARY E2E_NLM_TEST_BINARY   (exit 77 = skipped)
set -euo pipefail
nasd=$1 bin=$2
command -v rpcbind >/dev/null || { echo "SKIP: rpcbind not installed"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
[[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] || { echo "SKIP: the cluster's fixed addresses need a private namespace"; exit 77; }
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=$(dirname "$(dirname "$nasd")")
admin=$BUILD_DIR/server/admin/nasd-admin
[[ -x $admin ]] || { echo "SKIP: no nasd-admin at $admin"; exit 77; }
dir=$(mktemp -d /tmp/nasd-nlm-moves.XXXXXX)
export CLUSTER_DIR=$dir BUILD_DIR LEASE_MS=3000 NLM_GRACE_MS=12000
export VOLUME_SIZE=256M SEGMENT_SIZE=1M NVRAM_SIZE=64M EXPORT_OPTIONS=rw,insecure,no_root_squash
rpcbind -f & rpcbind_pid=$!
cleanup() {
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  kill "$rpcbind_pid" 2>/dev/null || true
  wait "$rpcbind_pid" 2>/dev/null || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
"$root/deploy/start-cluster.sh" --nodes 3 --volumes-per-node 1 >"$dir/start.log" 2>&1 ||
  { cat "$dir/start.log"; exit 1; }
if ! NASD_NLM_CLUSTER_DIR=$dir NASD_ADMIN=$admin "$bin" --gtest_filter='NlmClusterTest.*'; then
  for n in n1 n2 n3; do echo "--- node $n log"; grep -E 'nlm|evs|volume v0' "$dir/$n/data/nasd.log" | tail -30 || true; done
  exit 1
fi
for n in n1 n2 n3; do grep -h '\[nlm\]' "$dir/$n/data/nasd.log" || true; done
