#!/usr/bin/env bash
# Starts an etcd (Debian's etcd-server) on this machine for a nasd cluster whose [cluster]
# authority = etcd: one member, or three (a quorum of two survives one member's loss), each
# with its own client and peer port on loopback and its data in its own folder. Waits until
# every member answers /health (at most 30 s). Stop it with deploy/stop-etcd.sh (same --dir).
#   deploy/start-etcd.sh [--members 1|3] [--dir D] [--base-port P] [--host H]
# D (default ./data/etcd, or ETCD_DIR): member i keeps its data in D/m<i>, logs to D/m<i>.log
# and its pid in D/m<i>.pid. Member i listens for clients on H:P+2i and for its peers on
# H:P+2i+1 (default 127.0.0.1, 2379: 2379/2380, 2381/2382, 2383/2384). Prints the line for
# nasd.conf's [cluster]:  etcd_endpoints = http://127.0.0.1:2379, ...
# This etcd is for one machine and tests: plain HTTP, no authentication. For a real one (TLS,
# 3 or 5 members on separate machines) see cluster/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MEMBERS=1 DIR="${ETCD_DIR:-$ROOT/data/etcd}" BASE=2379 HOST=127.0.0.1
while [ $# -gt 0 ]; do
  case "$1" in
    --members) MEMBERS="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --base-port) BASE="$2"; shift 2 ;;
    --host) HOST="$2"; shift 2 ;;
    *) echo "usage: start-etcd.sh [--members 1|3] [--dir D] [--base-port P] [--host H]" >&2; exit 2 ;;
  esac
done
[ "$MEMBERS" = 1 ] || [ "$MEMBERS" = 3 ] || { echo "start-etcd.sh: --members 1 or 3" >&2; exit 2; }
[[ $BASE =~ ^[0-9]+$ ]] && [ "$BASE" -ge 1024 ] && [ "$BASE" -le 65500 ] ||
  { echo "start-etcd.sh: --base-port 1024..65500" >&2; exit 2; }
command -v etcd >/dev/null || { echo "start-etcd.sh: no etcd (apt-get install etcd-server)" >&2; exit 1; }
mkdir -p "$DIR"; chmod 700 "$DIR"
DIR="$(cd "$DIR" && pwd)"

client_url() { echo "http://$HOST:$((BASE + 2 * $1))"; }
peer_url() { echo "http://$HOST:$((BASE + 2 * $1 + 1))"; }
initial=""
for i in $(seq 0 $((MEMBERS - 1))); do initial+="${initial:+,}m$i=$(peer_url "$i")"; done

endpoints=""
for i in $(seq 0 $((MEMBERS - 1))); do
  endpoints+="${endpoints:+, }$(client_url "$i")"
  if [ -f "$DIR/m$i.pid" ] && kill -0 "$(cat "$DIR/m$i.pid")" 2>/dev/null &&
     grep -q etcd "/proc/$(cat "$DIR/m$i.pid")/cmdline" 2>/dev/null; then
    echo "etcd member m$i already running (pid $(cat "$DIR/m$i.pid"))"; continue
  fi
  # A member that has data rejoins with it; a fresh one starts the cluster with the others.
  state=new; [ -d "$DIR/m$i/member" ] && state=existing
  # Short heartbeats and elections: a lost leader is replaced within a second, well inside a
  # volume lease (4 s by default), as on a LAN.
  setsid etcd --name "m$i" --data-dir "$DIR/m$i" \
    --listen-client-urls "$(client_url "$i")" --advertise-client-urls "$(client_url "$i")" \
    --listen-peer-urls "$(peer_url "$i")" --initial-advertise-peer-urls "$(peer_url "$i")" \
    --initial-cluster "$initial" --initial-cluster-state "$state" \
    --initial-cluster-token "nasd-etcd-$BASE" \
    --heartbeat-interval 100 --election-timeout 1000 \
    >"$DIR/m$i.log" 2>&1 < /dev/null &
  echo $! > "$DIR/m$i.pid"
done

healthy() { curl -sf --max-time 1 "$1/health" | grep -q '"health":"true"'; }
for i in $(seq 0 $((MEMBERS - 1))); do
  for _ in $(seq 300); do
    healthy "$(client_url "$i")" && continue 2
    kill -0 "$(cat "$DIR/m$i.pid")" 2>/dev/null || { echo "etcd member m$i exited; see $DIR/m$i.log" >&2; tail -5 "$DIR/m$i.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "etcd member m$i not healthy within 30 s; see $DIR/m$i.log" >&2; exit 1
done
echo "etcd up ($MEMBERS member$([ "$MEMBERS" = 1 ] || echo s), data in $DIR)"
echo "etcd_endpoints = $endpoints"
