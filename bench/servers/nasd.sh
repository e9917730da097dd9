#!/usr/bin/env bash
# Launcher (see README.md): the nasd daemon, one volume exported as /r/v0, with a temporary data
# directory and configuration (format: deploy/nasd.conf).
#   nasd.sh BUILD_DIR|NASD_BINARY [--nfs-port P] [--mount-port M] [--volume-size 2G] [--nvram-size 256M]
#           [--nvram-mode process|host|off] [--listen ADDRESS] [--clients CIDR] [--cache 512M]
set -euo pipefail

[[ $# -ge 1 && $1 != --* ]] || { echo "usage: nasd.sh BUILD_DIR [--nfs-port P] [--mount-port M]" >&2; exit 2; }
build=$1; shift
nfs_port=32049
mount_port=32048
volume_size=2G
nvram_size=256M
nvram_mode=process
cache=""  # the volume's block + inode cache; empty: nasd's default
listen=127.0.0.1
clients=127.0.0.0/8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nfs-port) nfs_port=$2; shift 2 ;;
    --mount-port) mount_port=$2; shift 2 ;;
    --volume-size) volume_size=$2; shift 2 ;;
    --nvram-size) nvram_size=$2; shift 2 ;;
    --nvram-mode) nvram_mode=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --listen) listen=$2; shift 2 ;;           # 0.0.0.0: every address (the agents test)
    --clients) clients=$2; shift 2 ;;
    *) echo "nasd.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

nasd=""
for candidate in "$build" "$build/cluster/nasd" "$build/nasd"; do
  [[ -f $candidate ]] || continue
  [[ -x $candidate ]] && { nasd=$candidate; break; }
done
[[ -n $nasd ]] || { echo "nasd.sh: no nasd binary in $build (looked in cluster/ and the top)" >&2; exit 77; }

dir=$(mktemp -d /tmp/nasd-bench-nasd.XXXXXX)
nasd_pid=""
cleanup() {
  trap - EXIT INT TERM
  if [[ -n $nasd_pid ]]; then
    kill "$nasd_pid" 2>/dev/null || true
    # launcher_stop gives this script 10 s before it SIGKILLs it, and then nothing would remove
    # $dir (GBs of volume): a server still closing after 7 s (a loaded machine) is killed.
    for _ in $(seq 70); do kill -0 "$nasd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nasd_pid" 2>/dev/null || true
    wait "$nasd_pid" 2>/dev/null || true  # 143 after SIGTERM is not an error here
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

cat > "$dir/nasd.conf" <<CONF
# Written by bench/servers/nasd.sh for one benchmark run.
[node]
name = bench0
data_dir = data
listen = $listen
nfs_port = $nfs_port
mount_port = $mount_port
udp = off
rpcbind = off

[nvram]
file = nvram.img
size = $nvram_size
mode = $nvram_mode

[volume v0]
id = 0
backing = v0.lfs
size = $volume_size
${cache:+cache = $cache}

[export /r/v0]
volume = v0
clients = $clients
access = rw
squash = none
secure = no                       # the test's clients send from unreserved ports
CONF

"$nasd" --config "$dir/nasd.conf" 2>"$dir/nasd.log" &
nasd_pid=$!

host=$listen
[[ $host == 0.0.0.0 ]] && host=127.0.0.1
url="nfs://$host/r/v0?nfsport=$nfs_port&mountport=$mount_port"
for _ in $(seq 150); do
  if ! kill -0 "$nasd_pid" 2>/dev/null; then
    echo "nasd.sh: nasd exited during start-up; its log says:" >&2
    tail -n 5 "$dir/nasd.log" >&2 || true
    nasd_pid=""
    exit 1
  fi
  if nfs-ls "$url" >/dev/null 2>&1; then
    echo "SERVER_PID $nasd_pid"
    echo "TARGET $url"
    wait "$nasd_pid" || true
    nasd_pid=""
    echo "nasd.sh: nasd stopped on its own; its log says:" >&2
    tail -n 5 "$dir/nasd.log" >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "nasd.sh: nasd did not accept a mount within 30 s" >&2
exit 1
