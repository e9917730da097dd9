#!/usr/bin/env bash
# A fifth node joins a running 4-node scale-out cluster, and a scrub repairs a corrupted unit:
#  1. 4 nodes with --scale-out; a verifying dataset on /r/ifs (files written through n1..n4);
#  2. deploy/add-node.sh starts n5 as a storage node and joins it while a verifying streaming
#     writer (nasd-ifs-stream) and the acknowledged-operations load (through n5 itself) run;
#     the coordinator's rebalance job moves units onto n5 (progress in nasd-admin protection);
#  3. at the end n5 holds about its fair share, no group is unbalanced or degraded, every file
#     and every acknowledged streaming write reads back (through n5 and n3), and
#     nasd-fsck --scaleout (the coordinator's catalog against the five nodes' drives) finds
#     every group's parity consistent;
#  4. bytes of one unit are flipped in its drive's backing file; fsck reports it; a scrub
#     (nasd-admin protection scrub ifs) finds it by checksum and rewrites it from parity; fsck
#     is clean again and the file reads back.
# Runs in a private network namespace.
#   ifs_join_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD NASD_IFS_STREAM   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 stream=$4 test_name=ifs-join
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
export VOLUME_SIZE=64M
source "$(dirname "$0")/n_node_lib.sh"
[[ -x $stream ]] || { echo "SKIP: no nasd-ifs-stream at $stream"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (to flip a unit's bytes)"; exit 77; }
stream_seconds=${STREAM_SECONDS:-10}
protection() { admin_on n1 protection ifs 2>/dev/null; }
protection_has() { grep -qE "$1" <<<"$(protection)"; }  # not a pipe: grep -q would end it early (SIGPIPE, pipefail)
not_striped_zero() { admin_on n1 volumes 2>/dev/null | grep -qE "not yet striped 0 bytes"; }
# put FILE HOST: nfs-cp onto /r/ifs, retried with a growing pause (a busy machine can make a
# forwarded call time out and its link reconnect, and nfs-cp gives up at the first JUKEBOX; a
# full parallel suite once failed three tries a second apart).
put() {
  local try
  for try in 1 2 3 4 5 6; do nfs-cp "$dir/$1" "$(url "$2" "ifs/$1")" >/dev/null 2>&1 && return 0; sleep "$try"; done
  fail "write $1 through $2"
}
# fsck_ifs LABEL: nasd-fsck --scaleout over the coordinator's catalog and the 5 nodes' drives.
fsck_ifs() {
  admin_on n1 protection catalog ifs >"$dir/catalog-$1.txt"
  "$fsck" --scaleout "$dir/catalog-$1.txt" --volume-id 1000 --drives 4 \
    1="$dir/n1/data/ifs-1000" 2="$dir/n2/data/ifs-1000" 3="$dir/n3/data/ifs-1000" \
    4="$dir/n4/data/ifs-1000" 5="$dir/n5/data/ifs-1000" >"$dir/fsck-$1.log" 2>&1
}

start_nodes --nodes 4 --volumes-per-node 1 --scale-out

# 1. The dataset: 8 files of 3 MiB and 4 small ones, written through every node.
for i in 0 1 2 3 4 5 6 7; do
  head -c $((3 * 1024 * 1024 + i * 4097)) /dev/urandom >"$dir/data-$i"
  put "data-$i" 127.0.1.$((i % 4 + 1))
done
for i in 0 1 2 3; do
  head -c $((2000 + i * 100)) /dev/urandom >"$dir/small-$i"
  put "small-$i" 127.0.1.$((i + 1))
done
wait_for 30 "the dataset striped (write-behind)" not_striped_zero
protection | head -n 3

# 2. n5 joins under load.
"$stream" --host 127.0.1.2 --dir stream --seconds "$stream_seconds" --file-mib 2 \
  --report "$dir/stream.report" >"$dir/stream.out" 2>&1 &
writer=$!
sleep 2
added=$(now_ms)
"$root/deploy/add-node.sh" >"$dir/add.log" 2>&1 || { cat "$dir/add.log"; fail "deploy/add-node.sh"; }
cat "$dir/add.log"
echo "n5 joined and serves /r/ifs $(( $(now_ms) - added )) ms after add-node.sh started"
client "via-n5" 127.0.1.5 ifs 127.0.1.3 8
wait_for 20 "the rebalance job starting (n5 in the topology)" protection_has "nodes 5/5 alive"
wait_for 20 "units moving onto n5" protection_has " 5=[1-9]"
protection | sed -n 2,4p
wait "$writer" || { cat "$dir/stream.out"; fail "the streaming writer failed during the join"; }
cat "$dir/stream.out"
wait_clients
# The writer's last groups are striped behind; the rebalance takes them as they land.
wait_for 30 "everything striped" not_striped_zero
wait_for 90 "the rebalance done (no group unbalanced, job idle)" \
  protection_has "0 degraded, 0 lost, 0 unbalanced"
wait_for 30 "the job idle" protection_has "job idle"
# The pass shows idle once its last task is in; its last checkpoint and the deletes of the
# moved units' old copies follow within moments. fsck reads the drives only after them.
sleep 2
done_ms=$(( $(now_ms) - added ))
status=$(protection)
head -n 3 <<<"$status"
grep -qE '^volume ifs: protection \+2d:1n, FULL' <<<"$status" || fail "the volume is not at full protection"
groups=$(sed -n 's/.*groups \([0-9]*\):.*/\1/p' <<<"$status" | head -n1)
share=$(sed -n 's/.* 5=[0-9]* (\([0-9]*\)%).*/\1/p' <<<"$status" | head -n1)
echo "rebalance: $groups groups, n5 holds $share % of the units, done $done_ms ms after the join"
# A 6+2/2 group on five nodes deals its units to four: a node's fair share is 20 %.
(( share >= 12 && share <= 30 )) || fail "n5 holds $share % of the units, not about its 20 % share"

# 3. Everything reads back through the new node and another; parity consistent.
for i in 0 1 2 3 4 5 6 7; do
  via=127.0.1.$(( i % 2 == 0 ? 5 : 3 ))
  nfs-cp "$(url $via ifs/data-$i)" "$dir/back-$i" >/dev/null || fail "read data-$i via $via"
  cmp -s "$dir/data-$i" "$dir/back-$i" || fail "data-$i differs after the rebalance (read via $via)"
done
for i in 0 1 2 3; do
  nfs-cp "$(url 127.0.1.5 ifs/small-$i)" "$dir/back-small-$i" >/dev/null && cmp -s "$dir/small-$i" "$dir/back-small-$i" ||
    fail "small-$i differs after the rebalance"
done
"$stream" --verify --host 127.0.1.5 --dir stream --report "$dir/stream.report" >"$dir/verify.out" 2>&1 ||
  { cat "$dir/verify.out"; fail "acknowledged streaming writes lost across the rebalance"; }
cat "$dir/verify.out"
fsck_ifs rebalanced || { cat "$dir/fsck-rebalanced.log"; fail "nasd-fsck --scaleout after the rebalance"; }
tail -n 2 "$dir/fsck-rebalanced.log"

# 4. Bit rot in one unit of a 6+2 group (data unit 0 of data-3's first group, on its drive).
read -r file group version node drive < <(python3 - "$dir/catalog-rebalanced.txt" <<'EOF'
import sys
# "group FILE GROUP VERSION OFFSET LENGTH N M B UNDER NODE:DRIVE ..." (catalog_text.h)
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "group" and int(f[6]) > 1:
        node, drive = f[10].split(":")
        print(f[1], f[2], f[3], node, drive)
        break
EOF
)
[[ -n ${drive:-} ]] || fail "no 6+2 group in the catalog"
unit_file="$dir/n$node/data/ifs-1000/drive-$drive.units"
python3 - "$unit_file" "$file" "$group" "$version" <<'EOF' || fail "could not flip the unit's bytes in $unit_file"
import struct, sys
# unit_store.h: 4 KiB drive header, then 48-byte record headers {u32 magic "UNIT", u8 kind
# (1 put), ..., u64 file @8, u64 group @16, u64 version @24, u16 index @32, u32 length @36}
# each followed by its payload. The newest put of unit 0 gets 16 bytes flipped mid-payload.
path, key = sys.argv[1], tuple(int(x) for x in sys.argv[2:5])
with open(path, "r+b") as f:
    data = f.read()
    at, found = 4096, None
    while at + 48 <= len(data):
        magic, kind = struct.unpack_from("<IB", data, at)
        if magic != 0x54494E55:
            break
        fi, gr, ve, ix, ln = struct.unpack_from("<QQQHxxI", data, at + 8)
        if kind == 1 and (fi, gr, ve) == key and ix == 0:
            found = at + 48
        at += 48 + ln
    if found is None:
        sys.exit(1)
    f.seek(found + 1000)
    f.write(bytes(b ^ 0xFF for b in data[found + 1000:found + 1016]))
EOF
echo "flipped 16 bytes of unit 0 of group $group (file $file) on n$node drive $drive"
if fsck_ifs corrupted; then cat "$dir/fsck-corrupted.log"; fail "nasd-fsck --scaleout misses the flipped unit"; fi
grep -iE "corrupt|unreadable|bad" "$dir/fsck-corrupted.log" | head -n 3
scrub_start=$(now_ms)
admin_on n1 protection scrub ifs
wait_for 60 "the scrub done" protection_has "job idle; last run: scrub .*\(100%\)"
sleep 2
echo "scrub: $(protection | grep -m1 'job ') ($(( $(now_ms) - scrub_start )) ms)"
protection_has "job idle; last run: scrub .* [1-9][0-9]* units written" || fail "the scrub rewrote no unit"
fsck_ifs scrubbed || { cat "$dir/fsck-scrubbed.log"; fail "nasd-fsck --scaleout after the scrub"; }
tail -n 1 "$dir/fsck-scrubbed.log"
for i in 0 1 2 3 4 5 6 7; do
  rm -f "$dir/back-$i"  # nfs-cp does not overwrite
  nfs-cp "$(url 127.0.1.4 ifs/data-$i)" "$dir/back-$i" >/dev/null && cmp -s "$dir/data-$i" "$dir/back-$i" ||
    fail "data-$i differs after the scrub"
done
"$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
echo "PASS: n5 joined the running /r/ifs under load, rebalanced to $share % of the units in $done_ms ms; a corrupted unit found by fsck and repaired by the scrub; parity consistent after each"
