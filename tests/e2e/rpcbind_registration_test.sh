#!/usr/bin/env bash
# nasd registers NFS v3, MOUNT v1-3, NLM v4 and NSM v1 with a real rpcbind, a client that is given no ports finds
# it through the portmapper, and a clean stop unregisters everything. Runs inside a private
# network/mount/PID namespace (bench/netns.sh) so its rpcbind meets nothing else on the machine.
#   rpcbind_registration_test.sh NASD_BINARY   (exit 77 = skipped)
set -euo pipefail
nasd=$1
command -v rpcbind >/dev/null && command -v rpcinfo >/dev/null || { echo "SKIP: rpcbind/rpcinfo not installed"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"

dir=$(mktemp -d /tmp/nasd-rpcbind-test.XXXXXX)
cleanup() { kill "${nasd_pid:-}" "${rpcbind_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
cat > "$dir/nasd.conf" <<CONF
[node]
data_dir = data
nfs_port = 4049
mount_port = 4048
rpcbind = on
[nvram]
size = 16M
[volume v0]
id = 0
size = 256M
[export /r/v0]
volume = v0
clients = 127.0.0.0/8
access = rw
squash = none
secure = no                       # the test's clients send from unreserved ports
CONF
rpcbind -f & rpcbind_pid=$!
for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
"$nasd" --config "$dir/nasd.conf" 2>"$dir/nasd.log" & nasd_pid=$!
for _ in $(seq 100); do rpcinfo -T tcp 127.0.0.1 100003 3 >/dev/null 2>&1 && break; sleep 0.1; done

fail() { echo "FAIL: $*"; cat "$dir/nasd.log"; exit 1; }
listing=$(rpcinfo -p 127.0.0.1)
for want in "100003 3 tcp 4049" "100003 3 udp 4049" "100005 1 tcp 4048" "100005 3 tcp 4048" "100005 3 udp 4048" \
            "100021 4 tcp 4048" "100021 4 udp 4048" "100024 1 tcp 4048" "100024 1 udp 4048"; do
  grep -qE "^ *${want// /[[:space:]]+}" <<<"$listing" || fail "rpcbind lacks '$want'"
done
echo hello > "$dir/f"
nfs-cp "$dir/f" "nfs://127.0.0.1/r/v0/f?version=3" >/dev/null || fail "nfs-cp through the portmapper"
[[ $(nfs-cat "nfs://127.0.0.1/r/v0/f?version=3") == hello ]] || fail "nfs-cat through the portmapper"
kill -TERM "$nasd_pid"; wait "$nasd_pid" || fail "nasd did not exit 0 on SIGTERM"; nasd_pid=""
left=$(rpcinfo -p 127.0.0.1 | grep -cE "^ *1000(0[35]|21|24) " || true)
[[ $left == 0 ]] || fail "$left registrations left after a clean stop"
echo "PASS: registered, found through the portmapper, unregistered"
