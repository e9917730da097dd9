#!/usr/bin/env bash
# NLM through any node: the HA pair from deploy/start-cluster.sh (lease 3 s, grace 6 s) in a
# private namespace with its own rpcbind, where the test plays the clients' lockd and statd. The
# case NlmForwardTest in e2e_nlm_test locks v0 at its owner a and through b (which forwards NLM
# to a), gets a GRANTED callback for a lock blocked through b, kill -9's a and reclaims at b.
#   nlm_forward_test.sh NASD_BINARY E2E_NLM_TEST_BINARY   (exit 77 = skipped)
set -euo pipefail
nasd=$1 bin=$2
command -v rpcbind >/dev/null || { echo "SKIP: rpcbind not installed"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
[[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] || { echo "SKIP: the pair's fixed ports need a private namespace"; exit 77; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/nasd-nlm-forward.XXXXXX)
export CLUSTER_DIR=$dir BUILD_DIR=$(dirname "$(dirname "$nasd")") LEASE_MS=3000 NLM_GRACE_MS=6000
rpcbind -f & rpcbind_pid=$!
cleanup() {
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  kill "$rpcbind_pid" 2>/dev/null || true
  wait "$rpcbind_pid" 2>/dev/null || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
EXPORT_OPTIONS=rw,insecure,no_root_squash "$root/deploy/start-cluster.sh" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; exit 1; }
if ! NASD_NLM_PAIR_DIR=$dir "$bin" --gtest_filter='NlmForwardTest.*'; then
  for n in a b; do echo "--- node $n log"; tail -40 "$dir/$n/data/nasd.log" || true; done
  exit 1
fi
for n in a b; do grep -h '\[nlm\]' "$dir/$n/data/nasd.log" || true; done
