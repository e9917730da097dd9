#!/usr/bin/env bash
# Called by deploy/start-cluster.sh --nodes N (see there): writes the one cluster config and
# each node's own config, starts the nodes, waits until every node reaches every volume, writes
# $CLUSTER_DIR/cluster.nodes and prints each node's NFS and MOUNT address:port.
#   start-n-node-cluster.sh NODES VOLUMES_PER_NODE AUTHORITY STANDBY FAILOVER [SCALE_OUT]
# POOL_ADDRESSES=K (failover clusters): a SmartConnect-style [pool clients] of K addresses
# 127.0.4.1..K spread over the primaries (address i on node (i-1) mod N + 1), moving to
# survivors when a node fails (cluster/pool_options.h).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
NODES="$1" PER_NODE="$2" AUTHORITY="$3" STANDBY="$4" FAILOVER="$5" SCALE_OUT="${6:-0}"
EXPORT_OPTIONS="${EXPORT_OPTIONS:-rw,secure,root_squash}"
case "$NODES" in [2-8]) ;; *) echo "--nodes: 2 to 8 nodes, not '$NODES'" >&2; exit 2 ;; esac
[ "$STANDBY" = 0 ] || [ "$NODES" -le 7 ] || { echo "--standby: at most 7 primaries (8 nodes)" >&2; exit 2; }
case "$PER_NODE" in [1-9]|1[0-6]) ;; *) echo "--volumes-per-node: 1 to 16, not '$PER_NODE'" >&2; exit 2 ;; esac
case "$AUTHORITY" in file|etcd) ;; *) echo "--authority: file or etcd, not '$AUTHORITY'" >&2; exit 2 ;; esac
[ "$STANDBY" = 0 ] || [ "$FAILOVER" = 1 ] || { echo "--standby needs failover (drop --no-failover)" >&2; exit 2; }
[ "$SCALE_OUT" = 0 ] || [ "$FAILOVER" = 1 ] || { echo "--scale-out needs failover (drop --no-failover)" >&2; exit 2; }
TOTAL=$((NODES + STANDBY))
mkdir -p "$DIR/san"
for i in $(seq 1 "$TOTAL"); do mkdir -p "$DIR/n$i"; chmod 700 "$DIR/n$i"; done
chmod 700 "$DIR/san"
DIR="$(cd "$DIR" && pwd)"
if [ ! -s "$DIR/cluster.key" ]; then
  (umask 077 && head -c 32 /dev/urandom > "$DIR/cluster.key.tmp" && mv "$DIR/cluster.key.tmp" "$DIR/cluster.key")
fi

ETCD_LINE="" ETCD_MEMBERS_KEY=""
if [ "$AUTHORITY" = etcd ]; then
  [ "$FAILOVER" = 1 ] || { echo "--authority etcd needs failover (drop --no-failover)" >&2; exit 2; }
  if [ ! -x "$ROOT/deploy/start-etcd.sh" ]; then
    echo "--authority etcd: deploy/start-etcd.sh is missing in this tree (the etcd authority is not" >&2
    echo "part of this build); use --authority file" >&2
    exit 2
  fi
  # One member (ETCD_MEMBERS=3 for three) in $CLUSTER_DIR/etcd; it prints the [cluster] line.
  "$ROOT/deploy/start-etcd.sh" --members "${ETCD_MEMBERS:-1}" --dir "$DIR/etcd" >"$DIR/etcd.out" 2>&1 ||
    { cat "$DIR/etcd.out" >&2; echo "deploy/start-etcd.sh failed" >&2; exit 1; }
  ETCD_LINE="$(grep -m1 '^ *etcd_endpoints *=' "$DIR/etcd.out" | sed 's/^ *//')" ||
    { cat "$DIR/etcd.out" >&2; echo "deploy/start-etcd.sh printed no etcd_endpoints line" >&2; exit 1; }
  # For cluster.nodes (the fault drill's authority cut): the members as host:port,host:port.
  ETCD_MEMBERS_KEY=" etcd=$(echo "${ETCD_LINE#*=}" | sed 's|https\?://||g; s/ //g')"
fi

volumes_of() {  # node index -> v<a>,v<a+1>,...
  local out="" k
  for k in $(seq 0 $((PER_NODE - 1))); do out="$out${out:+,}v$(( ($1 - 1) * PER_NODE + k ))"; done
  echo "$out"
}

# The one cluster config every node reads.
{
  echo "# Written by deploy/start-cluster.sh --nodes $NODES: the cluster \"lab\", read by every node."
  echo "[cluster]"
  echo "name = lab"
  echo "key = $DIR/cluster.key             # every interconnect and mirror link proves it"
  echo "forward_slots = ${FORWARD_SLOTS:-256}"
  if [ "$FAILOVER" = 1 ]; then
    echo "shared_dir = $DIR/san              # the \"SAN\": every volume and the lease files"
    echo "authority = $AUTHORITY"
    [ -z "$ETCD_LINE" ] || echo "$ETCD_LINE"
    echo "failback = manual                  # nasd-admin failback, on the node that wants its volumes back"
    echo "lease_ms = ${LEASE_MS:-4000}"
  fi
  for i in $(seq 1 "$TOTAL"); do
    echo
    echo "[member n$i]"
    echo "interconnect = 127.0.1.$i:7001"
    [ "$FAILOVER" = 0 ] || echo "mirror_listen = 127.0.1.$i:7101"
    if [ "$STANDBY" = 1 ] && [ "$i" = "$TOTAL" ]; then echo "role = standby"; fi
  done
  for i in $(seq 1 "$NODES"); do
    echo
    echo "[evs evs$i]"
    echo "node = n$i"
    echo "listen = 127.0.2.$i"
    echo "nfs_port = 2049"
    echo "mount_port = 20048"
    echo "volumes = $(volumes_of "$i")$([ "$SCALE_OUT" = 1 ] && [ "$i" = 1 ] && echo ", ifs")"
  done
  for v in $(seq 0 $((NODES * PER_NODE - 1))); do
    # Backing files are allocated in full: VOLUME_SIZE (default 1G) times the volume count.
    printf '\n[volume v%d]\nid = %d\nsize = %s\n' "$v" "$v" "${VOLUME_SIZE:-1G}"
    [ -z "${SEGMENT_SIZE:-}" ] || echo "segment_size = $SEGMENT_SIZE"
    printf '\n[export /r/v%d]\nvolume = v%d\nclients = 127.0.0.0/8\noptions = %s\n' "$v" "$v" "$EXPORT_OPTIONS"
  done
  if [ "$SCALE_OUT" = 1 ]; then
    # The scale-out volume: striped over every node's own drives, no backing file in the SAN.
    printf '\n[volume ifs]\nid = 1000\ntype = scaleout\nprotection = %s\ndrives = %s\n' \
      "${IFS_PROTECTION:-+2d:1n}" "${IFS_DRIVES:-4}"
    printf '\n[export /r/ifs]\nvolume = ifs\nclients = 127.0.0.0/8\noptions = %s\n' "$EXPORT_OPTIONS"
  fi
  if [ "${POOL_ADDRESSES:-0}" != 0 ]; then
    printf '\n[pool clients]\naddresses = 127.0.4.1-127.0.4.%d\nnfs_port = 2049\nmount_port = 20048\n' "$POOL_ADDRESSES"
  fi
} > "$DIR/cluster.conf"

for i in $(seq 1 "$TOTAL"); do
  cat > "$DIR/n$i/nasd.conf" <<CONF
# Written by deploy/start-cluster.sh --nodes $NODES: node n$i; the cluster is in ../cluster.conf.
[node]
name = n$i
data_dir = data
listen = 127.0.1.$i
nfs_port = 2049
mount_port = 20048
http_port = 8049
rpcbind = off
handle_key = $DIR/handle.key      # shared by every node: a handle from one works on all
cluster_config = $DIR/cluster.conf

[nlm]
grace_ms = ${NLM_GRACE_MS:-45000}

[nvram]
size = ${NVRAM_SIZE:-256M}
CONF
done

# All at once: a node alone for longer than its startup grace takes the volumes it covers.
for i in $(seq 1 "$TOTAL"); do "$ROOT/deploy/start-node.sh" "$DIR/n$i/nasd.conf" >/dev/null & done
for job in $(jobs -p); do wait "$job" || { echo "a node did not start; see its log in $DIR/n*/data/nasd.log" >&2; exit 1; }; done

# Every node reaches the first volume of every EVS (its own, or forwarded), and every EVS answers.
for i in $(seq 1 "$TOTAL"); do
  if [ "$SCALE_OUT" = 1 ]; then
    for _ in $(seq 300); do
      nfs-ls "nfs://127.0.1.$i/r/ifs?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1 && break
      sleep 0.1
    done
    nfs-ls "nfs://127.0.1.$i/r/ifs?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1 ||
      { echo "127.0.1.$i cannot reach the scale-out volume ifs; see $DIR/n$i/data/nasd.log" >&2; exit 1; }
  fi
  for j in $(seq 1 "$NODES"); do
    v="v$(( (j - 1) * PER_NODE ))"
    for addr in "127.0.1.$i" $([ "$i" = "$j" ] && echo "127.0.2.$j"); do
      for _ in $(seq 300); do
        nfs-ls "nfs://$addr/r/$v?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1 && continue 2
        sleep 0.1
      done
      echo "$addr cannot reach volume $v; see $DIR/n$i/data/nasd.log. The client's last error:" >&2
      nfs-ls "nfs://$addr/r/$v?nfsport=2049&mountport=20048&version=3" 2>&1 >/dev/null | tail -3 >&2
      "$BUILD_DIR/server/admin/nasd-admin" --socket "$DIR/n$i/data/nasd.sock" cluster >&2 || true
      exit 1
    done
  done
done

{
  for i in $(seq 1 "$TOTAL"); do
    role=primary vols="" evs="" evs_addr=""
    if [ "$STANDBY" = 1 ] && [ "$i" = "$TOTAL" ]; then role=standby; else
      vols="$(volumes_of "$i")" evs="evs$i" evs_addr="127.0.2.$i:2049"
    fi
    mirror=""; [ "$FAILOVER" = 0 ] || mirror=" mirror=127.0.1.$i:7101"
    echo "name=n$i address=127.0.1.$i nfs_port=2049 mount_port=20048 interconnect=127.0.1.$i:7001$mirror" \
         "http=127.0.1.$i:8049 admin=$DIR/n$i/data/nasd.sock pid=$DIR/n$i/data/nasd.pid" \
         "config=$DIR/n$i/nasd.conf data_dir=$DIR/n$i/data volumes=$vols evs=$evs evs_address=$evs_addr role=$role$ETCD_MEMBERS_KEY"
  done
} > "$DIR/cluster.nodes.tmp" && mv "$DIR/cluster.nodes.tmp" "$DIR/cluster.nodes"

echo "cluster up: $NODES nodes$([ "$STANDBY" = 1 ] && echo " + standby n$TOTAL"), $((NODES * PER_NODE)) volumes under /r, authority $AUTHORITY"
[ "$SCALE_OUT" = 0 ] || echo "scale-out volume /r/ifs on every node (protection ${IFS_PROTECTION:-+2d:1n}, ${IFS_DRIVES:-4} drives per node; coordinated by n1)"
for i in $(seq 1 "$TOTAL"); do
  if [ "$STANDBY" = 1 ] && [ "$i" = "$TOTAL" ]; then
    echo "  n$i (standby): NFS 127.0.1.$i:2049 MOUNT 127.0.1.$i:20048"
  else
    echo "  n$i: NFS 127.0.1.$i:2049 MOUNT 127.0.1.$i:20048; evs$i NFS 127.0.2.$i:2049 MOUNT 127.0.2.$i:20048 ($(volumes_of "$i"))"
  fi
done
[ "${POOL_ADDRESSES:-0}" = 0 ] ||
  echo "  pool clients: 127.0.4.1-127.0.4.$POOL_ADDRESSES (NFS 2049, MOUNT 20048), spread over the primaries"
echo "try:   nfs-ls -R 'nfs://127.0.2.1/r?nfsport=2049&mountport=20048&version=3'"
echo "state: $BUILD_DIR/server/admin/nasd-admin --socket $DIR/n1/data/nasd.sock cluster"
echo "stop:  deploy/stop-cluster.sh"
