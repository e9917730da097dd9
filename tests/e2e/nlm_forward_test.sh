#!/usr/bin/env bash
# NLM through any node: the HA pair from deploy/start-cluster.sh (lease 3 s, grace 6 s) in a
# private namespace with its own rpcbind, where the test plays the clients' lockd and statd. The
# case NlmForwardTest in e2e_nlm_test locks v0 at its owner a and through b (which forwards NLM
# to a), gets a GRANTED callback for a lock blocked through b, kill -9's a and reclaims at b.
#   nlm_forward_test.sh NASD_BINARY E2E_NLM_TEST_BINARY   (exit 77 = skipped)
set -euo pipefail
bin=$2
source "$(dirname "$0")/nlm_cluster_lib.sh"
nlm_cluster_setup forward "$@"
export LEASE_MS=3000 NLM_GRACE_MS=6000 EXPORT_OPTIONS=rw,insecure,no_root_squash
nlm_cluster_start
if ! NASD_NLM_PAIR_DIR=$dir "$bin" --gtest_filter='NlmForwardTest.*'; then
  for n in a b; do echo "--- node $n log"; tail -40 "$dir/$n/data/nasd.log" || true; done
  exit 1
fi
for n in a b; do grep -h '\[nlm\]' "$dir/$n/data/nasd.log" || true; done
