#!/usr/bin/env bash
# Runs a command in a private network and mount namespace: its own loopback (so test servers can
# use any port without meeting another one) and its own /run (so an rpcbind started for
# nfs-ganesha is private too). Without the privilege to do that, runs the command as it is.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: netns.sh COMMAND [ARGS...]" >&2; exit 2; }

if [[ ${NASD_BENCH_IN_NETNS:-} != 1 ]] && unshare --net --mount true 2>/dev/null; then
  export NASD_BENCH_IN_NETNS=1
  exec unshare --net --mount --fork bash -c '
    set -e
    ip link set lo up
    # glibc only resolves IPv4 names when some address other than 127.0.0.1 exists (AI_ADDRCONFIG);
    # ganesha resolves its Bind_addr that way.
    ip addr add 127.0.0.2/32 dev lo
    mount --make-rprivate /
    mount -t tmpfs tmpfs /run
    exec "$@"' netns "$@"
fi
[[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] || echo "netns.sh: no private namespace available; running in the host's" >&2
exec "$@"
