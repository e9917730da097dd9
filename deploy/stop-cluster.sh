#!/usr/bin/env bash
# Stops the nodes started by deploy/start-cluster.sh (a pair or N nodes), all at once (one by
# one, the others would first take the volumes of the first over), and the etcd it started.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
status=0
for data in "$DIR"/a/data "$DIR"/b/data "$DIR"/n[1-9]/data; do
  [ -d "$data" ] || continue
  "$ROOT/deploy/stop-node.sh" "$data" &
done
for job in $(jobs -p); do wait "$job" || status=1; done
if [ -f "$DIR/cluster.conf" ] && grep -q '^authority = etcd' "$DIR/cluster.conf" &&
   [ -x "$ROOT/deploy/stop-etcd.sh" ]; then
  "$ROOT/deploy/stop-etcd.sh" --dir "$DIR/etcd" || status=1
fi
exit $status
