#!/usr/bin/env bash
# Runs the NLM/NSM end-to-end tests in a private network namespace with its own rpcbind, where
# the test plays the clients' lockd and statd (registered with that rpcbind) for the server's
# GRANTED and SM_NOTIFY callbacks.   nlm_test.sh E2E_NLM_TEST_BINARY   (exit 77 = skipped)
set -euo pipefail
bin=$1
command -v rpcbind >/dev/null || { echo "SKIP: rpcbind not installed"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
if [[ ${NASD_BENCH_IN_NETNS:-} != 1 ]]; then
  # No private namespace: the host's rpcbind must not be touched. The tests without callbacks
  # still run.
  unset NASD_IN_NETNS
  exec "$bin"
fi
rpcbind -f & rpcbind_pid=$!
trap 'kill $rpcbind_pid 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
# A client host whose portmapper swallows packets (AMsgFloodFromASilentHostDoesNotHoldUpGranted):
# 127.0.0.3, where anything sent to port 111 is dropped. Without nft that test is skipped.
if command -v nft >/dev/null &&
  nft add table ip nasd_silent 2>/dev/null &&
  nft add chain ip nasd_silent in '{ type filter hook input priority 0; }' &&
  nft add rule ip nasd_silent in ip daddr 127.0.0.3 udp dport 111 drop &&
  nft add rule ip nasd_silent in ip daddr 127.0.0.3 tcp dport 111 drop; then
  export NASD_NLM_SILENT_HOST=127.0.0.3
fi
"$bin"
