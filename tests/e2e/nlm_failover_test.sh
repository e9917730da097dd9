#!/usr/bin/env bash
# NLM across a failover: an HA pair from deploy/start-cluster.sh (lease 3 s, grace 6 s) in a
# private namespace; a lock on v0 taken at node a is reclaimed at node b after a kill -9 of a,
# in v0's own grace period (the e2e_nlm_test case NlmPairTest does the client side).
#   nlm_failover_test.sh NASD_BINARY E2E_NLM_TEST_BINARY   (exit 77 = skipped)
set -euo pipefail
bin=$2
source "$(dirname "$0")/nlm_cluster_lib.sh"
nlm_cluster_setup failover "$@"
export LEASE_MS=3000 NLM_GRACE_MS=6000 EXPORT_OPTIONS=rw,insecure,no_root_squash
nlm_cluster_start
if ! NASD_NLM_PAIR_DIR=$dir "$bin" --gtest_filter='NlmPairTest.*'; then
  for n in a b; do echo "--- node $n log"; tail -40 "$dir/$n/data/nasd.log" || true; done
  exit 1
fi
