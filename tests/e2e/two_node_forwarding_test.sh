#!/usr/bin/env bash
# Two nasd nodes, each serving one volume: a client of either node reads and writes both
# volumes, the node that does not serve a volume forwarding every request over the interconnect,
# and the data lands in the volume's one backing file on the shared folder; /r on either node
# lists both volumes, and a snapshot of a volume is read through the node that forwards to it.
# The pair is started with deploy/start-cluster.sh, so the user's script is
# what is tested. Runs in a private network namespace.
#   two_node_forwarding_test.sh NASD_BINARY NASD_FSCK   (exit 77 = skipped)
set -euo pipefail
nasd=$1
fsck=$2
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/nasd-two-node-test.XXXXXX)
cleanup() { "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for n in a b; do echo "--- node $n log"; tail -20 "$dir/$n/data/nasd.log" || true; done; exit 1; }

# The pair exactly as a user starts it (deploy/start-cluster.sh): node a owns v0 on ports
# 2049/20048, node b owns v1 on 2149/20148. The namespace keeps these ports to this test.
BUILD_DIR=$(dirname "$(dirname "$nasd")")
export CLUSTER_DIR="$dir" BUILD_DIR
[[ -x $BUILD_DIR/cluster/nasd ]] || { echo "SKIP: $nasd is not inside a build folder"; exit 77; }
EXPORT_OPTIONS=rw,insecure,no_root_squash "$root/deploy/start-cluster.sh" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; fail "start-cluster.sh"; }
url() { echo "nfs://127.0.0.1/r${2:+/$2}$3?nfsport=$1&mountport=$(( $1 == 2049 ? 20048 : 20148 ))&version=3"; }

head -c 3000000 /dev/urandom > "$dir/payload"
want=$(sha256sum < "$dir/payload")
# Through node a into b's volume v1 (forwarded), and through b into a's volume v0 (forwarded).
nfs-cp "$dir/payload" "$(url 2049 v1 /via-a)" >/dev/null || fail "write to v1 through node a"
nfs-cp "$dir/payload" "$(url 2149 v0 /via-b)" >/dev/null || fail "write to v0 through node b"
for check in "2149 v1 /via-a" "2049 v1 /via-a" "2049 v0 /via-b" "2149 v0 /via-b"; do
  set -- $check
  got=$(nfs-cat "$(url "$1" "$2" "$3")" | sha256sum) || fail "read $2$3 through port $1"
  [[ $got == "$want" ]] || fail "$2$3 read through port $1 differs"
done
names_a=$(nfs-ls "$(url 2049 v1 "")"); names_b=$(nfs-ls "$(url 2149 v1 "")")
[[ $names_a == "$names_b" ]] || fail "v1 lists differently through the two nodes"
# The name space root /r lists every volume on either node, and crossing it reaches the owner.
for port in 2049 2149; do
  listing=$(nfs-ls "$(url $port "" "")") || fail "ls /r through port $port"
  grep -qE ' v0$' <<<"$listing" && grep -qE ' v1$' <<<"$listing" || fail "/r through port $port lacks a volume: $listing"
  tree=$(nfs-ls -R "$(url $port "" "")") || fail "ls -R /r through port $port"
  grep -qE ' v1/via-a$' <<<"$tree" && grep -qE ' v0/via-b$' <<<"$tree" || fail "ls -R /r through port $port: $tree"
done
if nfs-cp "$dir/payload" "$(url 2049 "" /stray)" >/dev/null 2>&1; then fail "a file was created in /r"; fi
# Snapshots live behind the volume interface, so they work the same through the forwarding
# node: snapshot v1 on its owner (b), add a file through a; through a, the snapshot has the old
# file and not the new one, and refuses writes.
admin=$BUILD_DIR/server/admin/nasd-admin
"$admin" --socket "$dir/b/data/nasd.sock" snapshot create v1 fwd >/dev/null || fail "snapshot create v1 on node b"
nfs-cp "$dir/payload" "$(url 2049 v1 /after)" >/dev/null || fail "write v1/after through node a"
got=$(nfs-cat "$(url 2049 v1 /.snapshot/fwd/via-a)" | sha256sum) || fail "read v1/.snapshot/fwd/via-a through node a"
[[ $got == "$want" ]] || fail "the snapshot read through node a differs"
snap_names=$(nfs-ls "$(url 2049 v1 /.snapshot/fwd)") || fail "ls v1/.snapshot/fwd through node a"
grep -qE ' via-a$' <<<"$snap_names" && ! grep -qE ' after$' <<<"$snap_names" || fail "snapshot lists: $snap_names"
live_names=$(nfs-ls "$(url 2049 v1 "")")
! grep -q 'snapshot' <<<"$live_names" || fail ".snapshot is listed in v1: $live_names"
if nfs-cp "$dir/payload" "$(url 2049 v1 /.snapshot/fwd/new)" >/dev/null 2>&1; then fail "a file was created in a snapshot"; fi

"$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
for n in a b; do grep -q "stopped cleanly" "$dir/$n/data/nasd.log" || fail "node $n did not stop cleanly"; done
# Each volume has one backing file, on the shared folder (the "SAN"), none in a node's own data.
for v in v0 v1; do
  [[ -f $dir/san/$v.lfs ]] || fail "no backing file for $v on the shared folder"
  [[ ! -e $dir/a/data/$v.lfs && ! -e $dir/b/data/$v.lfs ]] || fail "a node made a private copy of $v"
  "$fsck" "$dir/san/$v.lfs" >/dev/null || fail "fsck of $v"
done
echo "PASS: both volumes served by both nodes, forwarded to their owners"
