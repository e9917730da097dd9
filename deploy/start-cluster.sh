#!/usr/bin/env bash
# Starts a nasd cluster on this machine.
#
# Without --nodes: a two-node HA pair in which node a serves volume v0 and node b serves v1,
# either node serves both (forwarding over the interconnect) under the one name space /r, and
# each takes the other's volumes and address over when it dies.
#   deploy/start-cluster.sh [--no-failover]     (--no-failover: static ownership, no HA)
#   PAIR_VOLUME_SIZE (default 4G) sizes v0 and v1 (the full-volume test uses the drill's 256M).
#
# With --nodes N (2 to 8): N nodes from one cluster config ($CLUSTER_DIR/cluster.conf), node i
# (n1..nN) on its own loopback address 127.0.1.i with the standard ports on each (NFS 2049,
# MOUNT 20048, interconnect 7001, mirror 7101, http 8049), owning V volumes (default 4) served
# by its virtual server evs<i> on 127.0.2.i (NFS 2049, MOUNT 20048). Each node's NVRAM is
# mirrored to the next (a ring); when a node dies, the next one replays its copy and takes its
# volumes and its EVS address over.
#   deploy/start-cluster.sh --nodes N [--volumes-per-node V] [--authority file|etcd] [--standby]
#                           [--no-failover]
#   --standby: one more node n<N+1> on 127.0.1.<N+1> serves nothing and holds the mirror of
#              every primary (N+1, as a Celerra standby data mover); it takes over any of them.
#   --scale-out: one more volume, ifs (/r/ifs), striped with N+M erasure coding (+2d:1n: 6+2/2
#              on 4 nodes) over drives of every node (<node data_dir>/ifs-1000/drive-<i>.units,
#              IFS_DRIVES per node, default 4), served by every node; evs1's node coordinates
#              it, n2 (its NVRAM mirror) takes it over (cluster/scaleout/README.md).
#   --add-node: one more node joins the running --scale-out cluster in $CLUSTER_DIR as a storage
#              node (its drives join /r/ifs, the rebalance job moves units onto them):
#              deploy/add-node.sh, which says how.
#   --authority etcd: leases in an etcd that deploy/start-etcd.sh starts in $CLUSTER_DIR/etcd
#              (ETCD_MEMBERS=3 for three members) instead of lease files in the shared folder.
# VOLUME_SIZE (default 1G; the backing files are allocated in full), SEGMENT_SIZE, NVRAM_SIZE
# (default 256M), LEASE_MS, NLM_GRACE_MS, EXPORT_OPTIONS and FORWARD_SLOTS apply as for the pair.
#
# Every run writes $CLUSTER_DIR/cluster.nodes: one line per node, key=value pairs (name,
# address, nfs_port, mount_port, interconnect, mirror, http, admin, pid, config, data_dir,
# volumes, evs, evs_address, role), for tools such as a fault drill.
# Configs and node data go to ./data/cluster/{a,b}, the shared folder that stands for the SAN
# (backing files of both volumes, lease files) to ./data/cluster/san; override with CLUSTER_DIR.
# Stop it with deploy/stop-cluster.sh. $CLUSTER_DIR/cluster.nodes describes the nodes (for
# nasd-drill, the fault drill).
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
NODES=0 PER_NODE=4 AUTHORITY=file STANDBY=0 SCALE_OUT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-failover) FAILOVER=0 ;;
    --nodes) NODES="${2:?--nodes needs a count}"; shift ;;
    --volumes-per-node) PER_NODE="${2:?--volumes-per-node needs a count}"; shift ;;
    --authority) AUTHORITY="${2:?--authority needs file or etcd}"; shift ;;
    --standby) STANDBY=1 ;;
    --scale-out) SCALE_OUT=1 ;;
    --add-node) [ $# = 1 ] || { echo "--add-node takes no other option" >&2; exit 2; }
                exec "$ROOT/deploy/add-node.sh" ;;
    *) echo "usage: $0 [--no-failover] [--nodes N [--volumes-per-node V] [--authority file|etcd] [--standby] [--scale-out]] | --add-node" >&2; exit 2 ;;
  esac
  shift
done
if [ "$NODES" != 0 ]; then
  exec "$ROOT/deploy/start-n-node-cluster.sh" "$NODES" "$PER_NODE" "$AUTHORITY" "$STANDBY" "$FAILOVER" "$SCALE_OUT"
fi
[ "$SCALE_OUT" = 0 ] || { echo "--scale-out needs --nodes N" >&2; exit 2; }
[ "$AUTHORITY" = file ] && [ "$STANDBY" = 0 ] || { echo "--authority and --standby need --nodes N" >&2; exit 2; }
mkdir -p "$DIR/a" "$DIR/b" "$DIR/san"
chmod 700 "$DIR/a" "$DIR/b" "$DIR/san"   # NVRAM images, backing files, keys: the nodes' user only
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
key = $DIR/cluster.key            # shared by both nodes: every interconnect and mirror link proves it
forward_slots = ${FORWARD_SLOTS:-256}   # forwarded calls in flight to one owner at once; more get JUKEBOX
$ha_cluster

[peer $6]
interconnect = 127.0.0.1:$9
volumes = ${11}
$ha_peer

[volume v0]
id = 0
size = ${PAIR_VOLUME_SIZE:-4G}

[volume v1]
id = 1
size = ${PAIR_VOLUME_SIZE:-4G}

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
# The cluster key authenticates the interconnect, the heartbeats and the NVRAM mirror. Made
# once, readable by the nodes' user only; on separate machines copy the same file to each node
# (like the handle key), never over an untrusted channel.
if [ ! -s "$DIR/cluster.key" ]; then
  (umask 077 && head -c 32 /dev/urandom > "$DIR/cluster.key.tmp" && mv "$DIR/cluster.key.tmp" "$DIR/cluster.key")
fi
write_config a 2049 20048 7001 7101 b 2149 20148 7002 7102 v1 8049
write_config b 2149 20148 7002 7102 a 2049 20048 7001 7101 v0 8149
# The cluster description that tools like bench/drill (nasd-drill) read: one line per node,
# space-separated key=value (the same format deploy/start-cluster.sh --nodes N writes).
# write_node_line NODE NFS MOUNT IC MIRROR HTTP VOLUMES
write_node_line() {
  echo "name=$1 address=127.0.0.1 nfs_port=$2 mount_port=$3 interconnect=127.0.0.1:$4" \
       "mirror=127.0.0.1:$5 http=127.0.0.1:$6 admin=$DIR/$1/data/nasd.sock" \
       "pid=$DIR/$1/data/nasd.pid config=$DIR/$1/nasd.conf data_dir=$DIR/$1/data volumes=$7 evs="
}
{
  write_node_line a 2049 20048 7001 7101 8049 v0
  write_node_line b 2149 20148 7002 7102 8149 v1
} > "$DIR/cluster.nodes.tmp" && mv "$DIR/cluster.nodes.tmp" "$DIR/cluster.nodes"
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
# What a tool (the fault drill) needs to know of each node.
{
  for n in "a 2049 20048 7001 7101 8049 v0" "b 2149 20148 7002 7102 8149 v1"; do
    set -- $n
    echo "name=$1 address=127.0.0.1 nfs_port=$2 mount_port=$3 interconnect=127.0.0.1:$4" \
         "mirror=127.0.0.1:$5 http=127.0.0.1:$6 admin=$DIR/$1/data/nasd.sock pid=$DIR/$1/data/nasd.pid" \
         "config=$DIR/$1/nasd.conf data_dir=$DIR/$1/data volumes=$7 evs=$1 evs_address=127.0.0.1:$2 role=primary"
  done
} > "$DIR/cluster.nodes.tmp" && mv "$DIR/cluster.nodes.tmp" "$DIR/cluster.nodes"
echo "cluster up: try  nfs-ls -R 'nfs://127.0.0.1/r?nfsport=2149&mountport=20148&version=3'"
[ "$FAILOVER" = 1 ] && echo "state:   ${BUILD_DIR:-$ROOT/build}/server/admin/nasd-admin --socket $DIR/a/data/nasd.sock cluster"
echo "pages:   http://127.0.0.1:8049/ (a), http://127.0.0.1:8149/ (b); metrics at /metrics"
exit 0
