#!/usr/bin/env bash
# Launcher (see README.md): nfs-ganesha serving a temporary directory over NFSv3 on loopback.
# ganesha refuses to start unless it can register with rpcbind, so when none answers one is
# started here and stopped again on exit. Run it inside bench/netns.sh to keep that rpcbind
# (and its /run files) private.
set -euo pipefail

nfs_port=32049
mount_port=32048
listen=127.0.0.1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nfs-port) nfs_port=$2; shift 2 ;;
    --mount-port) mount_port=$2; shift 2 ;;
    --listen) listen=$2; shift 2 ;;           # 0.0.0.0: every address (the agents test)
    --clients) shift 2 ;;                     # the export below is open to every client anyway
    *) echo "ganesha.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

command -v ganesha.nfsd >/dev/null || { echo "ganesha.sh: ganesha.nfsd is not installed" >&2; exit 77; }
[[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so || -n "$(find /usr/lib -name libfsalvfs.so -print -quit 2>/dev/null)" ]] ||
  { echo "ganesha.sh: the VFS FSAL (nfs-ganesha-vfs) is not installed" >&2; exit 77; }

dir=$(mktemp -d /tmp/nasd-bench-ganesha.XXXXXX)
ganesha_pid=""
rpcbind_pid=""
# stop PID and reap it; its exit status (143 after SIGTERM) is not an error here. Bounded to 4 s
# each (then SIGKILL): launcher_stop SIGKILLs this script after 10 s, and $dir would stay behind.
stop() {
  kill "$1" 2>/dev/null || true
  for _ in $(seq 40); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  trap - EXIT INT TERM
  if [[ -n $ganesha_pid ]]; then stop "$ganesha_pid"; fi
  if [[ -n $rpcbind_pid ]]; then stop "$rpcbind_pid"; fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

mkdir -p "$dir/export" "$dir/recovery"
cat > "$dir/ganesha.conf" <<CONF
NFS_CORE_PARAM {
  NFS_Port = $nfs_port;
  MNT_Port = $mount_port;
  Bind_addr = $listen;
  Protocols = 3;
  Enable_NLM = false;
  Enable_RQUOTA = false;
}
NFSV4 { Graceless = true; RecoveryRoot = $dir/recovery; }
EXPORT {
  Export_Id = 1;
  Path = $dir/export;
  Pseudo = /export;
  Protocols = 3;
  Transports = TCP;
  Access_Type = RW;
  Squash = No_Root_Squash;
  FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
CONF

if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
  rpcbind -f &
  rpcbind_pid=$!
  for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
fi

ganesha.nfsd -F -f "$dir/ganesha.conf" -L "$dir/ganesha.log" -p "$dir/ganesha.pid" &
ganesha_pid=$!

host=$listen
[[ $host == 0.0.0.0 ]] && host=127.0.0.1
url="nfs://$host$dir/export?nfsport=$nfs_port&mountport=$mount_port"
for _ in $(seq 150); do
  if ! kill -0 "$ganesha_pid" 2>/dev/null; then
    echo "ganesha.sh: ganesha.nfsd exited during start-up; its log says:" >&2
    tail -n 5 "$dir/ganesha.log" >&2 || true
    ganesha_pid=""
    exit 1
  fi
  if nfs-ls "$url" >/dev/null 2>&1; then
    echo "SERVER_PID $ganesha_pid"
    echo "TARGET $url"
    wait "$ganesha_pid" || true
    ganesha_pid=""
    echo "ganesha.sh: ganesha.nfsd stopped on its own" >&2
    exit 1
  fi
  sleep 0.2
done
echo "ganesha.sh: ganesha did not accept a mount within 30 s" >&2
exit 1
