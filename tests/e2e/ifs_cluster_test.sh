#!/usr/bin/env bash
# The scale-out volume /r/ifs on a 4-node cluster (deploy/start-cluster.sh --nodes 4
# --scale-out): data striped 6+2/2 over the drives of all four nodes, n1 coordinating.
#  1. every node serves /r/ifs: the acknowledged-operations load (CREATE, FILE_SYNC WRITE,
#     MKDIR, RENAME, REMOVE) runs through each node at once, each verified through another;
#  2. coherence: a file written (and committed) through n1 is read through n3, one written
#     through n4 is listed and read through n2;
#  2b. direct reads: n3 answered its READs from the units on their holders (nasd-admin cluster
#     counts them; n1 counts the layouts it gave), and a non-coordinator node is killed: a
#     streaming writer through n2 while n4 (holding units of every group, answering READs) is
#     killed with kill -9; every acknowledged byte reads back through n3 (direct reads, n4's
#     units rebuilt from parity); n4 restarts and takes its volume back;
#  3. a verifying streaming writer (nasd-ifs-stream: 64 KiB FILE_SYNC writes into 4 MiB files)
#     through n3, while n1, the coordinator, is killed with kill -9: n2 (which holds n1's
#     NVRAM mirror) takes the volume over from the mirror and the checkpoint on the survivors'
#     drives, reads rebuild n1's units from parity, and every acknowledged byte reads back;
#  4. the re-protect job brings every group back to full protection on the three survivors;
#  5. then one drive each of n3 and n4 is deleted, and everything acknowledged still reads back.
# Runs in a private network namespace.
#   ifs_cluster_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD NASD_IFS_STREAM   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 stream=$4 test_name=ifs-cluster
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
export VOLUME_SIZE=64M
source "$(dirname "$0")/n_node_lib.sh"
[[ -x $stream ]] || { echo "SKIP: no nasd-ifs-stream at $stream"; exit 77; }
stream_seconds=${STREAM_SECONDS:-25}
ifs_status() { admin_on "$1" volumes 2>/dev/null | sed -n '/scale-out/,$p'; }
ifs_line() { ifs_status "$1" | grep -qE "$2"; }

start_nodes --nodes 4 --volumes-per-node 1 --scale-out

# 1. The acknowledged-operations load through every node at once, verified through another.
for i in 1 2 3 4; do client "e2e-n$i" 127.0.1.$i ifs 127.0.1.$(( i % 4 + 1 )) 8; done
wait_clients
echo "the acknowledged-operations load passed through each of the four nodes"

# 2. Coherence between nodes.
head -c 3000000 /dev/urandom >"$dir/payload"
nfs-cp "$dir/payload" "$(url 127.0.1.1 ifs/through-n1)" >/dev/null || fail "write /r/ifs through n1"
nfs-cp "$(url 127.0.1.3 ifs/through-n1)" "$dir/back-n3" >/dev/null || fail "read /r/ifs through n3"
cmp -s "$dir/payload" "$dir/back-n3" || fail "written through n1, read through n3: differs"
nfs-cp "$dir/payload" "$(url 127.0.1.4 ifs/through-n4)" >/dev/null || fail "write /r/ifs through n4"
nfs-ls "$(url 127.0.1.2 ifs)" | grep -q "through-n4" || fail "n2 does not list what n4 wrote"
nfs-cp "$(url 127.0.1.2 ifs/through-n4)" "$dir/back-n2" >/dev/null || fail "read /r/ifs through n2"
cmp -s "$dir/payload" "$dir/back-n2" || fail "written through n4, read through n2: differs"
# Stripes are written behind (the journal flushes every 5 s, sooner when it fills).
wait_for 20 "n1 striping what was written (groups > 0 in nasd-admin volumes)" ifs_line n1 "groups [1-9]"
echo "coherent: written through n1 read through n3, written through n4 read through n2"

# 2b. Direct reads, and kill -9 of a node that is not the coordinator.
direct_reads() { admin_on "$1" cluster 2>/dev/null | sed -n 's/^scale-out reads answered here from the units: \([0-9]*\) .*/\1/p'; }
layouts_served() { admin_on "$1" cluster 2>/dev/null | sed -n 's/^scale-out reads.*layouts served as coordinator \([0-9]*\)).*/\1/p'; }
admin_on n3 cluster | grep '^scale-out reads' || true
(( $(direct_reads n3) > 0 )) || fail "n3 answered no READ of /r/ifs from the units (all forwarded)"
(( $(layouts_served n1) > 0 )) || fail "n1 (the coordinator) gave no read layout"
before=$(direct_reads n3)
"$stream" --host 127.0.1.2 --dir stream0 --seconds 7 --file-mib 4 \
  --report "$dir/stream0.report" >"$dir/stream0.out" 2>&1 &
writer=$!
sleep 3
kill -0 "$writer" 2>/dev/null || { cat "$dir/stream0.out"; fail "the streaming writer ended before the kill of n4"; }
kill -9 "$(pid_of n4)"
wait "$writer" || { cat "$dir/stream0.out"; fail "the streaming writer through n2 failed while n4 died"; }
cat "$dir/stream0.out"
"$stream" --verify --host 127.0.1.3 --dir stream0 --report "$dir/stream0.report" >"$dir/verify0.out" 2>&1 ||
  { cat "$dir/verify0.out"; fail "acknowledged writes lost after the kill of n4 (read via n3)"; }
cat "$dir/verify0.out"
(( $(direct_reads n3) > before )) || fail "n3 read nothing from the units while n4 was down"
admin_on n3 cluster | grep '^scale-out reads'
"$root/deploy/start-node.sh" "$dir/n4/nasd.conf" >"$dir/restart-n4.log" 2>&1 ||
  { cat "$dir/restart-n4.log"; fail "restart of n4"; }
wait_for 20 "n4's admin socket" cluster_line n4 "^member n4: this node"
admin_on n4 failback >"$dir/failback.log" 2>&1 || { cat "$dir/failback.log"; fail "nasd-admin failback on n4"; }
wait_for 40 "n4 serving v3 again" cluster_line n4 "^    volume v3 .*served here"
wait_for 20 "n1 seeing n4's drives again" ifs_line n1 "nodes 4/4 alive"
echo "kill -9 of n4 (not the coordinator) under a streaming writer: nothing acknowledged lost; n4 back"

# 3. Streaming writes through n3 while the coordinator n1 is killed.
"$stream" --host 127.0.1.3 --dir stream --seconds "$stream_seconds" --file-mib 4 \
  --report "$dir/stream.report" >"$dir/stream.out" 2>&1 &
writer=$!
client "load-n4" 127.0.1.4 ifs 127.0.1.2 "$stream_seconds"
sleep 6
kill -0 "$writer" 2>/dev/null || { cat "$dir/stream.out"; fail "the streaming writer ended before the kill"; }
kill -9 "$(pid_of n1)"
killed=$(now_ms)
wait_for 40 "n2 coordinating ifs" cluster_line n2 "^    volume ifs .*served here"
echo "takeover: n2 coordinates /r/ifs $(( $(now_ms) - killed )) ms after the kill of n1"
wait "$writer" || { cat "$dir/stream.out"; fail "the streaming writer failed"; }
cat "$dir/stream.out"
wait_clients
for via in 127.0.1.2 127.0.1.4; do
  "$stream" --verify --host $via --dir stream --report "$dir/stream.report" >"$dir/verify.out" 2>&1 ||
    { cat "$dir/verify.out"; fail "acknowledged streaming writes lost after the kill (read via $via)"; }
  cat "$dir/verify.out"
done

# 4. Re-protect on the three survivors.
wait_for 90 "every group back at full protection" ifs_line n2 "nodes 3/4 alive.*"
wait_for 400 "re-protect done" ifs_line n2 "below full protection 0,"
ifs_status n2
# What an admin asks: every group's health from the coordinator (nasd-admin protection).
protection=$(admin_on n2 protection ifs)
head -n 4 <<<"$protection"
grep -qE '^volume ifs: protection \+2d:1n, FULL' <<<"$protection" ||
  fail "nasd-admin protection does not show the volume back at full protection"
grep -qE 'groups [1-9][0-9]*: [1-9][0-9]* full, 0 degraded, 0 lost' <<<"$protection" ||
  fail "nasd-admin protection lists no groups, or some not full"

# 5. Two drives of two other nodes deleted.
rm -f "$dir/n3/data/ifs-1000/drive-1.units" "$dir/n4/data/ifs-1000/drive-2.units"
wait_for 10 "n2 seeing the two failed drives" ifs_line n2 "drives 10/16 healthy"
grep -qE 'DEGRADED|LOST' <<<"$(admin_on n2 protection ifs)" || fail "nasd-admin protection misses the lost drives"
"$stream" --verify --host 127.0.1.3 --dir stream --report "$dir/stream.report" >"$dir/verify2.out" 2>&1 ||
  { cat "$dir/verify2.out"; ifs_status n2; fail "acknowledged writes lost after two drives were deleted"; }
cat "$dir/verify2.out"
nfs-cp "$(url 127.0.1.4 ifs/through-n1)" "$dir/back-late" >/dev/null && cmp -s "$dir/payload" "$dir/back-late" ||
  fail "through-n1 lost after the node and the two drives"
ifs_status n2
"$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
echo "PASS: /r/ifs on 4 nodes: e2e load through each node, coherent, direct reads, kill -9 of a non-coordinator and of the coordinator under a streaming writer, re-protected, two drives lost, nothing acknowledged lost"
