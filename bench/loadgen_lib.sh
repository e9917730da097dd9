# shellcheck shell=bash
# The nasd-loadgen load that the benchmark scripts share: its options with their defaults, the
# arguments they become, and readers of the results. Source, don't execute; a script may change
# a default after sourcing and before parsing its arguments.
#   --load OPS --steps N | --loads A,B,C, --step-seconds S, --warmup-seconds S, --processes N,
#   --fileset-mib-per-op X, --mix NAME | --mix-file FILE, --io-size BYTES

load=2000
steps=5
loads=""
step_seconds=10
warmup_seconds=2
processes=2
mib_per_op=0.1
mix=specsfs2008
mix_file=""
io_size=32768

# load_option NAME VALUE: takes one of the shared options (the caller then shifts 2);
# returns 1 for any other name.
load_option() {
  case "$1" in
    --load) load=$2 ;;
    --steps) steps=$2 ;;
    --loads) loads=$2 ;;
    --step-seconds) step_seconds=$2 ;;
    --warmup-seconds) warmup_seconds=$2 ;;
    --processes) processes=$2 ;;
    --fileset-mib-per-op) mib_per_op=$2 ;;
    --mix) mix=$2 ;;
    --mix-file) mix_file=$2 ;;
    --io-size) io_size=$2 ;;
    *) return 1 ;;
  esac
}

# loadgen_args: the shared options as nasd-loadgen arguments, in the array LOADGEN_ARGS, so that
# every run of a comparison asks for exactly the same load.
loadgen_args() {
  if [[ -n $loads ]]; then LOADGEN_ARGS=(--loads "$loads"); else LOADGEN_ARGS=(--load "$load" --steps "$steps"); fi
  LOADGEN_ARGS+=(--step-seconds "$step_seconds" --warmup-seconds "$warmup_seconds" --processes "$processes"
                 --fileset-mib-per-op "$mib_per_op" --io-size "$io_size")
  if [[ -n $mix_file ]]; then LOADGEN_ARGS+=(--mix-file "$(realpath "$mix_file")"); else LOADGEN_ARGS+=(--mix "$mix"); fi
}

# report_headline REPORT: "N Ops/Sec (Overall Response Time = X msec)" from a report.
report_headline() { grep -o '[0-9]* Ops/Sec (Overall Response Time = [0-9.]* msec)' "$1" | head -n 1; }

# step_table BASE.csv BASE_NAME OTHER.csv OTHER_NAME: both curves side by side, one row per step
# (the runs used the same requested loads, so rows pair up by step), the response time ratio
# OTHER/BASE at each step, then the ratio of the peaks.
step_table() {
  awk -F, -v bn="$2" -v on="$4" '
    FNR == 1 { next }
    FILENAME == ARGV[1] { b_req[$1] = $2; b_ops[$1] = $3; b_ms[$1] = $4; b_miss[$1] = $10; n = $1 > n ? $1 : n; next }
    { o_ops[$1] = $3; o_ms[$1] = $4; o_miss[$1] = $10 }
    END {
      printf "%-5s %10s   %12s %9s   %12s %9s   %s\n", "step", "requested", bn " op/s", "msec", on " op/s", "msec", "response " on "/" bn
      for (i = 1; i <= n; i++) {
        ratio = (b_ms[i] > 0) ? sprintf("%.2f", o_ms[i] / b_ms[i]) : "-"
        flags = (b_miss[i] ? " " bn " MISSED" : "") (o_miss[i] ? " " on " MISSED" : "")
        printf "%-5d %10.0f   %12.1f %9.3f   %12.1f %9.3f   %s%s\n", i, b_req[i], b_ops[i], b_ms[i], o_ops[i], o_ms[i], ratio, flags
        if (b_ops[i] > b_peak) b_peak = b_ops[i]
        if (o_ops[i] > o_peak) o_peak = o_ops[i]
      }
      printf "\npeak ops/s: %s %.1f / %s %.1f = %.2f\n", on, o_peak, bn, b_peak, (b_peak > 0 ? o_peak / b_peak : 0)
    }' "$1" "$3"
}

# The fileset rule and the volume that holds it.
# fileset_bytes LOADGEN [RUN OPTIONS...]: the bytes of file data the run will create on one target,
# from nasd-loadgen's own plan (so the rule is written once): the highest requested load in ops/s
# × --fileset-mib-per-op MiB (SPECsfs2008: 120 MiB per op/s), with at least 10 files per process,
# split over the targets. Needs no server (a placeholder target is enough).
fileset_bytes() {
  local loadgen=$1; shift
  "$loadgen" fileset-bytes --target nfs://127.0.0.1/placeholder "$@"
}

# volume_mib_for FILESET_BYTES: the nasd volume (MiB) for a fileset: twice the fileset plus 512 MiB,
# and never less than 2 GiB. nasd's log-structured volume keeps about 3% for its cleaner and
# admits live data only up to 92% of the rest; at half full the cleaner finds nearly empty
# segments, so it does not eat the run. The 512 MiB hold directories, inodes, the files CREATE
# adds during the run, and the log's checkpoints.
volume_mib_for() {
  awk -v b="$1" 'BEGIN { m = int((2 * b) / 1048576 + 0.999999) + 512; if (m < 2048) m = 2048; print m }'
}

# check_free_space DIR BYTES WHAT: fails with a message when the file system of DIR has less than
# BYTES free (the ganesha export directory and the nasd volume file both live there, and nasd
# reserves its whole volume file when it creates it).
check_free_space() {
  local avail
  avail=$(df -P -B1 "$1" | awk 'NR == 2 { print $4 }')
  if [[ -n $avail ]] && awk -v a="$avail" -v n="$2" 'BEGIN { exit !(a < n) }'; then
    echo "not enough space in $1 for $3: it needs $2 bytes, $avail are free" >&2
    return 1
  fi
}
