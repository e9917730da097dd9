#!/usr/bin/env bash
# Runs a command in private network, mount and PID namespaces: its own loopback (test servers
# can use any port without meeting another one), its own /run (an rpcbind started for
# nfs-ganesha stays private too), and every process it starts dies with it, even on SIGKILL.
# Without the privilege for that, runs the command as it is.
# Sets NASD_BENCH_IN_NETNS to 1 inside a private namespace, 0 when it fell back.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: netns.sh COMMAND [ARGS...]" >&2; exit 2; }

if [[ -z ${NASD_BENCH_IN_NETNS:-} ]] && unshare --net --mount --pid --fork true 2>/dev/null; then
  export NASD_BENCH_IN_NETNS=1
  exec unshare --net --mount --pid --fork --kill-child --mount-proc bash -c '
    set -e
    ip link set lo up
    # glibc resolves IPv4 names only when an address other than 127.0.0.1 exists
    # (AI_ADDRCONFIG), and ganesha resolves its Bind_addr that way.
    ip addr add 127.0.0.2/32 dev lo
    mount --make-rprivate /
    mount -t tmpfs tmpfs /run
    exec "$@"' netns "$@"
fi
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then
  echo "netns.sh: cannot make private namespaces here; running in the host's" >&2
  export NASD_BENCH_IN_NETNS=0
fi
exec "$@"
