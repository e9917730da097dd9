#!/usr/bin/env bash
# Stops the node started by start-node.sh (clean shutdown: SIGTERM, then waits up to 30 s).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${1:-$ROOT/data}"
PIDFILE="$DATA/nasd.pid"
[ -f "$PIDFILE" ] || { echo "no $PIDFILE: nothing to stop"; exit 0; }
PID="$(cat "$PIDFILE")"
if kill -TERM "$PID" 2>/dev/null; then
  for _ in $(seq 1 150); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$PID" 2>/dev/null; then echo "nasd $PID did not stop in 30 s; killing"; kill -KILL "$PID"; fi
fi
rm -f "$PIDFILE"; echo "nasd stopped"
