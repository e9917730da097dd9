#!/usr/bin/env bash
# Stops the two nodes started by deploy/start-cluster.sh, both at once (one by one, the second
# would first take the volumes of the first over).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
status=0
for n in a b; do "$ROOT/deploy/stop-node.sh" "$DIR/$n/data" & done
for job in $(jobs -p); do wait "$job" || status=1; done
exit $status
