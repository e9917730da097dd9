#!/usr/bin/env bash
# Stops the two nodes started by deploy/start-cluster.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${CLUSTER_DIR:-$ROOT/data/cluster}"
for n in b a; do "$ROOT/deploy/stop-node.sh" "$DIR/$n/data"; done
