#!/usr/bin/env bash
# An I/O error under one volume (injected with the test-only `test_fault_file`): that volume
# turns read-only (changes refused, reads served, `nasd-admin volumes` and the log say so), and
# the node's other volume keeps writing at its pace through the shared NVRAM journal, which the
# failed volume no longer holds back (before, every volume then slowed to one mutation per
# space_wait). Runs in a private network namespace.
#   disk_eio_test.sh NASD_BINARY NASD_ADMIN   (exit 77 = skipped)
set -euo pipefail
nasd=$1 admin=$2
command -v nfs-cp >/dev/null || { echo "skipped: nfs-cp (libnfs-utils) missing"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"

dir=$(mktemp -d /tmp/nasd-eio-XXXXXX)
pid=
cleanup() { [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  # What the journal and the volumes looked like when it failed, to tell a held-back journal
  # from a refused connection or a slow disk.
  "$admin" --socket "$dir/nasd.sock" nvram 2>&1 | head -30 || true
  "$admin" --socket "$dir/nasd.sock" volumes 2>&1 | head -10 || true
  tail -30 "$dir/nasd.log" 2>/dev/null || true
  exit 1
}
now_ms() { date +%s%3N; }

cat >"$dir/nasd.conf" <<CONF
[node]
name = eio
data_dir = $dir
listen = 127.0.0.1
nfs_port = 2049
mount_port = 20048
udp = off
workers = 1
threads = 8
rpcbind = off
[nvram]
file = nvram.img
size = 8M
flush_interval_ms = 200
space_wait_ms = 5000
[volume v0]
id = 0
size = 256M
segment_size = 1M
cache = 32M
test_fault_file = fault
[volume v1]
id = 1
size = 4G
allocation = thin
segment_size = 1M
cache = 32M
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
url() { echo "nfs://127.0.0.1/r/$1?nfsport=2049&mountport=20048&version=3"; }
volumes() { "$admin" --socket "$dir/nasd.sock" volumes 2>/dev/null; }

"$nasd" --config "$dir/nasd.conf" >"$dir/nasd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do nfs-ls "$(url v1)" >/dev/null 2>&1 && break; sleep 0.1; done
nfs-ls "$(url v1)" >/dev/null || fail "server did not come up"
head -c $((1 << 20)) /dev/urandom >"$dir/mib"
nfs-cp "$dir/mib" "$(url v0/keep)" >/dev/null || fail "writing v0/keep"

# MiB written to v1 in 1 MiB files over `seconds` (each file wraps an eighth of the NVRAM log).
v1_rate() {
  local end=$(( $(now_ms) + $1 * 1000 )) n=0
  while (( $(now_ms) < end )); do
    # A kernel client retries NFS3ERR_JUKEBOX (NVRAM back-pressure) by itself; nfs-cp does not,
    # so a refused copy is tried again a few times. Only copies that went through count.
    local tries=0
    # A new 1 MiB file each time: v1 is sized (thin) for ~3,600 of them. At 1G a quick, quiet
    # machine wrote ~900 files in the 12 s of both windows, filled it, and the copies failed
    # with NFS3ERR_NOSPC, which looked like a held-back journal (at 256 MiB a loaded one did).
    until timeout 30 nfs-cp "$dir/mib" "$(url v1/f$RANDOM$RANDOM)" >/dev/null 2>>"$dir/v1-errors"; do
      tries=$((tries + 1))
      (( tries < 5 )) || return 1
      sleep 0.5
    done
    n=$((n + 1))
  done
  echo "$n"
}
before=$(v1_rate 4) || fail "writing v1 before the fault"

echo eio >"$dir/fault"
nfs-cp "$dir/mib" "$(url v0/lost)" >/dev/null 2>&1 || true  # taken into NVRAM, not onto the disk
for _ in $(seq 100); do volumes | grep -q "FAILED" && break; sleep 0.1; done
volumes | grep -q "^volume 0 .*FAILED" || fail "admin volumes does not report volume 0 FAILED"
grep -q "read-only" "$dir/nasd.log" || fail "the log does not report the read-only volume"
if nfs-cp "$dir/mib" "$(url v0/refused)" >/dev/null 2>&1; then fail "a write to the read-only volume succeeded"; fi
nfs-cat "$(url v0/keep)" | cmp -s - "$dir/mib" || fail "reading v0/keep from the read-only volume"
nfs-ls "$(url v0)" >/dev/null || fail "listing the read-only volume"
echo "volume 0 read-only after the injected EIO: writes refused, reads served, reported"

during=$(v1_rate 8) || { tail -3 "$dir/v1-errors" >&2; fail "writing v1 after volume 0 failed"; }
during=$(( during / 2 ))  # per 4 s
echo "1 MiB files written to v1 per 4 s: $before before volume 0 failed, $during after"
(( during * 2 >= before )) || fail "v1 slowed down: $during files per 4 s against $before"
kill -9 "$pid"
pid=
echo PASS
