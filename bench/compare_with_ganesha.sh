#!/usr/bin/env bash
# Runs the same nasd-loadgen load against nfs-ganesha (VFS FSAL on a temp directory) and against
# nasd (temp config, one volume), one after the other on a private loopback, then prints both
# curves, the ratio of peak ops/s, and the ratio of response times at each equal requested load.
#
#   bench/compare_with_ganesha.sh BUILD_DIR [--load OPS --steps N | --loads A,B,C]
#       [--step-seconds S] [--warmup-seconds S] [--processes N] [--fileset-mib-per-op X]
#       [--mix NAME | --mix-file FILE] [--io-size BYTES] [--nasd-nvram process|host|off]
#       [--out DIR] [--ganesha-only]
#
# BUILD_DIR holds bench/nasd-loadgen and cluster/nasd. Results (reports, CSVs, compare.png)
# go to --out (default: a new /tmp/nasd-compare.* directory, printed at the end).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() { sed -n '5,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
build=$(cd "$1" && pwd); shift

# Everything below runs in a private network/mount/PID namespace when that is allowed, so the
# rpcbind ganesha needs and the chosen ports cannot meet anything else on the machine.
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$here/netns.sh" "$0" "$build" "$@"; fi

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
nasd_nvram=process
out=""
ganesha_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --load) load=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --loads) loads=$2; shift 2 ;;
    --step-seconds) step_seconds=$2; shift 2 ;;
    --warmup-seconds) warmup_seconds=$2; shift 2 ;;
    --processes) processes=$2; shift 2 ;;
    --fileset-mib-per-op) mib_per_op=$2; shift 2 ;;
    --mix) mix=$2; shift 2 ;;
    --mix-file) mix_file=$2; shift 2 ;;
    --io-size) io_size=$2; shift 2 ;;
    --nasd-nvram) nasd_nvram=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ganesha-only) ganesha_only=1; shift ;;
    *) echo "compare_with_ganesha.sh: unknown argument $1" >&2; usage ;;
  esac
done

if [[ -n $loads ]]; then load_args=(--loads "$loads"); else load_args=(--load "$load" --steps "$steps"); fi
if [[ -n $mix_file ]]; then mix_args=(--mix-file "$(realpath "$mix_file")"); else mix_args=(--mix "$mix"); fi
loadgen=$build/bench/nasd-loadgen
[[ -x $loadgen ]] || { echo "no $loadgen: build the nasd-loadgen target first" >&2; exit 1; }
if [[ $ganesha_only == 0 && ! -x $build/cluster/nasd && ! -x $build/nasd ]]; then
  echo "no nasd binary in $build; build it, or pass --ganesha-only" >&2
  exit 1
fi
[[ -n $out ]] || out=$(mktemp -d /tmp/nasd-compare.XXXXXX)
mkdir -p "$out"

source "$here/servers/launcher_lib.sh"
ganesha_pid=""
nasd_pid=""
cleanup() {
  launcher_stop "$ganesha_pid"
  launcher_stop "$nasd_pid"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# run_against NAME PID_VARIABLE LAUNCHER [ARGS...]: start the server, run the load, stop it.
run_against() {
  local name=$1 pid_var=$2; shift 2
  echo "== $name: starting server" >&2
  launcher_start "$out/$name-server" "$@" || { echo "$name did not start" >&2; exit 1; }
  printf -v "$pid_var" '%s' "$LAUNCHER_PID"
  echo "== $name: load against $LAUNCHER_TARGET" >&2
  "$loadgen" --target "$LAUNCHER_TARGET" "${load_args[@]}" --step-seconds "$step_seconds" \
    --warmup-seconds "$warmup_seconds" --processes "$processes" --fileset-mib-per-op "$mib_per_op" \
    "${mix_args[@]}" --io-size "$io_size" --server-name "$name (bench/compare_with_ganesha.sh)" \
    --report "$out/$name.txt" --csv "$out/$name.csv"
  launcher_stop "${!pid_var}"
  printf -v "$pid_var" '%s' ""
}

run_against ganesha ganesha_pid "$here/servers/ganesha.sh" --nfs-port 32049 --mount-port 32048
[[ $ganesha_only == 1 ]] || run_against nasd nasd_pid "$here/servers/nasd.sh" "$build" --nfs-port 32059 --mount-port 32058 --nvram-mode "$nasd_nvram"

headline() { grep -o '[0-9]* Ops/Sec (Overall Response Time = [0-9.]* msec)' "$1" | head -n 1; }
echo
echo "ganesha: $(headline "$out/ganesha.txt")"
if [[ $ganesha_only == 1 ]]; then
  cat "$out/ganesha.csv"
  "$loadgen" plot "$out/ganesha.csv" "$out/compare.png" || true
  echo "results in $out"
  exit 0
fi
echo "nasd:    $(headline "$out/nasd.txt")"
echo
# Both runs used the same requested loads, so rows pair up by step.
awk -F, '
  FNR == 1 { next }
  FILENAME == ARGV[1] { g_req[$1] = $2; g_ops[$1] = $3; g_ms[$1] = $4; g_miss[$1] = $10; n = $1 > n ? $1 : n; next }
  { n_ops[$1] = $3; n_ms[$1] = $4; n_miss[$1] = $10 }
  END {
    printf "%-5s %10s   %12s %9s   %12s %9s   %s\n", "step", "requested", "ganesha op/s", "msec", "nasd op/s", "msec", "response nasd/ganesha"
    for (i = 1; i <= n; i++) {
      ratio = (g_ms[i] > 0) ? sprintf("%.2f", n_ms[i] / g_ms[i]) : "-"
      flags = (g_miss[i] ? " ganesha MISSED" : "") (n_miss[i] ? " nasd MISSED" : "")
      printf "%-5d %10.0f   %12.1f %9.3f   %12.1f %9.3f   %s%s\n", i, g_req[i], g_ops[i], g_ms[i], n_ops[i], n_ms[i], ratio, flags
      if (g_ops[i] > g_peak) g_peak = g_ops[i]
      if (n_ops[i] > n_peak) n_peak = n_ops[i]
    }
    printf "\npeak ops/s: nasd %.1f / ganesha %.1f = %.2f\n", n_peak, g_peak, (g_peak > 0 ? n_peak / g_peak : 0)
  }' "$out/ganesha.csv" "$out/nasd.csv"
"$loadgen" plot "$out/ganesha.csv" "$out/nasd.csv" "$out/compare.png" || echo "(plot failed)" >&2
echo "reports, CSVs and compare.png in $out"
