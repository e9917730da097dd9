# Sourced by the NLM tests that run a cluster (nlm_forward, nlm_failover, nlm_moves): the private
# network namespace (the cluster's addresses and ports are fixed), the test's own rpcbind (where
# the test registers the clients' lockd and statd for the server's callbacks), the cluster's
# directory, and the cleanup of all three at exit.
#   source "$(dirname "$0")/nlm_cluster_lib.sh"
#   nlm_cluster_setup NAME "$@"     # the script's arguments: NASD_BINARY E2E_NLM_TEST_BINARY
#   nlm_cluster_start [deploy/start-cluster.sh options]
# Sets root, dir, BUILD_DIR and CLUSTER_DIR; exits 77 (skipped) without rpcbind or a namespace.

nlm_cluster_setup() {
  local name=$1
  shift
  command -v rpcbind >/dev/null || { echo "SKIP: rpcbind not installed"; exit 77; }
  [[ ${NASD_IN_NETNS:-} == 1 ]] ||
    exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
  [[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] ||
    { echo "SKIP: the cluster's fixed addresses need a private namespace"; exit 77; }
  root=$(cd "$(dirname "$0")/../.." && pwd)
  BUILD_DIR=$(dirname "$(dirname "$1")")
  dir=$(mktemp -d "/tmp/nasd-nlm-$name.XXXXXX")
  export CLUSTER_DIR=$dir BUILD_DIR
  rpcbind -f &
  nlm_rpcbind_pid=$!
  trap nlm_cluster_cleanup EXIT
  for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
}

nlm_cluster_cleanup() {
  "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  kill "$nlm_rpcbind_pid" 2>/dev/null || true
  wait "$nlm_rpcbind_pid" 2>/dev/null || true
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$dir"
}

nlm_cluster_start() {
  "$root/deploy/start-cluster.sh" "$@" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; exit 1; }
}
