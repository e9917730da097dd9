# Bash functions for scripts that run a server launcher (see README.md). Source, don't execute.

# launcher_start LOGPREFIX CMD [ARGS...]
# Starts the launcher in the background with stdout/stderr in LOGPREFIX.out/.err and waits up to
# 30 s for its TARGET line. Sets LAUNCHER_PID and LAUNCHER_TARGET, and LAUNCHER_SERVER_PID to the
# server process's own pid when the launcher printed a SERVER_PID line ("" otherwise). Returns the launcher's exit
# status if it died first (77: server not installed), 1 on a time-out.
launcher_start() {
  local log=$1; shift
  LAUNCHER_TARGET=""
  LAUNCHER_SERVER_PID=""
  "$@" >"$log.out" 2>"$log.err" &
  LAUNCHER_PID=$!
  local rc
  for _ in $(seq 300); do
    LAUNCHER_TARGET=$(sed -n 's/^TARGET //p' "$log.out" | head -n 1)
    if [[ -n $LAUNCHER_TARGET ]]; then
      LAUNCHER_SERVER_PID=$(sed -n 's/^SERVER_PID //p' "$log.out" | head -n 1)
      return 0
    fi
    if ! kill -0 "$LAUNCHER_PID" 2>/dev/null; then
      wait "$LAUNCHER_PID" && rc=0 || rc=$?
      LAUNCHER_PID=""
      cat "$log.err" >&2
      [[ $rc == 0 ]] && rc=1
      return "$rc"
    fi
    sleep 0.1
  done
  echo "launcher $1 printed no TARGET line in 30 s" >&2
  launcher_stop
  return 1
}

# launcher_stop [PID]: SIGTERM a launcher (default: the one started last), give it 10 s to stop
# its server and clean up, then SIGKILL it.
launcher_stop() {
  local pid=${1:-${LAUNCHER_PID:-}}
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [[ $pid != "${LAUNCHER_PID:-}" ]] || LAUNCHER_PID=""
}

# launcher_start_or_skip LOGPREFIX CMD [ARGS...]: launcher_start for a test script. A server that
# is not installed ends the script with exit 77 (ctest's skip); any other failure ends it with 1.
launcher_start_or_skip() {
  local rc=0
  launcher_start "$@" || rc=$?
  if [[ $rc == 77 ]]; then echo "SKIP: the server is not installed"; exit 77; fi
  [[ $rc == 0 ]] || { echo "FAIL: the server did not start (launcher status $rc)" >&2; exit 1; }
}
