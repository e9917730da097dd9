# shellcheck shell=bash
# What the cluster tests on namespaced hosts (netns_hosts_lib.sh, sourced first) share: bounded
# waits, each node's admin view, the addresses on a host's fe0, and the client host's view of
# the network (its neighbour table, arping). Set before sourcing: dir, admin, nodes (the node
# names) and data_of NODE (a function: the node's data folder); log_of NODE (its log, default
# <data folder>/nasd.log) when it logs elsewhere.

fail() {
  echo "FAIL: $*"
  local n f
  for n in "${nodes[@]}"; do echo "--- $n log"; tail -40 "$(node_log "$n")" 2>/dev/null || true; done
  for n in "${nodes[@]}"; do echo "--- $n cluster"; "$admin" --socket "$(data_of "$n")/nasd.sock" cluster 2>&1 || true; done
  for f in "$dir"/client-*.out; do [[ -f $f ]] && { echo "--- $(basename "$f")"; cat "$f"; }; done
  echo "--- client neighbours"; ip -n "$(nh_ns client)" neigh || true
  exit 1
}
node_log() { if declare -F log_of >/dev/null; then log_of "$1"; else echo "$(data_of "$1")/nasd.log"; fi; }
now_ms() { date +%s%3N; }
# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s, fails the test at the deadline.
wait_for() {
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 10))); do "$@" && return 0; sleep 0.1; done
  fail "$what not within $limit s"
}
# (Outputs are captured before they are searched: with pipefail, `cmd | grep -q` fails when grep
# stops reading early and cmd dies of SIGPIPE.)
admin_on() { "$admin" --socket "$(data_of "$1")/nasd.sock" "${@:2}"; }
cluster_line() { local out; out=$(admin_on "$1" cluster 2>/dev/null) && grep -qE "$2" <<<"$out"; }
mirrored() { local out; out=$(admin_on "$1" nvram 2>/dev/null) && [[ $out != *DEGRADED* ]]; }
pid_of() { cat "$(data_of "$1")/nasd.pid"; }
# has_address HOST ADDRESS: ADDRESS (any prefix) is on HOST's fe0.
has_address() { local out; out=$(ip -n "$(nh_ns "$1")" addr show fe0) && [[ $out == *"inet $2/"* ]]; }
on_interface_here() { cluster_line "$1" "^  evs $2 .*: served here on fe0$"; }
pool_here() { cluster_line "$1" " $2=here\(fe0\)( |$)"; }
url() { echo "nfs://$1/r/$2?nfsport=2049&mountport=20048&version=3"; }
on_client() { nh_exec client "$@"; }
reaches() { on_client nfs-ls "$(url "$1" "$2")" >/dev/null 2>&1; }
client_neigh_mac() { ip -n "$(nh_ns client)" neigh show "$1" dev fe0 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }'; }
neigh_is() { [[ $(client_neigh_mac "$1") == "$2" ]]; }
# The MACs that answer a broadcast ARP request for $1 from the client (arping prints each reply).
arp_answers() {
  { on_client arping -c 3 -w 3 -I fe0 "$1" 2>/dev/null || true; } | tr 'A-F' 'a-f' |
    { grep -oE '([0-9a-f]{2}:){5}[0-9a-f]{2}' || true; } | sort -u
}
