#!/usr/bin/env bash
# Host disk faults against a real nasd on a small tmpfs (a private mount namespace):
#  1. an NVRAM region larger than the disk is refused at start with a clear message (before,
#     the sparse region was mapped and the first store into a missing page was a SIGBUS);
#  2. a thin volume on a host disk that fills up: writes that need space fail (NOSPC), reads go
#     on, `nasd-admin volumes` says HOST FULL, and once space is freed on the host the same
#     server takes writes again, without a restart.
#   disk_full_test.sh NASD_BINARY NASD_ADMIN   (exit 77 = skipped: needs root for the mount)
set -euo pipefail
nasd=$1 admin=$2
[[ $(id -u) == 0 ]] || { echo "skipped: needs root (private mount namespace with a tmpfs)"; exit 77; }
command -v nfs-cp >/dev/null || { echo "skipped: nfs-cp (libnfs-utils) missing"; exit 77; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"
[[ ${NASD_IN_MNTNS:-} == 1 ]] || exec env NASD_IN_MNTNS=1 unshare -m --propagation private "$0" "$@"

dir=$(mktemp -d /tmp/nasd-diskfull-XXXXXX)
disk=$dir/disk
pid=
cleanup() {
  [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
  umount "$disk" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  tail -30 "$dir/nasd.log" 2>/dev/null || true
  exit 1
}
mkdir -p "$disk"
mount -t tmpfs -o size=48m tmpfs "$disk"

write_config() {  # NVRAM_SIZE
  cat >"$dir/nasd.conf" <<CONF
[node]
name = diskfull
data_dir = $disk
listen = 127.0.0.1
nfs_port = 2049
mount_port = 20048
udp = off
workers = 1
threads = 4
rpcbind = off
admin_socket = $dir/nasd.sock
handle_key = $dir/handle.key
[nvram]
file = nvram.img
size = $1
flush_interval_ms = 200
[volume v0]
id = 0
backing = v0.lfs
size = 256M
segment_size = 1M
cache = 16M
allocation = thin
[export /r/v0]
volume = v0
clients = 127.0.0.0/8
access = rw
squash = none
CONF
}
url() { echo "nfs://127.0.0.1/r/v0/$1?nfsport=2049&mountport=20048&version=3"; }

# 1. NVRAM region larger than the disk: a clear error at start, not a signal.
write_config 64M
set +e
timeout 30 "$nasd" --config "$dir/nasd.conf" >"$dir/nasd.log" 2>&1
rc=$?
set -e
((rc != 0 && rc < 128)) || fail "nasd with a 64 MiB region on a 48 MiB disk: exit $rc (want an error exit, not a signal)"
grep -q "cannot allocate" "$dir/nasd.log" || fail "no clear message about the region"
echo "region too large for the disk: refused at start ($(grep -o 'cannot allocate[^;]*' "$dir/nasd.log" | head -1))"
rm -f "$disk"/*

# 2. A thin volume on a disk that fills up.
write_config 8M
"$nasd" --config "$dir/nasd.conf" >"$dir/nasd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do nfs-ls "$(url '')" >/dev/null 2>&1 && break; sleep 0.1; done
nfs-ls "$(url '')" >/dev/null || fail "server did not come up"
head -c $((4 << 20)) /dev/urandom >"$dir/keep"
nfs-cp "$dir/keep" "$(url keep)" >/dev/null || fail "writing keep"
sleep 1  # written through to the backing file

dd if=/dev/zero of="$disk/filler" bs=1M 2>/dev/null || true  # the host disk is now full
head -c $((24 << 20)) /dev/urandom >"$dir/big"
if timeout 60 nfs-cp "$dir/big" "$(url big)" >/dev/null 2>&1; then
  fail "24 MiB written to a full host disk"
fi
for _ in $(seq 50); do "$admin" --socket "$dir/nasd.sock" volumes 2>/dev/null | grep -q "HOST FULL" && break; sleep 0.1; done
"$admin" --socket "$dir/nasd.sock" volumes | grep -q "HOST FULL" || fail "admin volumes does not say HOST FULL"
grep -q "host filesystem is full" "$dir/nasd.log" || fail "the log does not say the host is full"
nfs-cat "$(url keep)" | cmp -s - "$dir/keep" || fail "reading keep while the host is full"
echo "host full: the write failed, reads go on, admin and log say so"

rm -f "$disk/filler"  # space returns
# The server notices the space on its next probe, so the first attempt may still meet NOSPC
# after creating its file; nfs-cp creates exclusively, so every attempt writes a new name.
after=
for try in $(seq 30); do
  if timeout 30 nfs-cp "$dir/keep" "$(url "after$try")" >/dev/null 2>>"$dir/after.err"; then
    after=after$try
    break
  fi
  sleep 0.5
done
[[ -n $after ]] || { sort "$dir/after.err" | uniq -c; fail "no write accepted after space returned"; }
nfs-cat "$(url "$after")" | cmp -s - "$dir/keep" || fail "reading back the file written after recovery"
nfs-cat "$(url keep)" | cmp -s - "$dir/keep" || fail "reading keep after recovery"
for _ in $(seq 50); do "$admin" --socket "$dir/nasd.sock" volumes | grep -q "HOST FULL" || break; sleep 0.1; done
"$admin" --socket "$dir/nasd.sock" volumes | grep -q "HOST FULL" && fail "still HOST FULL after space returned"
kill -TERM "$pid"
wait "$pid" || fail "nasd did not stop cleanly"
pid=
echo "space returned: writes accepted again without a restart; clean stop"
echo PASS
