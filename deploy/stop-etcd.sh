#!/usr/bin/env bash
# Stops the etcd members started by deploy/start-etcd.sh (SIGTERM, then SIGKILL after 10 s).
# Their data stays in the folder: start-etcd.sh with the same --dir starts them again with it.
#   deploy/stop-etcd.sh [--dir D] [--wipe]     (--wipe: remove the data as well)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${ETCD_DIR:-$ROOT/data/etcd}" WIPE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR="$2"; shift 2 ;;
    --wipe) WIPE=1; shift ;;
    *) echo "usage: stop-etcd.sh [--dir D] [--wipe]" >&2; exit 2 ;;
  esac
done
[ -d "$DIR" ] || exit 0
# Running, and not a zombie left for a parent that does not reap (a test's namespace init).
alive() { local s; s="$(ps -o stat= -p "$1" 2>/dev/null)" && [ -n "$s" ] && [ "${s#Z}" = "$s" ]; }
for f in "$DIR"/m*.pid; do
  [ -f "$f" ] || continue
  pid="$(cat "$f")"
  if alive "$pid" && grep -q etcd "/proc/$pid/cmdline" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
done
[ "$WIPE" = 1 ] && rm -rf "$DIR"/m[0-9]* "$DIR"/m[0-9]*.log
echo "etcd stopped"
