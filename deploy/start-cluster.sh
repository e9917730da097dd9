#!/usr/bin/env bash
# Starts a two-node nasd cluster on this machine: an HA pair in which node a serves volume v0
# and node b serves v1, either node serves both (forwarding over the interconnect) under the one
# name space /r, and each takes the other's volumes and address over when it dies.
#   deploy/start-cluster.sh [--no-failover]     (--no-failover: static ownership, no HA)
# Configs and node data go to ./data/cluster/{a,b}, the shared folder that stands for the SAN
# (backing files of both volumes, lease files) to ./data/cluster/san; override with CLUSTER_DIR.
# Stop it with deploy/stop-cluster.sh.
#   node a: NFS 127.0.0.1:2049, MOUNT 20048, interconnect 7001, mirror of b's NVRAM 7101,
#           metrics and management page http://127.0.0.1:8049/
#   node b: NFS 127.0.0.1:2149, MOUNT 20148, interconnect 7002, mirror of a's NVRAM 7102,
#           metrics and management page http://127.0.0.1:8149/
# EXPORT_OPTIONS (default rw,secure,root_squash) sets the knfsd-style options of both exports;
# tests whose clients send from unreserved ports or act as root pass rw,insecure,no_root_squash.
# LEASE_MS (default 4000) sets how long a dead node's volumes stay fenced before the survivor
# may take them: failover takes about that long. NLM_GRACE_MS (default 45000): the lock grace
# period after a start or a takeover.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
EXPORT_OPTIONS="${EXPORT_OPTIONS:-rw,secure,root_squash}"
FAILOVER=1
[ "${1:-}" = "--no-failover" ] && FAILOVER=0
mkdir -p "$DIR/a" "$DIR/b" "$DIR/san"
DIR="$(cd "$DIR" && pwd)"

# write_config NODE NFS MOUNT IC MIRROR PEER PEER_NFS PEER_MOUNT PEER_IC PEER_MIRROR PEER_VOLUME HTTP
write_config() {
  local ha_cluster="" ha_peer="" backing=""
  if [ "$FAILOVER" = 1 ]; then
    ha_cluster="shared_dir = ../san                # the \"SAN\": both volumes and the lease files
mirror_listen = 127.0.0.1:$5       # this node's copy of $6's NVRAM
failback = manual                  # nasd-admin failback, on the node that wants its volume back
lease_ms = ${LEASE_MS:-4000}"
    ha_peer="mirror = 127.0.0.1:${10}
listen = 127.0.0.1                 # $6's virtual server, served here after a takeover
nfs_port = $7
mount_port = $8"
  fi
  cat > "$DIR/$1/nasd.conf" <<CONF
# Written by deploy/start-cluster.sh: node $1 of the two-node cluster "lab".
[node]
name = $1
data_dir = data
listen = 127.0.0.1
nfs_port = $2
mount_port = $3
http_port = ${12}                  # metrics (/metrics) and the management page (/)
handle_key = $DIR/handle.key      # shared by both nodes: a handle from one works on the other

[nlm]
grace_ms = ${NLM_GRACE_MS:-45000}

[nvram]
size = 512M

[cluster]
name = lab
interconnect = 127.0.0.1:$4
$ha_cluster

[peer $6]
interconnect = 127.0.0.1:$9
volumes = ${11}
$ha_peer

[volume v0]
id = 0
size = 4G

[volume v1]
id = 1
size = 4G

[export /r/v0]
volume = v0
clients = 127.0.0.0/8
options = $EXPORT_OPTIONS

[export /r/v1]
volume = v1
clients = 127.0.0.0/8
options = $EXPORT_OPTIONS
CONF
}
write_config a 2049 20048 7001 7101 b 2149 20148 7002 7102 v1 8049
write_config b 2149 20148 7002 7102 a 2049 20048 7001 7101 v0 8149
# Both at once: a node that is alone for longer than its startup grace takes the other's
# volumes over.
for n in a b; do "$ROOT/deploy/start-node.sh" "$DIR/$n/nasd.conf" & done
for job in $(jobs -p); do wait "$job" || { echo "a node did not start; see its log" >&2; exit 1; }; done
# Each node reaches the other's volume once its interconnect link is up (reconnects back off)
# and, in a pair, once the other holds its lease.
for probe in "2049 20048 v1" "2149 20148 v0"; do
  set -- $probe
  for _ in $(seq 150); do
    nfs-ls "nfs://127.0.0.1/r/$3?nfsport=$1&mountport=$2&version=3" >/dev/null 2>&1 && continue 2
    sleep 0.1
  done
  echo "the node on port $1 cannot reach volume $3 over the interconnect; see its log" >&2; exit 1
done
echo "cluster up: try  nfs-ls -R 'nfs://127.0.0.1/r?nfsport=2149&mountport=20148&version=3'"
[ "$FAILOVER" = 1 ] && echo "state:   ${BUILD_DIR:-$ROOT/build}/server/admin/nasd-admin --socket $DIR/a/data/nasd.sock cluster"
echo "pages:   http://127.0.0.1:8049/ (a), http://127.0.0.1:8149/ (b); metrics at /metrics"
exit 0
