# shellcheck shell=bash
# Hosts for cluster tests, one network namespace each, as if every node ran on a machine of its
# own (issue 34). Source it, then `nh_build N` makes:
#   a switch namespace holding two bridges: the front end (clients, EVS and pool addresses)
#   and the back end (interconnect, mirrors, the lease authority);
#   hosts h1..hN: a namespace each, with `fe0` on the front bridge (10.0.4.<i>/24) and `be0` on
#   the back bridge (10.0.5.<i>/24), and, for every command run there (nh_exec, nh_spawn), its
#   own /tmp and /run (a private mount namespace with the host's folders bound over them);
#   a client host `client`: fe0 only, 10.0.4.100/24;
#   with `nh_etcd`: a host `auth` on the back end only (10.0.5.200) running a one-member etcd
#   (deploy/start-etcd.sh); it sets NH_ETCD_LINE, the [cluster] etcd_endpoints line.
# Interface names are the same inside every host (fe0, be0), as on identical machines, so one
# cluster config names them for all. The SAN folder and the lease files are a folder that every
# host sees ($NH_DIR, outside /tmp); nothing else is shared but the file system.
# Every name carries a per-run id, so runs side by side never meet, and the EXIT trap
# (nh_teardown) kills every process left in the namespaces and deletes them, also on failure;
# every wait in here is bounded. Needs root (ip netns, mount). Sets NH_DIR, NH_ID.
#   nh_exec HOST CMD...     run CMD on HOST (foreground)
#   nh_spawn HOST LOG CMD...  run CMD on HOST in the background (pid in $NH_PID)
#   nh_ns HOST              the namespace's name (for ip -n, ip netns exec)
#   nh_mac HOST [IF]        the MAC of HOST's IF (default fe0)
#   nh_link HOST IF up|down the cable of HOST's IF, at the switch (the bridge port goes down)

NH_ID="$(printf '%x%x' $$ $((RANDOM % 4096)))"
NH_DIR=$(mktemp -d "/var/tmp/nasd-hosts-$NH_ID.XXXXXX")
NH_HOSTS=()
nh_ns() { echo "nasd-$NH_ID-$1"; }

nh_teardown() {
  local h ns pids
  for h in "${NH_HOSTS[@]}" sw; do
    ns=$(nh_ns "$h")
    ip netns list 2>/dev/null | grep -q "^$ns\b" || continue
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -z $pids ]] || kill -CONT $pids 2>/dev/null || true
    [[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
  done
  for h in "${NH_HOSTS[@]}" sw; do
    ns=$(nh_ns "$h")
    for _ in $(seq 50); do [[ -z $(ip netns pids "$ns" 2>/dev/null) ]] && break; sleep 0.1; done
    ip netns del "$ns" 2>/dev/null || true
  done
  [[ -n ${NASD_E2E_KEEP:-} ]] || rm -rf "$NH_DIR"
}

# nh_add_host NAME FRONT_IP [BACK_IP]: a host on the front bridge (FRONT_IP "-": not on it)
# and the back one.
nh_add_host() {
  local name=$1 ns sw port=$1
  ns=$(nh_ns "$name") sw=$(nh_ns sw)
  ip netns add "$ns"
  NH_HOSTS+=("$name")
  ip -n "$ns" link set lo up
  mkdir -p "$NH_DIR/$name/tmp" "$NH_DIR/$name/run"
  chmod 1777 "$NH_DIR/$name/tmp"
  if [[ $2 != - ]]; then
    ip -n "$sw" link add "${port}f" type veth peer name fe0 netns "$ns"
    ip -n "$sw" link set "${port}f" master nhf up
    ip -n "$ns" link set fe0 up
    ip -n "$ns" addr add "$2/24" dev fe0
  fi
  if [[ -n ${3:-} ]]; then
    ip -n "$sw" link add "${port}b" type veth peer name be0 netns "$ns"
    ip -n "$sw" link set "${port}b" master nhb up
    ip -n "$ns" link set be0 up
    ip -n "$ns" addr add "$3/24" dev be0
  fi
}

nh_build() {
  local n=$1 i sw
  trap nh_teardown EXIT
  trap 'exit 143' TERM INT HUP  # a ctest timeout: through the EXIT trap too
  sw=$(nh_ns sw)
  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add nhf type bridge
  ip -n "$sw" link add nhb type bridge
  ip -n "$sw" link set nhf up
  ip -n "$sw" link set nhb up
  for i in $(seq 1 "$n"); do nh_add_host "h$i" "10.0.4.$i" "10.0.5.$i"; done
  nh_add_host client 10.0.4.100
}

# The host's view: its namespace, and a mount namespace in which /tmp and /run are its own.
nh_exec() {
  local host=$1; shift
  ip netns exec "$(nh_ns "$host")" unshare -m --propagation private sh -c \
    'mount --bind "$0/tmp" /tmp && mount --bind "$0/run" /run && exec "$@"' "$NH_DIR/$host" "$@"
}
nh_spawn() {
  local host=$1 log=$2; shift 2
  nh_exec "$host" "$@" >"$log" 2>&1 &
  NH_PID=$!
}
nh_mac() { ip -n "$(nh_ns "$1")" link show "${2:-fe0}" | awk '/link\/ether/ { print $2 }'; }
nh_link() { ip -n "$(nh_ns sw)" link set "$1${2:0:1}" "$3"; }

# Not in a subshell ($(...)): the host must join NH_HOSTS, or the EXIT trap would not remove it.
nh_etcd() {
  nh_add_host auth - 10.0.5.200
  nh_exec auth "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/deploy/start-etcd.sh" \
    --host 10.0.5.200 --dir "$NH_DIR/etcd" >"$NH_DIR/etcd.out" 2>&1 || { cat "$NH_DIR/etcd.out" >&2; return 1; }
  NH_ETCD_LINE=$(grep -m1 '^ *etcd_endpoints *=' "$NH_DIR/etcd.out" | sed 's/^ *//')
  # Plain HTTP to another host is refused unless the config says the network is private: the
  # tests' back-end bridge is, nothing but the test's own hosts is on it.
  NH_ETCD_LINE+=$'\netcd_allow_insecure = true'
}
