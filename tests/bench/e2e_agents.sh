#!/usr/bin/env bash
# Many-host run on one machine: two `nasd-loadgen agent`s, each in its own network namespace
# with its own address on a bridge (as two load-generating hosts on a switch), load one server
# through two of its addresses (as two nodes of a cluster), driven by a coordinator in the
# test's namespace. Checks: a wrong agent key and a prober speaking garbage are refused and the
# agents keep serving; a fileset too large for the server's free space (all agents together) is
# refused before anything is created; the round-robin rule (agent 1 -> first target, agent 2 -> second); the
# merged SFS2014 report (both agents' operations present, each step's total = the sum of the
# agents', every step started on both within the barrier tolerance), CSV and plot; --cleanup
# leaves nothing behind.
#   e2e_agents.sh LOADGEN LAUNCHER [LAUNCHER ARGS...]   (inside bench/netns.sh; exit 77 = skip)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: e2e_agents.sh LOADGEN LAUNCHER [ARGS...]" >&2; exit 2; }
loadgen=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../bench/servers/launcher_lib.sh"

if [[ ${NASD_BENCH_IN_NETNS:-0} != 1 ]]; then
  echo "SKIP: needs the private namespaces of bench/netns.sh (to make a bridge and namespaces)"
  exit 77
fi

work=$(mktemp -d /tmp/nasd-bench-agents.XXXXXX)
agent_pids=()
cleanup() {
  launcher_stop
  for p in "${agent_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "FAIL: $*" >&2
  for f in report.txt results.csv coordinator.err wrongkey.err lg1.err lg2.err; do echo "--- $f"; cat "$work/$f" 2>/dev/null || true; done
  exit 1
}

# The switch: a bridge holding both server addresses; one namespace per load generator.
ip link add br0 type bridge
ip addr add 10.77.0.1/24 dev br0
ip addr add 10.77.0.2/24 dev br0
ip link set br0 up
for i in 1 2; do
  ip netns add "lg$i"
  ip link add "veth$i" type veth peer name eth0 netns "lg$i"
  ip link set "veth$i" master br0 up
  ip -n "lg$i" link set lo up
  ip -n "lg$i" addr add "10.77.0.1$i/24" dev eth0
  ip -n "lg$i" link set eth0 up
done
# (no ping on every machine: the agents' first mount shows reachability)

rc=0
launcher_start "$work/server" "$@" --nfs-port 32179 --mount-port 32178 --listen 0.0.0.0 \
  --clients 127.0.0.0/8,10.77.0.0/24 || rc=$?
if [[ $rc == 2 ]]; then echo "SKIP: the launcher takes no --listen"; exit 77; fi
if [[ $rc == 77 ]]; then echo "SKIP: the server is not installed"; exit 77; fi
[[ $rc == 0 ]] || { echo "FAIL: the server did not start (launcher status $rc)" >&2; exit 1; }
target1=${LAUNCHER_TARGET/127.0.0.1/10.77.0.1}
target2=${LAUNCHER_TARGET/127.0.0.1/10.77.0.2}

# The agents, one per namespace; the key is made by the first and copied (as on real hosts).
for i in 1 2; do
  ip netns exec "lg$i" "$loadgen" agent --name "lg$i" --listen "10.77.0.1$i:7460" --key "$work/agent.key" \
    >"$work/lg$i.out" 2>"$work/lg$i.err" &
  agent_pids+=($!)
  for _ in $(seq 100); do grep -q '^AGENT ' "$work/lg$i.out" && break; sleep 0.1; done
  grep -q '^AGENT ' "$work/lg$i.out" || fail "agent lg$i did not start"
done
[[ $(stat -c %a "$work/agent.key") == 600 ]] || fail "the agent key is not mode 600"
printf '# name  address:port\nlg1  10.77.0.11:7460\nlg2  10.77.0.12   # default port\n' > "$work/hosts"

# A prober speaking garbage, and a coordinator with the wrong key: refused, agents unharmed.
exec 3<>/dev/tcp/10.77.0.11/7460 && { printf 'GET / HTTP/1.0\r\n\r\n' >&3 2>/dev/null || true; timeout 10 cat <&3 >/dev/null 2>&1 || true; exec 3<&-; }
(umask 077 && head -c 32 /dev/urandom > "$work/wrong.key")
rc=0
timeout 60 "$loadgen" --agents "$work/hosts" --agent-key "$work/wrong.key" --target "$target1" \
  --loads 10 --step-seconds 1 --quiet 2>"$work/wrongkey.err" || rc=$?
[[ $rc == 1 ]] || fail "a coordinator with the wrong key was not refused (status $rc)"
grep -q 'refused the handshake' "$work/wrongkey.err" || fail "no handshake refusal reported"
grep -q 'refused a connection' "$work/lg1.err" || fail "agent lg1 did not log the refused connection"
for p in "${agent_pids[@]}"; do kill -0 "$p" || fail "an agent died after refusing a connection"; done

# Against nasd's 2 GiB volume: both agents on one target, each with a fileset that would fit
# alone (1.2 GB) but not together: refused before anything is created, naming FSSTAT and the
# agents together. (Not against ganesha: its free space is the host's, which a wrong check
# would fill.)
if [[ $(basename "$1") == nasd.sh ]]; then
  rc=0
  timeout 60 "$loadgen" --agents "$work/hosts" --agent-key "$work/agent.key" --target "$target1" \
    --workload vda --business-metric 1 --fileset-scale 0.1 --step-seconds 1 --quiet \
    --report "$work/full.txt" 2>"$work/full.err" || rc=$?
  [[ $rc == 1 ]] || fail "a fileset larger than the free space did not fail cleanly (status $rc)"
  grep -q 'does not fit on .*FSSTAT reports.*all load generators on it together' "$work/full.err" ||
    { cat "$work/full.err"; fail "no FSSTAT error for the agents together"; }
  leftover=$(nfs-ls "$LAUNCHER_TARGET" 2>&1) || fail "cannot list the export: $leftover"
  [[ -z $leftover ]] || fail "the refused run created: $leftover"
fi

# The run: VDA at 2 and 4 streams over both agents.
timeout 120 "$loadgen" --agents "$work/hosts" --agent-key "$work/agent.key" \
  --target "$target1" --target "$target2" --workload vda --business-metric 2,4 --step-seconds 3 \
  --warmup-seconds 0.5 --processes 1 --fileset-scale 0.0003 --report "$work/report.txt" \
  --csv "$work/results.csv" --plot "$work/curve.png" --server-name "e2e agents: $*" --cleanup \
  2>"$work/coordinator.err" || fail "the coordinator exited with $?"
report=$work/report.txt

grep -Eq '^SFS2014_vda = [0-9]+ Streams' "$report" || fail "no SFS2014 headline"
for section in Performance Dataflow "Load Generators" "Per Load Generator Results"; do
  grep -q "^$section\$" "$report" || fail "no '$section' section"
done
# Round robin: agent 1 on the first target (node), agent 2 on the second.
grep -Eq "^1 +lg1 +10\.77\.0\.11:7460 +nfs://10\.77\.0\.1/" "$report" || fail "lg1 is not on the first target"
grep -Eq "^2 +lg2 +10\.77\.0\.12:7460 +nfs://10\.77\.0\.2/" "$report" || fail "lg2 is not on the second target"

# Per agent per step: step lg name ok ops mb mean start_offset
awk '/^Per Load Generator Results$/ { on = 1; next } on && /^-+ +-+/ { rows = 1; next }
     rows && NF == 8 { print } rows && NF != 8 { exit }' "$report" > "$work/agents.txt"
[[ $(wc -l < "$work/agents.txt") == 4 ]] || fail "expected 2 steps x 2 load generators in the per-agent table"
awk '$4 <= 0 { bad = 1 } END { exit bad }' "$work/agents.txt" || fail "an agent has no operations in a step"
awk '{ o = $8 < 0 ? -$8 : $8; if (o > 100) bad = 1 } END { exit bad }' "$work/agents.txt" ||
  fail "an agent started a step more than 100 ms away from the planned start"
# Each step's total in the CSV (column 7, ok) is the sum of the agents' counts.
for step in 1 2; do
  sum=$(awk -v s=$step '$1 == s { n += $4 } END { print n }' "$work/agents.txt")
  total=$(awk -F, -v s=$step 'NR > 1 && $1 == s { print $7 }' "$work/results.csv")
  [[ $sum == "$total" ]] || fail "step $step: agents' operations add up to $sum, the merged result says $total"
done
# The barrier: both agents' first requests of every step within 100 ms of each other.
[[ $(grep -c '^Step barrier: step [0-9]* started on all 2 load generators within' "$report") == 2 ]] ||
  fail "no barrier line per step"
awk '/^Step barrier:/ { if ($(NF-1) > 100) bad = 1 } END { exit bad }' "$report" || fail "a step barrier was looser than 100 ms"
# The steps met their rates: 20 and 40 ops/s (10 per stream).
awk '/^-+ -+ -+/ { on = 1; next } on && NF >= 6 { print } on && NF < 6 { on = 0 }' "$report" | head -2 > "$work/table.txt"
awk '{ if ($5 != 10 * $1 || $6 != "met") bad = 1 } END { exit bad }' "$work/table.txt" || fail "a step missed its rate"
[[ -s $work/curve.png ]] || fail "no plot was drawn"
# --cleanup: each agent removed its fileset and workdir.
leftover=$(nfs-ls "$LAUNCHER_TARGET" 2>&1) || fail "cannot list the export: $leftover"
[[ -z $leftover ]] || fail "left behind: $leftover"
for p in "${agent_pids[@]}"; do kill -0 "$p" || fail "an agent exited after the run"; done
cat "$report"
echo "e2e agents: 1 passed, 0 failed"
