#!/usr/bin/env bash
# Adds a node to a running cluster started by `deploy/start-cluster.sh --nodes N --scale-out`,
# as a site grows a scale-out cluster: the new node n<K> (K = members + 1) on 127.0.1.<K> brings
# its own drives (<data_dir>/ifs-1000/drive-<i>.units, IFS_DRIVES, default 4) to /r/ifs and
# serves every path of the name space (forwarding to the owners, as every node does).
#   deploy/add-node.sh              (or: deploy/start-cluster.sh --add-node)
# What it does, in this order:
#   1. appends `[member n<K>] role = storage` to $CLUSTER_DIR/cluster.conf (written to a new
#      file, then renamed) and writes n<K>/nasd.conf;
#   2. tells every running node (`nasd-admin join`): each re-reads the cluster config, admits
#      the new node on its interconnect and adds its drives to the scale-out topology (a node
#      that is down reads the new config when it starts);
#   3. starts n<K> and waits until it serves /r/ifs.
# The coordinator of /r/ifs sees the new node in its topology and starts the rebalance job,
# which moves units onto the new node's drives while clients go on reading and writing;
# `nasd-admin --socket <coordinator>/nasd.sock protection ifs` shows its progress and the
# units per node. A storage node has no EVS and is in no NVRAM ring (it coordinates nothing,
# so it has no journal to mirror); cluster/README.md says why and what a full primary needs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
ADMIN="$BUILD_DIR/server/admin/nasd-admin"
[ $# = 0 ] || { echo "usage: $0   (CLUSTER_DIR: the cluster's folder, default data/cluster)" >&2; exit 2; }
[ -f "$DIR/cluster.conf" ] && [ -f "$DIR/cluster.nodes" ] ||
  { echo "no cluster in $DIR (start one with deploy/start-cluster.sh --nodes N --scale-out)" >&2; exit 2; }
DIR="$(cd "$DIR" && pwd)"
grep -q '^type = scaleout' "$DIR/cluster.conf" ||
  { echo "the cluster in $DIR has no scale-out volume: a storage node would hold nothing" >&2; exit 2; }
[ -x "$ADMIN" ] || { echo "no $ADMIN: build first (deploy/build.sh)" >&2; exit 1; }
MEMBERS=$(grep -c '^\[member ' "$DIR/cluster.conf")
K=$((MEMBERS + 1))
[ "$K" -le 8 ] || { echo "a cluster has at most 8 members; it has $MEMBERS" >&2; exit 2; }
NAME="n$K" ADDR="127.0.1.$K"
[ ! -e "$DIR/$NAME/nasd.conf" ] || { echo "$DIR/$NAME exists already" >&2; exit 2; }

# 1. The member (appended: a scale-out node id is the member's position) and its own config.
{
  cat "$DIR/cluster.conf"
  printf '\n# Added by deploy/add-node.sh: a storage node, joined to the running cluster.\n'
  printf '[member %s]\ninterconnect = %s:7001\nrole = storage\n' "$NAME" "$ADDR"
} >"$DIR/cluster.conf.tmp" && mv "$DIR/cluster.conf.tmp" "$DIR/cluster.conf"
mkdir -p "$DIR/$NAME" && chmod 700 "$DIR/$NAME"
# The same node keys as its peers' (start-n-node-cluster.sh wrote those).
sed -e "s/^name = n1$/name = $NAME/" -e "s/^listen = 127.0.1.1$/listen = $ADDR/" \
    -e "s/node n1;/node $NAME (storage, added);/" "$DIR/n1/nasd.conf" >"$DIR/$NAME/nasd.conf"
grep -q "^name = $NAME$" "$DIR/$NAME/nasd.conf" && grep -q "^listen = $ADDR$" "$DIR/$NAME/nasd.conf" ||
  { echo "could not derive $NAME's config from n1's" >&2; exit 1; }

# 2. Every running node takes it in.
while read -r line; do
  node=$(sed -n 's/.*name=\([^ ]*\).*/\1/p' <<<"$line")
  sock=$(sed -n 's/.*admin=\([^ ]*\).*/\1/p' <<<"$line")
  pidf=$(sed -n 's/.*pid=\([^ ]*\).*/\1/p' <<<"$line")
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    "$ADMIN" --socket "$sock" join || { echo "$node refused the join; see its log" >&2; exit 1; }
  else
    echo "$node is not running: it reads the new member from the config when it starts"
  fi
done <"$DIR/cluster.nodes"

# 3. The new node.
"$ROOT/deploy/start-node.sh" "$DIR/$NAME/nasd.conf" >/dev/null ||
  { echo "$NAME did not start; see $DIR/$NAME/data/nasd.log" >&2; exit 1; }
for _ in $(seq 300); do
  nfs-ls "nfs://$ADDR/r/ifs?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1 && break
  sleep 0.1
done
nfs-ls "nfs://$ADDR/r/ifs?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1 ||
  { echo "$ADDR cannot reach /r/ifs; see $DIR/$NAME/data/nasd.log" >&2; exit 1; }
echo "name=$NAME address=$ADDR nfs_port=2049 mount_port=20048 interconnect=$ADDR:7001" \
     "http=$ADDR:8049 admin=$DIR/$NAME/data/nasd.sock pid=$DIR/$NAME/data/nasd.pid" \
     "config=$DIR/$NAME/nasd.conf data_dir=$DIR/$NAME/data volumes= evs= evs_address= role=storage" \
     >>"$DIR/cluster.nodes"
echo "$NAME joined: NFS $ADDR:2049 MOUNT $ADDR:20048, its drives in $DIR/$NAME/data/ifs-1000"
echo "rebalance: $ADMIN --socket $DIR/n1/data/nasd.sock protection ifs   (on the coordinating node)"
