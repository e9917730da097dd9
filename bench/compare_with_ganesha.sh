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
# Fileset rule: highest requested load × --fileset-mib-per-op MiB (at least 10 files per process),
# as nasd-loadgen plans it; nasd's volume is twice that plus 512 MiB (at least 2 GiB), and /tmp
# must have room for the fileset (ganesha's export) and that volume before anything starts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() { sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
build=$(cd "$1" && pwd); shift

# Everything below runs in a private network/mount/PID namespace when that is allowed, so the
# rpcbind ganesha needs and the chosen ports cannot meet anything else on the machine.
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$here/netns.sh" "$0" "$build" "$@"; fi

source "$here/loadgen_lib.sh"
nasd_nvram=process
out=""
ganesha_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nasd-nvram) nasd_nvram=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ganesha-only) ganesha_only=1; shift ;;
    *) load_option "$1" "${2-}" && shift 2 || { echo "compare_with_ganesha.sh: unknown argument $1" >&2; usage; } ;;
  esac
done

loadgen_args
loadgen=$build/bench/nasd-loadgen
[[ -x $loadgen ]] || { echo "no $loadgen: build the nasd-loadgen target first" >&2; exit 1; }
if [[ $ganesha_only == 0 && ! -x $build/cluster/nasd && ! -x $build/nasd ]]; then
  echo "no nasd binary in $build; build it, or pass --ganesha-only" >&2
  exit 1
fi
[[ -n $out ]] || out=$(mktemp -d /tmp/nasd-compare.XXXXXX)
mkdir -p "$out"

# Size nasd's volume to the fileset of the requested load (see the rule above) and make sure
# both servers' backing stores fit before starting either.
fileset=$(fileset_bytes "$loadgen" "${LOADGEN_ARGS[@]}")
volume_mib=$(volume_mib_for "$fileset")
echo "== fileset $((fileset / 1048576)) MiB; nasd volume ${volume_mib} MiB" >&2
check_free_space /tmp $((fileset * 21 / 20 + 268435456)) "ganesha's export of the fileset"
[[ $ganesha_only == 1 ]] || check_free_space /tmp $((volume_mib * 1048576)) "nasd's volume"

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
  "$loadgen" --target "$LAUNCHER_TARGET" "${LOADGEN_ARGS[@]}" ${LAUNCHER_SERVER_PID:+--server-pid "$LAUNCHER_SERVER_PID"} --server-name "$name (bench/compare_with_ganesha.sh)" \
    --report "$out/$name.txt" --csv "$out/$name.csv"
  launcher_stop "${!pid_var}"
  printf -v "$pid_var" '%s' ""
}

run_against ganesha ganesha_pid "$here/servers/ganesha.sh" --nfs-port 32049 --mount-port 32048
[[ $ganesha_only == 1 ]] || run_against nasd nasd_pid "$here/servers/nasd.sh" "$build" --nfs-port 32059 --mount-port 32058 --nvram-mode "$nasd_nvram" --volume-size "${volume_mib}M"

echo
echo "ganesha: $(report_headline "$out/ganesha.txt")"
if [[ $ganesha_only == 1 ]]; then
  cat "$out/ganesha.csv"
  "$loadgen" plot "$out/ganesha.csv" "$out/compare.png" || true
  echo "results in $out"
  exit 0
fi
echo "nasd:    $(report_headline "$out/nasd.txt")"
echo
step_table "$out/ganesha.csv" ganesha "$out/nasd.csv" nasd
"$loadgen" plot "$out/ganesha.csv" "$out/nasd.csv" "$out/compare.png" || echo "(plot failed)" >&2
echo "reports, CSVs and compare.png in $out"
