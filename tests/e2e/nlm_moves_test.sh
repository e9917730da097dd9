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
bin=$2
source "$(dirname "$0")/nlm_cluster_lib.sh"
nlm_cluster_setup moves "$@"
admin=$BUILD_DIR/server/admin/nasd-admin
[[ -x $admin ]] || { echo "SKIP: no nasd-admin at $admin"; exit 77; }
export LEASE_MS=3000 NLM_GRACE_MS=12000
export VOLUME_SIZE=256M SEGMENT_SIZE=1M NVRAM_SIZE=64M EXPORT_OPTIONS=rw,insecure,no_root_squash
nlm_cluster_start --nodes 3 --volumes-per-node 1
if ! NASD_NLM_CLUSTER_DIR=$dir NASD_ADMIN=$admin "$bin" --gtest_filter='NlmClusterTest.*'; then
  for n in n1 n2 n3; do echo "--- node $n log"; grep -E 'nlm|evs|volume v0' "$dir/$n/data/nasd.log" | tail -30 || true; done
  exit 1
fi
for n in n1 n2 n3; do grep -h '\[nlm\]' "$dir/$n/data/nasd.log" || true; done
