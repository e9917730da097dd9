#!/usr/bin/env bash
# Starts one nasd node in the background from a config (default: deploy/nasd.conf) and waits
# until it accepts NFS connections. Logs go to <data_dir>/nasd.log.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
CONF="$(realpath "${1:-$ROOT/deploy/nasd.conf}")"
conf_get() { # section key -> value (first match), comments stripped
  awk -v sec="$1" -v key="$2" '
    /^\[/ { insec = ($0 ~ "^\\[" sec "[] ]") }
    insec { sub(/#.*/, ""); split($0, kv, "="); gsub(/[ \t]/, "", kv[1]); if (kv[1] == key) { v = substr($0, index($0, "=") + 1); gsub(/^[ \t]+|[ \t]+$/, "", v); print v; exit } }' "$CONF"
}
DATA="$(conf_get node data_dir)"; case "$DATA" in /*) ;; *) DATA="$(dirname "$CONF")/$DATA" ;; esac
# The node's NVRAM, its copy of the partner's and its keys live here: its user's only.
mkdir -p "$DATA"; chmod 700 "$DATA" || echo "warning: cannot make $DATA private (chmod 700)" >&2
DATA="$(realpath "$DATA")"
PORT="$(conf_get node nfs_port)"; ADDR="$(conf_get node listen)"
PORT="${PORT:-2049}"; ADDR="${ADDR:-127.0.0.1}"  # nasd's defaults when the config leaves them out
[ "$ADDR" != 0.0.0.0 ] || ADDR=127.0.0.1
# In an HA pair the node's address is served by whichever node holds its volumes: a node that
# restarts after a failover is up once its admin socket answers, its address comes back with
# `nasd-admin failback`.
HA="$(conf_get cluster shared_dir)"; ADMIN="$BUILD_DIR/server/admin/nasd-admin"
[ -z "$HA" ] || [ -x "$ADMIN" ] || { echo "an HA node is checked with $ADMIN: build it first (deploy/build.sh)"; exit 1; }
if [ -f "$DATA/nasd.pid" ] && kill -0 "$(cat "$DATA/nasd.pid")" 2>/dev/null; then
  echo "nasd already running (pid $(cat "$DATA/nasd.pid"))"; exit 0
fi
# Clients that are given no ports ask the portmapper: start rpcbind when the node registers
# with it (`[node] rpcbind` auto or on, the default) and none answers yet.
RPCBIND="$(conf_get node rpcbind)"
if [ "${RPCBIND:-auto}" != off ] && command -v rpcinfo >/dev/null && ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  if [ -d /run/systemd/system ] && $SUDO systemctl start rpcbind.socket rpcbind.service 2>/dev/null; then :
  elif command -v rpcbind >/dev/null || [ -x /usr/sbin/rpcbind ] || [ -x /sbin/rpcbind ]; then
    $SUDO "$(command -v rpcbind || echo /usr/sbin/rpcbind)" -w 2>/dev/null || true
  fi
  for _ in $(seq 1 25); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.2; done
  if rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
    echo "started rpcbind (the portmapper was not running): clients find nasd without port options"
  else
    echo "rpcbind is not running and could not be started: clients need nfsport= and mountport="
  fi
fi
# The management page's login: a random password, hashed into the node's data folder on the
# first start and printed once.
HTTP_PORT="$(conf_get node http_port)"
PASSWD_FILE="$(conf_get node http_password_file)"; PASSWD_FILE="${PASSWD_FILE:-http.passwd}"
case "$PASSWD_FILE" in /*) ;; *) PASSWD_FILE="$DATA/$PASSWD_FILE" ;; esac
if [ "${HTTP_PORT:-8049}" != 0 ] && [ ! -f "$PASSWD_FILE" ] && [ -x "$BUILD_DIR/server/http/nasd-passwd" ]; then
  pw="$("$BUILD_DIR/server/http/nasd-passwd" --random "$PASSWD_FILE")"
  echo "management page login: user admin, password $pw (shown once; hashed in $PASSWD_FILE;"
  echo "  a new one: $BUILD_DIR/server/http/nasd-passwd --random $PASSWD_FILE; no restart needed)"
fi
setsid nohup "$BUILD_DIR/cluster/nasd" --config "$CONF" >>"$DATA/nasd.log" 2>&1 &
echo $! > "$DATA/nasd.pid"
for i in $(seq 1 100); do
  if ! kill -0 "$(cat "$DATA/nasd.pid")" 2>/dev/null; then
    echo "nasd exited during start-up; last log lines:"; tail -20 "$DATA/nasd.log"; exit 1
  fi
  if [ -n "$HA" ]; then
    # The partner may be answering on this address: ask the node itself.
    state="$("$ADMIN" --socket "$DATA/nasd.sock" cluster 2>/dev/null | grep "^  evs $(conf_get node name) " || true)"
    if [ "$i" -gt 25 ] && [[ $state == *": not here" ]]; then
      echo "nasd is up (pid $(cat "$DATA/nasd.pid"), log $DATA/nasd.log); its partner serves its"
      echo "volumes and address until:  $ADMIN --socket $DATA/nasd.sock failback"
      exit 0
    fi
    [[ $state == *": served here"* ]] || { sleep 0.2; continue; }
  fi
  if (exec 3<>"/dev/tcp/$ADDR/$PORT") 2>/dev/null; then
    MPORT="$(conf_get node mount_port)"; MPORT="${MPORT:-20048}"
    echo "nasd is serving NFSv3 on $ADDR:$PORT (pid $(cat "$DATA/nasd.pid"), log $DATA/nasd.log)"
    echo "try:  nfs-ls 'nfs://$ADDR/r/v0?nfsport=$PORT&mountport=$MPORT&version=3'"
    echo "stats: $BUILD_DIR/server/admin/nasd-admin --socket $DATA/nasd.sock stats"
    # The page stays on loopback unless http_listen says otherwise (HttpOptions).
    HTTP_ADDR="$(conf_get node http_listen)"
    [ -n "$HTTP_ADDR" ] || case "$ADDR" in 127.*) HTTP_ADDR=$ADDR ;; *) HTTP_ADDR=127.0.0.1 ;; esac
    SCHEME=http; [ -z "$(conf_get node http_tls_cert)" ] || SCHEME=https
    [ "${HTTP_PORT:-8049}" = 0 ] || echo "management page: $SCHEME://$HTTP_ADDR:${HTTP_PORT:-8049}/  metrics: $SCHEME://$HTTP_ADDR:${HTTP_PORT:-8049}/metrics (login or the token)"
    exit 0
  fi
  sleep 0.2
done
echo "nasd did not open $ADDR:$PORT within 20 s; see $DATA/nasd.log"; exit 1
