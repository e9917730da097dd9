#!/usr/bin/env bash
# Two nasd nodes, each owning one volume: a client of either node reads and writes both volumes,
# the node that does not own a volume forwarding every request over the interconnect, and the
# data lands only in the owner's backing file; /r on either node lists both volumes. Runs in a private network namespace.
#   two_node_forwarding_test.sh NASD_BINARY NASD_FSCK   (exit 77 = skipped)
set -euo pipefail
nasd=$1
fsck=$2
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"

dir=$(mktemp -d /tmp/nasd-two-node-test.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for n in a b; do echo "--- node $n log"; tail -20 "$dir/$n/nasd.log" || true; done; exit 1; }

# node_config NAME NFS_PORT MOUNT_PORT IC_PORT OWN_VOLUME PEER PEER_IC_PORT PEER_VOLUME
node_config() {
  mkdir -p "$dir/$1"
  cat > "$dir/$1/nasd.conf" <<CONF
[node]
name = $1
data_dir = data
nfs_port = $2
mount_port = $3
udp = off
rpcbind = off
handle_key = $dir/handle.key      # one key for the cluster: a handle from one node works on all
[nvram]
size = 16M
[cluster]
name = lab
interconnect = 127.0.0.1:$4
[peer $6]
interconnect = 127.0.0.1:$7
volumes = $8
[volume v0]
id = 0
size = 256M
[volume v1]
id = 1
size = 256M
[export /r/v0]
volume = v0
clients = 127.0.0.0/8
access = rw
squash = none
[export /r/v1]
volume = v1
clients = 127.0.0.0/8
access = rw
squash = none
CONF
}
node_config a 5049 5048 5100 v0 b 5200 v1
node_config b 6049 6048 5200 v1 a 5100 v0
for n in a b; do "$nasd" --config "$dir/$n/nasd.conf" 2>"$dir/$n/nasd.log" & pids+=($!); done
# url PORT VOLUME PATH: VOLUME "" names the name space root /r itself.
url() { echo "nfs://127.0.0.1/r${2:+/$2}$3?nfsport=$1&mountport=$(($1 - 1))&version=3"; }
for port in 5049 6049; do
  for _ in $(seq 100); do nfs-ls "$(url $port v0 "")" >/dev/null 2>&1 && break; sleep 0.1; done
done

head -c 3000000 /dev/urandom > "$dir/payload"
want=$(sha256sum < "$dir/payload")
# Through node a into b's volume v1 (forwarded), and through b into a's volume v0 (forwarded).
nfs-cp "$dir/payload" "$(url 5049 v1 /via-a)" >/dev/null || fail "write to v1 through node a"
nfs-cp "$dir/payload" "$(url 6049 v0 /via-b)" >/dev/null || fail "write to v0 through node b"
for check in "6049 v1 /via-a" "5049 v1 /via-a" "5049 v0 /via-b" "6049 v0 /via-b"; do
  set -- $check
  got=$(nfs-cat "$(url "$1" "$2" "$3")" | sha256sum) || fail "read $2$3 through port $1"
  [[ $got == "$want" ]] || fail "$2$3 read through port $1 differs"
done
names_a=$(nfs-ls "$(url 5049 v1 "")"); names_b=$(nfs-ls "$(url 6049 v1 "")")
[[ $names_a == "$names_b" ]] || fail "v1 lists differently through the two nodes"
# The name space root /r lists every volume on either node, and crossing it reaches the owner.
for port in 5049 6049; do
  root=$(nfs-ls "$(url $port "" "")") || fail "ls /r through port $port"
  grep -qE ' v0$' <<<"$root" && grep -qE ' v1$' <<<"$root" || fail "/r through port $port lacks a volume: $root"
  tree=$(nfs-ls -R "$(url $port "" "")") || fail "ls -R /r through port $port"
  grep -qE ' v1/via-a$' <<<"$tree" && grep -qE ' v0/via-b$' <<<"$tree" || fail "ls -R /r through port $port: $tree"
done
if nfs-cp "$dir/payload" "$(url 5049 "" /stray)" >/dev/null 2>&1; then fail "a file was created in /r"; fi

for n in a b; do kill -TERM "${pids[0]}"; wait "${pids[0]}" || fail "node did not stop cleanly"; pids=("${pids[@]:1}"); done
# Each volume exists, and holds the data, only on its owner.
[[ -f $dir/a/data/v0.lfs && ! -e $dir/a/data/v1.lfs ]] || fail "node a made a backing file for v1"
[[ -f $dir/b/data/v1.lfs && ! -e $dir/b/data/v0.lfs ]] || fail "node b made a backing file for v0"
"$fsck" "$dir/a/data/v0.lfs" >/dev/null || fail "fsck of v0"
"$fsck" "$dir/b/data/v1.lfs" >/dev/null || fail "fsck of v1"
echo "PASS: both volumes served by both nodes, forwarded to their owners"
