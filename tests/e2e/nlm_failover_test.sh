#!/usr/bin/env bash
# NLM across a failover: an HA pair from deploy/start-cluster.sh (lease 3 s, grace 6 s) in a
# private namespace; a lock on v0 taken at node a is reclaimed at node b after a kill -9 of a,
# in v0's own grace period (the e2e_nlm_test case NlmPairTest does the client side).
#   nlm_failover_test.sh NASD_BINARY E2E_NLM_TEST_BINARY   (exit 77 = skipped)
set -euo pipefail
nasd=$1 bin=$2
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
[[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] || { echo "SKIP: the pair's fixed ports need a private namespace"; exit 77; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/nasd-nlm-failover.XXXXXX)
export CLUSTER_DIR=$dir BUILD_DIR=$(dirname "$(dirname "$nasd")") LEASE_MS=3000 NLM_GRACE_MS=6000
cleanup() { "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true; [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"; }
trap cleanup EXIT
"$root/deploy/start-cluster.sh" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; exit 1; }
if ! NASD_NLM_PAIR_DIR=$dir "$bin" --gtest_filter='NlmPairTest.*'; then
  for n in a b; do echo "--- node $n log"; tail -40 "$dir/$n/data/nasd.log" || true; done
  exit 1
fi
