#!/usr/bin/env bash
# Checks on the wire that every load operation is exactly one NFS procedure of its type: capture
# the run with tshark and compare the calls per procedure with the counts in the report.
#   wire_procedures.sh LOADGEN LAUNCHER [LAUNCHER ARGS...]
# Only procedures the fileset build never sends are compared (the build also MKDIRs, CREATEs,
# WRITEs, COMMITs, ...). Exit 77 (skip) without tshark or the server.
# WIRE_LOAD_ARGS replaces the load options (e.g. "--workload eda --business-metric 1"): then a
# procedure the mix leaves out must not be on the wire beyond what the build sends.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: wire_procedures.sh LOADGEN LAUNCHER [ARGS...]" >&2; exit 2; }
loadgen=$1; shift
command -v tshark >/dev/null || { echo "SKIP: tshark is not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../bench/servers/launcher_lib.sh"

work=$(mktemp -d /tmp/nasd-bench-wire.XXXXXX)
capture_pid="" cat_pid=""
trap '[[ -z $capture_pid ]] || kill "$capture_pid" 2>/dev/null; [[ -z $cat_pid ]] || kill "$cat_pid" 2>/dev/null
      launcher_stop; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

nfs_port=32159
launcher_start_or_skip "$work/server" "$@" --nfs-port $nfs_port --mount-port 32158

# Through a FIFO, so that dumpcap flushes every packet and the file shows how far it got.
mkfifo "$work/capture.fifo"
cat "$work/capture.fifo" >"$work/run.pcap" &
cat_pid=$!
tshark -i lo -B 64 -f "tcp port $nfs_port" -w "$work/capture.fifo" -q 2>"$work/tshark.err" &
capture_pid=$!
# "Capture started" is the moment packets are really kept (this tshark says it after "Capturing on").
# On a loaded machine tshark can take many seconds to start; a capture that began late would
# count only part of the run, so wait longer and skip rather than compare half a capture.
for _ in $(seq 300); do grep -q 'Capture started' "$work/tshark.err" 2>/dev/null && break; sleep 0.1; done
grep -q 'Capture started' "$work/tshark.err" || { echo "SKIP: tshark did not start capturing within 30 s"; exit 77; }
grep -q 'Capturing on' "$work/tshark.err" || { echo "SKIP: tshark cannot capture here"; cat "$work/tshark.err"; exit 77; }

# One step, no warmup, a low load: every request is inside the measured interval and at most a
# handful of replies can arrive after it ends.
read -r -a load_args <<<"${WIRE_LOAD_ARGS:---loads 300 --fileset-mib-per-op 0.01}"
"$loadgen" --target "$LAUNCHER_TARGET" "${load_args[@]}" --step-seconds 3 --warmup-seconds 0 --processes 2 \
  --quiet --report "$work/report.txt"
# Procedures the mix asks for (the report's Proportions line), to tell "absent by design" apart.
in_mix=$(awk -F'  +' '/^  Proportions/ { print $3 }' "$work/report.txt")

# The capture is whole when every TCP connection in it is there from its SYN to its end (FIN,
# or RST when the load generator exits with replies unread), with no segment missing between. A loaded machine can leave dumpcap seconds behind the traffic
# (half a capture was seen in CI), so wait for the ends before stopping it, and skip rather
# than compare counts of a capture that is not whole.
streams() { tshark -r "$work/run.pcap" ${1:+-Y "$1"} -T fields -e tcp.stream 2>/dev/null | sort -u | wc -l; }
ended='tcp.flags.fin == 1 || tcp.flags.reset == 1'
whole_to_the_end() {
  local all; all=$(streams)
  (( all > 0 )) && [[ $(streams "$ended") == "$all" ]]
}
for _ in $(seq 40); do whole_to_the_end && break; sleep 0.5; done
kill -INT "$capture_pid"; wait "$capture_pid" || true; capture_pid=""
wait "$cat_pid" || true; cat_pid=""
# A capture that lost packets cannot prove anything either way (seen on a loaded machine).
if grep -Eq '[1-9][0-9]* packets? dropped' "$work/tshark.err"; then
  echo "SKIP: the capture dropped packets:"; cat "$work/tshark.err"; exit 77
fi
all=$(streams)
with_syn=$(streams "tcp.flags.syn == 1 && tcp.flags.ack == 0")
with_end=$(streams "$ended")
gaps=$(tshark -r "$work/run.pcap" -Y "tcp.analysis.lost_segment || tcp.analysis.ack_lost_segment" 2>/dev/null | wc -l)
if (( all == 0 || with_syn != all || with_end != all || gaps > 0 )); then
  echo "SKIP: the capture is not whole ($all connections, $with_syn from their SYN, $with_end to their end, $gaps gaps)"
  exit 77
fi

# Calls (rpc.msgtyp 0) per NFSv3 procedure number; one frame can carry several RPCs.
# "-d ...,rpc" decodes the port as RPC from the first byte of each stream. Without it tshark finds
# RPC on a port that is not 2049 by a heuristic that looks at each segment's start, and a stream
# whose segments begin inside a record (calls batched back to back) was once left undecoded:
# half the calls "missing" from a whole capture in CI.
tshark -r "$work/run.pcap" -d "tcp.port==$nfs_port,rpc" -Y nfs -T fields -e rpc.msgtyp -e nfs.procedure_v3 2>/dev/null |
  awk -F'\t' '{ n = split($1, t, ","); split($2, p, ","); for (i = 1; i <= n; i++) if (t[i] == 0) c[p[i]]++ }
              END { for (k in c) print k, c[k] }' > "$work/wire.txt"
awk '/^Achieved Operation Mix/ { on = 1; next } on && /^[A-Z]+ +[0-9]+ / { print $1, $2 } /^Requests sent/ { on = 0 }' \
  "$work/report.txt" > "$work/measured.txt"

fail=0
# name:procedure number:calls the fileset build may add (of 2 processes making the shared
# workdir, the second finds it made and LOOKUPs it).
for entry in GETATTR:1:0 SETATTR:2:0 LOOKUP:3:1 ACCESS:4:0 READLINK:5:0 READ:6:0 REMOVE:12:0 READDIR:16:0 READDIRPLUS:17:0; do
  IFS=: read -r name proc build <<<"$entry"
  measured=$(awk -v n="$name" '$1 == n { print $2 }' "$work/measured.txt"); measured=${measured:-0}
  wire=$(awk -v p="$proc" '$1 == p { print $2 }' "$work/wire.txt"); wire=${wire:-0}
  # The wire may show a few more: the build's calls, and calls whose replies landed after the
  # measured interval ended. Fewer would mean ops were counted that the server never saw.
  if [[ -n ${WIRE_LOAD_ARGS:-} && $in_mix != *"$name "* ]]; then
    if (( measured != 0 || wire > build )); then
      echo "FAIL: $name is not in the mix but measured $measured, on the wire $wire" >&2; fail=1
    else
      echo "ok: $name not in the mix, on the wire $wire"
    fi
    continue
  fi
  # A procedure with a share of a few percent may not come up at all in a short workload run.
  if [[ -n ${WIRE_LOAD_ARGS:-} ]] && (( measured == 0 && wire <= build )); then
    echo "ok: $name in the mix but not drawn in this short run"; continue
  fi
  # Slack for calls whose replies landed after the interval: 8, or 3% at higher counts (large
  # SFS2014 transfers keep more in flight when the step ends on a loaded machine).
  slack=$(( measured * 3 / 100 > 8 ? measured * 3 / 100 : 8 ))
  if (( measured == 0 || wire < measured || wire > measured + build + slack )); then
    echo "FAIL: $name measured $measured, on the wire $wire" >&2; fail=1
  else
    echo "ok: $name measured $measured, on the wire $wire"
  fi
done
if [[ $fail != 0 ]]; then
  echo "calls decoded per connection (stream, calls):"
  tshark -r "$work/run.pcap" -d "tcp.port==$nfs_port,rpc" -Y "rpc.msgtyp == 0" -T fields -e tcp.stream 2>/dev/null |
    sort | uniq -c | awk '{ print "  " $2, $1 }'
  cat "$work/report.txt"; exit 1
fi
echo "wire: 1 passed, 0 failed"
