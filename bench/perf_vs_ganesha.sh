#!/usr/bin/env bash
# nasd against nfs-ganesha (VFS FSAL) on this machine, in one run: per NFS procedure the ops/s and
# the server's own CPU time per operation, sequential 1 MiB transfers next to loopback TCP
# bandwidth (iperf3, measured in the same run), and the SPECsfs2008-mix curve. Every figure is
# printed as nasd, ganesha, nasd/ganesha and (for data moved) as a fraction of loopback; the
# sequential WRITE also with what the disk under /tmp wrote meanwhile, next to what it can write.
#
#   bench/perf_vs_ganesha.sh BUILD_DIR [--full] [--only W1,W2] [--step-seconds S] [--warmup-seconds S]
#       [--load OPS --steps N | --loads A,B,C] [--processes N] [--fileset-mib-per-op X]
#       [--nasd-nvram process|host|off] [--nasd-cache SIZE] [--out DIR]
#
# Short mode (default, for CI): 1 s per point after 0.3 s of warmup, the mix at 400 and 800 ops/s.
# --full: 10 s per point after 2 s, the mix from 2,000 to 40,000 ops/s in 12 steps (past both
# servers' peaks on a 2-core machine, so the peaks are compared, not the top step), 32 MiB files
# for the sequential points. --only runs a subset of the workloads (names as in the CSV).
# Results in --out (default a new /tmp/nasd-perf.* directory): results.csv, summary.txt (the
# table, the load average, the command), ratios.png and mix.png, every loadgen report and CSV.
#
# Method: both servers run at once on a private loopback (bench/netns.sh); for each point the
# same nasd-loadgen run goes to ganesha and then to nasd, so drift in what else the machine does
# hits both alike. A point is closed loop: every client process keeps one call in flight (a
# synchronous client). The server's CPU is user + system time from /proc/PID/stat of the server
# process, read by nasd-loadgen at the start and end of the measured interval only. Before a
# point's first step the load generator waits until the server has gone idle after the fileset
# was built (--settle-seconds: 30 s at most in full mode, 5 s in short), so a point measures the
# steady state, not the write-behind of the data just created.
# Fileset rule: as compare_with_ganesha.sh (loadgen_lib.sh: volume_mib_for), over the largest
# fileset of any point; every point removes its fileset afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() { sed -n '7,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
build=$(cd "$1" && pwd); shift
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$here/netns.sh" "$0" "$build" "$@"; fi
command_line="bench/perf_vs_ganesha.sh $build $*"

source "$here/loadgen_lib.sh"
source "$here/servers/launcher_lib.sh"
full=0
for a in "$@"; do [[ $a == --full ]] && full=1; done
# Mode defaults; any option given below overrides them.
if [[ $full == 1 ]]; then
  step_seconds=10; warmup_seconds=2; loads=2000,4000,6000,8000,12000,16000,20000,24000,28000,32000,36000,40000
  processes=4; mib_per_op=0.1; seq_file_bytes=$((32 << 20)); settle=30
else
  step_seconds=1; warmup_seconds=0.3; loads=400,800
  processes=2; mib_per_op=0.01; seq_file_bytes=$((4 << 20)); settle=5
fi
nasd_nvram=process
nasd_cache=""  # --nasd-cache: the volume's cache (nasd's default when not given)
out=""
only=""
load_given=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --full) shift ;;
    --only) only=$2; shift 2 ;;
    --nasd-nvram) nasd_nvram=$2; shift 2 ;;
    --nasd-cache) nasd_cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --load) load_given=1; load_option "$1" "$2"; shift 2 ;;
    *) load_option "$1" "${2-}" && shift 2 || { echo "perf_vs_ganesha.sh: unknown argument $1" >&2; usage; } ;;
  esac
done
[[ $load_given == 0 ]] || loads=""  # --load given: it wins over the mode's --loads
loadgen_args

loadgen=$build/bench/nasd-loadgen
[[ -x $loadgen ]] || { echo "no $loadgen: build the nasd-loadgen target first" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "iperf3 is not installed (deploy/install-deps.sh)" >&2; exit 77; }
[[ -n $out ]] || out=$(mktemp -d /tmp/nasd-perf.XXXXXX)
mkdir -p "$out/runs" "$out/mixes"
log() { echo "== $*" >&2; }

# The points: NAME|CLIENTS|MIX|FILES PER PROCESS|FILE BYTES|UNIT|OPS PER UNIT|EXTRA LOADGEN OPTIONS
# UNIT is what one "operation" of the figures is; OPS PER UNIT turns loadgen operations into it.
POINTS=(
  "getattr|1 16|GETATTR 100|100|4096|ops/s|1|"
  "lookup|1 16|LOOKUP 100|100|4096|ops/s|1|"
  "access|1 16|ACCESS 100|100|4096|ops/s|1|"
  "read_4k|1 16|READ 100|16|262144|ops/s|1|--io-size 4096"
  "write_4k_unstable|1 16|WRITE 100|16|262144|ops/s|1|--io-size 4096 --write-stability unstable"
  "write_4k_file_sync|1 16|WRITE 100|16|262144|ops/s|1|--io-size 4096 --write-stability file_sync"
  "write_4k_commit|1 16|WRITE 50;COMMIT 50|16|262144|ops/s|1|--io-size 4096 --write-stability unstable"
  "create_remove|1 16|CREATE 50;REMOVE 50|100|4096|pairs/s|2|--create-when-nothing-to-remove"
  "readdirplus_1000|1 16|READDIRPLUS 100|10|4096|listings/s|1|--listing-entries 1000"
  "seq_read_1m|1 4|READ 100|10|$seq_file_bytes|ops/s|1|--io-size 1048576 --access sequential"
  "seq_write_1m|1 4|WRITE 100|10|$seq_file_bytes|ops/s|1|--io-size 1048576 --access sequential --write-stability unstable"
)
CLOSED_LOOP_LOAD=1000000  # far above what either server does: each process is a synchronous client
wanted() { [[ -z $only ]] || [[ ,$only, == *,$1,* ]]; }

# --fileset-mib-per-op that gives FILES files of BYTES per process at CLOSED_LOOP_LOAD.
mib_for() { awk -v f="$1" -v b="$2" -v p="$3" -v l=$CLOSED_LOOP_LOAD 'BEGIN { printf "%.12f", f * b * p / (l * 1048576) }'; }
point_args() {  # NAME FILES BYTES CLIENTS EXTRA: the loadgen options of one point
  local name=$1 files=$2 bytes=$3 clients=$4 extra=$5
  # shellcheck disable=SC2086
  echo --loads $CLOSED_LOOP_LOAD --processes "$clients" --max-inflight 1 --step-seconds "$step_seconds" \
    --warmup-seconds "$warmup_seconds" --mix-file "$out/mixes/$name.mix" --file-size "$bytes" \
    --fileset-mib-per-op "$(mib_for "$files" "$bytes" "$clients")" $extra
}

# The largest fileset of any point, and the mix curve's, size nasd's volume.
largest=$(fileset_bytes "$loadgen" "${LOADGEN_ARGS[@]}")
for p in "${POINTS[@]}"; do
  IFS='|' read -r name clients mix files bytes unit per extra <<<"$p"
  tr ';' '\n' <<<"$mix" >"$out/mixes/$name.mix"
  for c in $clients; do
    # shellcheck disable=SC2046
    b=$(fileset_bytes "$loadgen" $(point_args "$name" "$files" "$bytes" "$c" "$extra"))
    (( b > largest )) && largest=$b
  done
done
volume_mib=$(volume_mib_for "$largest")
# Both servers are up at once: their backing stores are needed together.
check_free_space /tmp $((largest * 21 / 20 + 268435456 + volume_mib * 1048576)) \
  "ganesha's export of the largest fileset and nasd's volume"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "load average at the start: $load_start; largest fileset $((largest / 1048576)) MiB; nasd volume $volume_mib MiB"

# Loopback TCP bandwidth, 1, 4 and 16 streams, in MB/s (10^6 bytes), as the loadgen counts MB/s.
iperf_pid=""
ganesha_launcher=""
nasd_launcher=""
cleanup() {
  [[ -z $iperf_pid ]] || { kill "$iperf_pid" 2>/dev/null || true; wait "$iperf_pid" 2>/dev/null || true; }
  launcher_stop "$ganesha_launcher"
  launcher_stop "$nasd_launcher"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
iperf_seconds=$(awk -v s="$step_seconds" 'BEGIN { print (s < 2 ? 2 : s) }')
iperf3 -s -B 127.0.0.1 -p 35201 >"$out/iperf3-server.log" 2>&1 &
iperf_pid=$!
declare -A loopback
for streams in 1 4 16; do
  loopback[$streams]=""
  # The server needs a moment to listen; and a run can end "successfully" without a figure
  # (seen once in a full suite on a loaded machine), so a run counts only once its received
  # bandwidth parses. The last failed run's JSON stays in $out for the reason.
  for _ in $(seq 50); do
    if timeout $((${iperf_seconds%.*} + 20)) iperf3 -c 127.0.0.1 -p 35201 -t "$iperf_seconds" -P "$streams" -J \
         >"$out/iperf3-$streams.json" 2>/dev/null; then
      loopback[$streams]=$(awk '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ { gsub(/[^0-9.e+]/, "", $2); printf "%.1f", $2 / 8e6; exit }' \
                           "$out/iperf3-$streams.json")
      [[ ${loopback[$streams]} =~ ^[0-9.]+$ && ${loopback[$streams]} != 0.0 ]] && break
      loopback[$streams]=""
    fi
    sleep 0.1
  done
  [[ -n ${loopback[$streams]} ]] || { echo "iperf3 with $streams streams gave no figure (see $out/iperf3-$streams.json)" >&2; exit 1; }
  log "loopback TCP, $streams streams: ${loopback[$streams]} MB/s"
done
kill "$iperf_pid" 2>/dev/null || true; wait "$iperf_pid" 2>/dev/null || true; iperf_pid=""

# The disk under /tmp, where both servers keep their data: what it writes while the sequential
# WRITE points run (nasd-loadgen --disk-device), next to what it can write (O_DIRECT, 4 MiB
# blocks, measured here). A server that puts what it acknowledges on disk at the disk's pace
# cannot go faster than this; one that keeps it in the page cache can, for a while.
disk="" disk_mb_s=""
if wanted seq_write_1m; then
  disk=$(lsblk -no KNAME "$(findmnt -no SOURCE --target /tmp 2>/dev/null)" 2>/dev/null | head -n 1 || true)
  [[ -n $disk ]] && grep -q " $disk " /proc/diskstats || disk=""
  if [[ -n $disk ]]; then
    probe=$(mktemp /tmp/nasd-perf-disk.XXXXXX)
    blocks=$([[ $full == 1 ]] && echo 512 || echo 64)
    t0=$(date +%s%N)
    if dd if=/dev/zero of="$probe" bs=4M count="$blocks" oflag=direct status=none 2>/dev/null; then
      disk_mb_s=$(awk -v b=$((blocks * 4194304)) -v ns=$(( $(date +%s%N) - t0 )) 'BEGIN { printf "%.1f", b / (ns / 1e9) / 1e6 }')
    fi
    rm -f "$probe"
    if [[ -n $disk_mb_s ]]; then
      log "disk $disk (under /tmp), O_DIRECT write of $((blocks * 4)) MiB: $disk_mb_s MB/s"
    else
      log "disk $disk (under /tmp): O_DIRECT writes refused, so no disk figures"
      disk=""
    fi
  fi
fi

start_server() {  # NAME LAUNCHER ARGS...: sets <NAME>_launcher, <NAME>_pid, <NAME>_target
  local name=$1; shift
  launcher_start "$out/$name-server" "$@" || { echo "$name did not start" >&2; exit 1; }
  [[ -n $LAUNCHER_SERVER_PID ]] || { echo "$name's launcher gave no SERVER_PID" >&2; exit 1; }
  printf -v "${name}_launcher" '%s' "$LAUNCHER_PID"
  printf -v "${name}_pid" '%s' "$LAUNCHER_SERVER_PID"
  printf -v "${name}_target" '%s' "$LAUNCHER_TARGET"
  log "$name: pid $LAUNCHER_SERVER_PID, $LAUNCHER_TARGET"
}
start_server ganesha "$here/servers/ganesha.sh" --nfs-port 32049 --mount-port 32048
start_server nasd "$here/servers/nasd.sh" "$build" --nfs-port 32059 --mount-port 32058 \
  --nvram-mode "$nasd_nvram" --volume-size "${volume_mib}M" ${nasd_cache:+--cache "$nasd_cache"}

csv=$out/results.csv
echo "workload,clients,figure,unit,nasd,ganesha,nasd_over_ganesha,ceiling_mb_s,nasd_of_ceiling,ganesha_of_ceiling" >"$csv"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b + 0 > 0) printf "%.2f", a / b }'; }
row() {  # WORKLOAD CLIENTS FIGURE UNIT NASD GANESHA [CEILING: loopback, or the disk's]
  local lb=${7-} nf="" gf=""
  [[ -z $lb ]] || { nf=$(ratio "$5" "$lb"); gf=$(ratio "$6" "$lb"); }
  echo "$1,$2,$3,$4,$5,$6,$(ratio "$5" "$6"),$lb,$nf,$gf" >>"$csv"
}
# field CSV COLUMN: that column of the first step of a loadgen CSV ("" when missing).
field() { [[ -s $1 ]] && awk -F, -v c="$2" 'NR == 2 { print $c }' "$1" || true; }

# per_unit CSV COLUMN PER MULTIPLY: a loadgen figure per unit of the point ("" when missing):
# ops/s divided by the operations per unit, CPU per operation multiplied by them.
per_unit() {
  awk -v v="$(field "$1" "$2")" -v per="$3" -v mul="$4" 'BEGIN { if (v != "") printf "%.1f", mul ? v * per : v / per }'
}

failed=0
run_point() {  # SERVER NAME CLIENTS ARGS...: one loadgen run; its CSV is runs/SERVER-NAME-cCLIENTS.csv
  local server=$1 name=$2 clients=$3; shift 3
  local pid_var=${server}_pid target_var=${server}_target base="$out/runs/$server-$name-c$clients"
  if ! "$loadgen" --target "${!target_var}" "$@" --server-pid "${!pid_var}" --settle-seconds "$settle" --cleanup --quiet \
       --server-name "$server (bench/perf_vs_ganesha.sh)" --report "$base.txt" --csv "$base.csv" 2>"$base.err"; then
    echo "$server $name with $clients clients failed: $(tail -n 3 "$base.err")" >&2
    failed=1
  fi
  local errors; errors=$(field "$base.csv" 8)
  [[ -z $errors || $errors == 0 ]] || { echo "WARNING: $server $name c$clients had $errors NFS errors" >&2; failed=1; }
}

for p in "${POINTS[@]}"; do
  IFS='|' read -r name clients mix files bytes unit per extra <<<"$p"
  wanted "$name" || continue
  for c in $clients; do
    log "$name, $c clients"
    # shellcheck disable=SC2046
    watch=()
    [[ $name != seq_write_1m || -z $disk ]] || watch=(--disk-device "$disk")
    for server in ganesha nasd; do run_point "$server" "$name" "$c" $(point_args "$name" "$files" "$bytes" "$c" "$extra") "${watch[@]}"; done
    n=$out/runs/nasd-$name-c$c.csv g=$out/runs/ganesha-$name-c$c.csv
    row "$name" "$c" ops_per_s "$unit" "$(per_unit "$n" 3 "$per" 0)" "$(per_unit "$g" 3 "$per" 0)"
    row "$name" "$c" cpu_us_per_op "usec per ${unit%/s}" "$(per_unit "$n" 15 "$per" 1)" "$(per_unit "$g" 15 "$per" 1)"
    if [[ $name == read_* || $name == write_* || $name == seq_* ]]; then
      lb=${loopback[$c]}
      row "$name" "$c" mb_per_s MB/s "$(field "$n" 13)" "$(field "$g" 13)" "$lb"
    fi
    if [[ $name == seq_write_1m && -n $disk ]]; then
      row "$name" "$c" disk_written_mb_per_s MB/s "$(field "$n" 16)" "$(field "$g" 16)" "$disk_mb_s"
    fi
  done
done

# The SPECsfs2008-mix curve (or the --mix/--mix-file given), same load against each server.
if wanted specsfs_mix; then
  for server in ganesha nasd; do
    log "$server: mix curve (${LOADGEN_ARGS[*]})"
    pid_var=${server}_pid target_var=${server}_target
    mkdir -p "$out/mix"
    "$loadgen" --target "${!target_var}" "${LOADGEN_ARGS[@]}" --server-pid "${!pid_var}" --settle-seconds "$settle" --cleanup --quiet \
      --server-name "$server (bench/perf_vs_ganesha.sh)" --report "$out/mix/$server.txt" --csv "$out/mix/$server.csv" \
      2>"$out/mix/$server.err" || { echo "$server mix curve failed: $(tail -n 3 "$out/mix/$server.err")" >&2; failed=1; }
  done
  # Step rows by requested load, then the peak and the overall response time from the reports.
  if [[ -s $out/mix/nasd.csv && -s $out/mix/ganesha.csv ]]; then
    while IFS=, read -r req n_ops n_ms n_cpu g_ops g_ms g_cpu; do
      row specsfs_mix "$processes" "ops_per_s@$req" ops/s "$n_ops" "$g_ops"
      row specsfs_mix "$processes" "response_ms@$req" msec "$n_ms" "$g_ms"
      row specsfs_mix "$processes" "cpu_us_per_op@$req" usec "$n_cpu" "$g_cpu"
    done < <(awk -F, 'FNR == 1 { next } FILENAME == ARGV[1] { n[$1] = $3 "," $4 "," $15; next }
                      { printf "%.0f,%s,%s,%s,%s\n", $2, n[$1], $3, $4, $15 }' "$out/mix/nasd.csv" "$out/mix/ganesha.csv")
    peak() { report_headline "$1" | awk '{ print $1 }'; }
    overall() { report_headline "$1" | sed 's/.*= \([0-9.]*\) msec.*/\1/'; }
    row specsfs_mix "$processes" peak_ops_per_s ops/s "$(peak "$out/mix/nasd.txt")" "$(peak "$out/mix/ganesha.txt")"
    row specsfs_mix "$processes" overall_response_ms msec "$(overall "$out/mix/nasd.txt")" "$(overall "$out/mix/ganesha.txt")"
  fi
fi
for streams in 1 4 16; do row loopback_tcp "$streams" mb_per_s MB/s "" "" "${loopback[$streams]}"; done

launcher_stop "$ganesha_launcher"; ganesha_launcher=""
launcher_stop "$nasd_launcher"; nasd_launcher=""
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# The table, and what it was measured on.
{
  echo "bench/perf_vs_ganesha.sh ($([[ $full == 1 ]] && echo full || echo short) mode), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "command: $command_line"
  echo "nasd: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(ganesha.nfsd -v 2>/dev/null | grep -o 'Release = V[0-9.]*' | head -n 1 || true)"
  echo "machine: $(nproc) CPUs; load average (1/5/15 min) at start $load_start, at end $load_end"
  echo "nasd volume: ${volume_mib} MiB, cache ${nasd_cache:-as nasd decides (cache = auto)}, NVRAM $nasd_nvram; ganesha: the kernel's page cache"
  echo "points: $step_seconds s measured after $warmup_seconds s warmup; closed loop, one call in flight per client"
  echo
  awk -F, 'NR == 1 { printf "%-19s %7s %-20s %12s %12s %9s %10s %9s %9s\n", "workload", "clients", "figure", "nasd", "ganesha",
                     "nasd/gan", "ceiling", "nasd/ceil", "gan/ceil"; next }
           { printf "%-19s %7s %-20s %12s %12s %9s %10s %9s %9s\n", $1, $2, $3, $5, $6, $7, $8, $9, $10 }' "$csv"
  echo
  echo "ops/s: operations per second (create_remove: CREATE+REMOVE pairs; readdirplus_1000: whole listings)."
  echo "cpu_us_per_op: server process user+system CPU over the measured interval / operations."
  echo "MB/s: 10^6 bytes of READ/WRITE payload per second; ceiling: loopback TCP (iperf3 over 127.0.0.1 with as many streams as clients, 16 for 16),"
  echo "  or for disk_written_mb_per_s the disk's own O_DIRECT write bandwidth${disk:+ ($disk, under /tmp: $disk_mb_s MB/s)}."
  echo "disk_written_mb_per_s: what that disk wrote per second during the point (both servers' data is on it; /proc/diskstats)."
} >"$out/summary.txt"
cat "$out/summary.txt"

# Plots: the mix curves (nasd-loadgen's plot), and the nasd/ganesha ratios per point.
if [[ -s $out/mix/nasd.csv && -s $out/mix/ganesha.csv ]]; then
  "$loadgen" plot "$out/mix/ganesha.csv" "$out/mix/nasd.csv" "$out/mix.png" || echo "(mix plot failed)" >&2
fi
if command -v gnuplot >/dev/null; then
  awk -F, 'NR > 1 && $7 != "" && ($3 == "ops_per_s" || $3 == "cpu_us_per_op") {
             k = $1 " c" $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
             v[k, $3] = $7 }
           END { for (i = 1; i <= n; i++) print order[i], (v[order[i], "ops_per_s"] == "" ? "-" : v[order[i], "ops_per_s"]),
                                                  (v[order[i], "cpu_us_per_op"] == "" ? "-" : v[order[i], "cpu_us_per_op"]) }' "$csv" |
    sed 's/^\([^ ]*\) c/\1_c/' >"$out/ratios.dat"
  if [[ -s $out/ratios.dat ]]; then
    gnuplot <<GP 2>"$out/gnuplot.err" || echo "(ratio plot failed: $(cat "$out/gnuplot.err"))" >&2
set terminal pngcairo size 1200,600
set output '$out/ratios.png'
set title 'nasd / ganesha per point (ops/s: higher is better for nasd; CPU per op: lower is better)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile missing '-'
set xtics rotate by -40 noenhanced
set bmargin 9
set rmargin 8
set grid ytics
set logscale y
set yrange [0.01:100]
set ylabel 'nasd / ganesha (log scale)'

set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot '$out/ratios.dat' using 2:xtic(1) title 'ops/s nasd/ganesha', '' using 3 title 'CPU per op nasd/ganesha'
GP
  fi
fi
echo "results.csv, summary.txt, ratios.png, mix.png and every run's report in $out"
exit "$failed"
