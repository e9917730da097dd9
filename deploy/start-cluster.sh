#!/usr/bin/env bash
# Starts a two-node nasd cluster on this machine: node a owns volume v0, node b owns v1, and
# either node serves both (forwarding over the interconnect) under the one name space /r.
# Configs and data go to ./data/cluster/{a,b} (override with CLUSTER_DIR); stop it with
# deploy/stop-cluster.sh. Failover between the nodes is not wired yet (cluster/README.md).
#   node a: NFS 127.0.0.1:2049, MOUNT 20048, interconnect 7001
#   node b: NFS 127.0.0.1:2149, MOUNT 20148, interconnect 7002
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
mkdir -p "$DIR/a" "$DIR/b"

# write_config NODE NFS_PORT MOUNT_PORT IC_PORT PEER PEER_IC_PORT PEER_VOLUME
write_config() {
  cat > "$DIR/$1/nasd.conf" <<CONF
# Written by deploy/start-cluster.sh: node $1 of the two-node cluster "lab".
[node]
name = $1
data_dir = data
listen = 127.0.0.1
nfs_port = $2
mount_port = $3
handle_key = ../handle.key        # shared by both nodes: a handle from one works on the other

[nvram]
size = 512M

[cluster]
name = lab
interconnect = 127.0.0.1:$4

[peer $5]
interconnect = 127.0.0.1:$6
volumes = $7

[volume v0]
id = 0
size = 4G

[volume v1]
id = 1
size = 4G

[export /r/v0]
volume = v0
clients = 127.0.0.0/8
access = rw
squash = none

[export /r/v1]
volume = v1
clients = 127.0.0.0/8
access = rw
squash = none
CONF
}
write_config a 2049 20048 7001 b 7002 v1
write_config b 2149 20148 7002 a 7001 v0
for n in a b; do "$ROOT/deploy/start-node.sh" "$DIR/$n/nasd.conf"; done
# Each node reaches the other's volume once its interconnect link is up (reconnects back off).
for probe in "2049 20048 v1" "2149 20148 v0"; do
  set -- $probe
  for _ in $(seq 100); do
    nfs-ls "nfs://127.0.0.1/r/$3?nfsport=$1&mountport=$2&version=3" >/dev/null 2>&1 && continue 2
    sleep 0.1
  done
  echo "the node on port $1 cannot reach volume $3 over the interconnect; see its log" >&2; exit 1
done
echo "cluster up: try  nfs-ls -R 'nfs://127.0.0.1/r?nfsport=2149&mountport=20148&version=3'"
