#!/usr/bin/env bash
# Per-directory protection on the scale-out volume (OneFS isi set -p), end to end:
#  1. 4 nodes with --scale-out; a streaming writer makes /r/ifs/d and files in it (the volume's
#     default +2d:1n), and a file is written at the root;
#  2. `nasd-admin protection set ifs /d +3d:1n` on the coordinator (n1): a policy the cluster
#     cannot honour (+4n: five nodes) is refused; the files already in /d are restriped in the
#     background and new files written into /d are planned with it: every group of every file
#     in /d is N+3/3 (`protection get`), the root's file stays N+2/2;
#  3. changed to +1n: the restripe job re-lays them all as N+1/1 (progress in
#     `nasd-admin protection ifs`), everything reads back, the acknowledged streaming writes
#     verify, and nasd-fsck --scaleout finds every group's parity consistent;
#  4. the policy is cleared and n1 is killed with kill -9 while the restripe runs: n2 takes
#     the volume over, knows the cleared policy (it was checkpointed before the admin was
#     answered), finishes the restripe (and the re-protect of n1's units) and everything still
#     reads back.
# Runs in a private network namespace.
#   ifs_policy_test.sh NASD_BINARY NASD_FSCK NASD_HA_LOAD NASD_IFS_STREAM   (exit 77 = skipped)
set -euo pipefail
nasd=$1 fsck=$2 ha_load=$3 stream=$4 test_name=ifs-policy
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
export VOLUME_SIZE=64M
source "$(dirname "$0")/n_node_lib.sh"
[[ -x $stream ]] || { echo "SKIP: no nasd-ifs-stream at $stream"; exit 77; }
coordinator=n1
protection() { admin_on "$coordinator" protection ifs 2>/dev/null; }
protection_has() { grep -qE "$1" <<<"$(protection)"; }  # not a pipe: grep -q would end it early
not_striped_zero() { admin_on "$coordinator" volumes 2>/dev/null | grep -qE "not yet striped 0 bytes"; }
restriped() { protection_has "restripe due 0$" && protection_has "job idle"; }
put() {
  local try
  for try in 1 2 3; do nfs-cp "$dir/$1" "$(url "$2" "ifs/$3")" >/dev/null 2>&1 && return 0; sleep 1; done
  fail "write $3 through $2"
}
# shapes PATH: the shapes (N+M/b) of the file's groups, from the coordinator.
shapes() { admin_on "$coordinator" protection get ifs "$1" | sed -n 's/.*; groups: //p'; }
# all_shapes SUFFIX: every group of every file in /d ends in SUFFIX (e.g. +3/3).
all_shapes() {
  local f s files groups=0
  files=$(files_in_d) || return 1
  [[ $(wc -w <<<"$files") -ge 4 ]] || { echo "only $(wc -w <<<"$files") files listed in /d"; return 1; }
  for f in $files; do
    s=$(shapes "/d/$f") || return 1
    [[ -n $s ]] || { echo "/d/$f: no groups"; return 1; }
    # An empty file has none (the streaming writer, stopped by its time limit, may leave one).
    if [[ $s == "none yet" ]]; then
      [[ $(size_in_d "$f") == 0 ]] && continue
      echo "/d/$f: not empty but no groups"; return 1
    fi
    for s in $s; do
      [[ $s == *"$1" ]] || { echo "/d/$f: group $s is not *$1"; return 1; }
      groups=$((groups + 1))
    done
  done
  [[ $groups -gt 0 ]] || { echo "no groups in /d"; return 1; }
  echo "every group of the $(wc -w <<<"$files") files in /d is N$1 ($groups groups)"
}
size_in_d() { nfs-ls "$(url 127.0.1.3 ifs/d)" | awk -v f="$1" '$NF == f {print $(NF-1)}'; }
files_in_d() { nfs-ls "$(url 127.0.1.3 ifs/d)" | awk '$NF != "." && $NF != ".." {print $NF}'; }
fsck_ifs() {
  admin_on "$coordinator" protection catalog ifs >"$dir/catalog-$1.txt"
  "$fsck" --scaleout "$dir/catalog-$1.txt" --volume-id 1000 --drives 4 \
    1="$dir/n1/data/ifs-1000" 2="$dir/n2/data/ifs-1000" 3="$dir/n3/data/ifs-1000" \
    4="$dir/n4/data/ifs-1000" >"$dir/fsck-$1.log" 2>&1
}
read_back() {
  local i via=$1
  for i in 0 1 2; do
    rm -f "$dir/back-$i"
    nfs-cp "$(url "$via" "ifs/d/new-$i")" "$dir/back-$i" >/dev/null || fail "read d/new-$i via $via ($2)"
    cmp -s "$dir/new-$i" "$dir/back-$i" || fail "d/new-$i differs ($2)"
  done
  rm -f "$dir/back-root"
  nfs-cp "$(url "$via" ifs/at-root)" "$dir/back-root" >/dev/null && cmp -s "$dir/at-root" "$dir/back-root" ||
    fail "at-root differs ($2)"
  "$stream" --verify --host "$via" --dir d --report "$dir/stream.report" >"$dir/verify.out" 2>&1 ||
    { cat "$dir/verify.out"; fail "acknowledged streaming writes lost ($2)"; }
}

start_nodes --nodes 4 --volumes-per-node 1 --scale-out

# 1. /d and its first files under the volume's default; a file at the root.
"$stream" --host 127.0.1.2 --dir d --seconds 4 --max-mib 12 --file-mib 2 \
  --report "$dir/stream.report" >"$dir/stream.out" 2>&1 || { cat "$dir/stream.out"; fail "the streaming writer"; }
head -c $((2 * 1024 * 1024 + 333)) /dev/urandom >"$dir/at-root"
put at-root 127.0.1.4 at-root
wait_for 30 "the files striped (write-behind)" not_striped_zero
all_shapes "+2/2" || fail "files in /d not under the default +2d:1n: $(shapes /d/$(files_in_d | head -n1))"

# 2. +3d:1n on /d.
if out=$(admin_on n1 protection set ifs /d +4n 2>&1); then fail "+4n accepted on 4 nodes: $out"; fi
grep -q "needs" <<<"$out" || fail "+4n refused without saying what it needs: $out"
echo "refused: $out"
admin_on n1 protection set ifs /d +3d:1n
admin_on n1 protection get ifs /d | grep -q "+3d:1n (set on the directory itself)" || fail "get /d: $(admin_on n1 protection get ifs /d)"
for i in 0 1 2; do
  head -c $((1024 * 1024 + i * 700000 + 17)) /dev/urandom >"$dir/new-$i"
  put "new-$i" 127.0.1.$((i + 2)) "d/new-$i"
done
admin_on n1 protection get ifs /d/new-0 | grep -q "+3d:1n (inherited from /d)" || fail "get /d/new-0: $(admin_on n1 protection get ifs /d/new-0)"
wait_for 30 "the new files striped" not_striped_zero
wait_for 120 "the restripe to +3d:1n done" restriped
all_shapes "+3/3" || fail "groups in /d not N+3/3 under +3d:1n"
[[ $(shapes /at-root) != *"+3/3"* ]] || fail "the root's file took /d's policy"
echo "/d under +3d:1n: $(files_in_d | wc -l) files, e.g. new-2: $(shapes /d/new-2); at-root: $(shapes /at-root)"

# 3. +1n: every group re-laid.
changed=$(now_ms)
admin_on n1 protection set ifs /d +1n
wait_for 120 "the restripe to +1n done" restriped
echo "restripe +3d:1n -> +1n: $(( $(now_ms) - changed )) ms; $(protection | grep -m1 'job ')"
protection_has "last run: restripe .* [1-9][0-9]* groups restriped" || fail "no restripe run shown: $(protection | head -n 4)"
all_shapes "+1/1" || fail "groups in /d not N+1/1 under +1n"
[[ $(shapes /at-root) == *"+2/2"* ]] || fail "the root's file lost the default: $(shapes /at-root)"
read_back 127.0.1.3 "after the restripe to +1n"
sleep 2  # the pass's last checkpoint and the deletes of the old units
fsck_ifs plus1n || { cat "$dir/fsck-plus1n.log"; fail "nasd-fsck --scaleout after the restripe"; }
tail -n 1 "$dir/fsck-plus1n.log"

# 4. Cleared, and the coordinator killed while the restripe runs.
admin_on n1 protection clear ifs /d
kill -9 "$(pid_of n1)"
killed=$(now_ms)
coordinator=n2
wait_for 40 "n2 coordinating ifs" cluster_line n2 "^    volume ifs .*served here"
echo "takeover: n2 coordinates /r/ifs $(( $(now_ms) - killed )) ms after the kill of n1"
admin_on n2 protection get ifs /d | grep -q "(the volume default)" || fail "the cleared policy was lost: $(admin_on n2 protection get ifs /d)"
wait_for 240 "restripe and re-protect done on n2" \
  protection_has "0 degraded, 0 lost, 0 unbalanced; units lost 0; restripe due 0$"
wait_for 30 "the job idle" protection_has "job idle"
all_shapes "+2/2" || fail "groups in /d not back at +2d:1n after the takeover"
read_back 127.0.1.4 "after the kill -9 of the coordinator mid-restripe"
sleep 2
fsck_ifs takeover || { cat "$dir/fsck-takeover.log"; fail "nasd-fsck --scaleout after the takeover"; }
tail -n 1 "$dir/fsck-takeover.log"
"$root/deploy/stop-cluster.sh" >"$dir/stop.log" 2>&1 || { cat "$dir/stop.log"; fail "stop-cluster.sh"; }
echo "PASS: /d's policy shaped new and existing groups (+3d:1n, then +1n), restriped in the background with everything read back and parity consistent; cleared, it survived kill -9 of the coordinator mid-restripe"
