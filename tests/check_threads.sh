#!/usr/bin/env bash
# Keeps ARCHITECTURE.md's thread table true: fails when the server starts a thread the table
# and the allowlist do not know.
#
# Every long-lived thread of the server starts through util/'s helpers (util::contained_thread,
# util::TaskQueue, util::PeriodicWorker), which contain an escaping exception (the error rule).
# Outside util/, a raw std::thread / std::jthread / std::async / pthread_create is allowed only at
# a site listed in tests/thread_allowlist.txt, with the name of its row in ARCHITECTURE.md's
# thread table and a reason. And every util::contained_thread names its thread; that name must
# appear in ARCHITECTURE.md. tests/ and bench/ (test programs, the load generator and the
# drill, which are clients, not the server) are not checked.
#
#   tests/check_threads.sh [SOURCE_DIR]        (ctest: check.threads)
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$ROOT"
ALLOW=tests/thread_allowlist.txt
ARCH=ARCHITECTURE.md
fail=0
say() { echo "check_threads: $*" >&2; fail=1; }

[ -f "$ALLOW" ] || { echo "check_threads: $ALLOW is missing" >&2; exit 1; }
[ -f "$ARCH" ] || { echo "check_threads: $ARCH is missing" >&2; exit 1; }

# The server's sources: every C/C++ file outside util/, tests/, bench/, build trees and dot-dirs.
mapfile -t files < <(find . \( -path ./util -o -path ./tests -o -path ./bench -o -path './build*' \
                              -o -name '.*' -a ! -name . \) -prune -o \
                            -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cpp' -o -name '*.c' \) -print |
                     sed 's#^\./##' | sort)

# The allowlist: "path | site | row in ARCHITECTURE.md's thread table | reason"; # comments.
declare -a a_path a_site a_row a_used
n=0
while IFS= read -r line || [ -n "$line" ]; do
  [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
  IFS='|' read -r p s r why extra <<<"$line"
  trim() { local x="$1"; x="${x#"${x%%[![:space:]]*}"}"; echo "${x%"${x##*[![:space:]]}"}"; }
  p=$(trim "$p"); s=$(trim "$s"); r=$(trim "${r:-}"); why=$(trim "${why:-}")
  if [ -z "$p" ] || [ -z "$s" ] || [ -z "$r" ] || [ -z "$why" ] || [ -n "${extra:-}" ]; then
    say "$ALLOW: '$line' is not 'path | site | table row | reason'"
    continue
  fi
  grep -qiF -- "$r" "$ARCH" || say "$ALLOW: the row '$r' (for $p) is not in $ARCH's thread table"
  a_path[n]=$p; a_site[n]=$s; a_row[n]=$r; a_used[n]=0; n=$((n + 1))
done <"$ALLOW"

# A line starts a thread when it constructs a std::thread or std::jthread (a temporary or a
# named one), calls std::async or pthread_create, or declares a vector of threads (filled by
# emplace_back). A declaration such as `std::thread worker_;` starts nothing.
start_re='std::j?thread[[:space:]]*[({]|std::j?thread[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*[({]|std::jthread|std::async[[:space:]]*\(|pthread_create[[:space:]]*\(|vector<[[:space:]]*std::j?thread[[:space:]]*>'

# One grep over every file; a hit inside a // comment is not code, so it is matched again
# without the comment.
while IFS= read -r hit; do
  f=${hit%%:*}; rest=${hit#*:}; lineno=${rest%%:*}; text=${rest#*:}
  code=${text%%//*}
  [[ "$code" =~ $start_re ]] || continue
  matched=0
  for ((i = 0; i < n; i++)); do
    if [ "${a_path[i]}" = "$f" ] && [[ "$code" == *"${a_site[i]}"* ]]; then
      a_used[i]=1
      matched=1
    fi
  done
  if [ "$matched" = 0 ]; then
    say "$f:$lineno starts a thread outside util/'s helpers:"
    echo "    $(echo "$code" | sed 's/^[[:space:]]*//')" >&2
    echo "  Start it with util::contained_thread, util::TaskQueue or util::PeriodicWorker, or, if it" >&2
    echo "  must be a raw thread, add it to ARCHITECTURE.md's thread table (what may block it) and to" >&2
    echo "  $ALLOW (path | site | table row | reason)." >&2
  fi
done < <(grep -HnE -- "$start_re" "${files[@]}" || true)

# Threads started through util::contained_thread carry a name; the table must know it.
while IFS= read -r hit; do
  f=${hit%%:*}; rest=${hit#*:}; lineno=${rest%%:*}; text=${rest#*:}
  code=${text%%//*}
  [[ "$code" =~ contained_thread[[:space:]]*\( ]] || continue
  name=$(sed -nE 's/.*contained_thread\([[:space:]]*"[^"]*"[[:space:]]*,[[:space:]]*"([^"]*)".*/\1/p' <<<"$code")
  if [ -z "$name" ]; then
    say "$f:$lineno: util::contained_thread's room and name must be string literals on the call's line"
  elif ! grep -qiF -- "$name" "$ARCH"; then
    say "$f:$lineno starts the thread '$name', which $ARCH's thread table does not name: add a row"
  fi
done < <(grep -HnE 'contained_thread[[:space:]]*\(' "${files[@]}" || true)

for ((i = 0; i < n; i++)); do
  [ "${a_used[i]}" = 1 ] ||
    say "$ALLOW: '${a_path[i]} | ${a_site[i]}' matches no thread start any more: remove it (and its row in $ARCH if the thread is gone)"
done

if [ "$fail" = 0 ]; then
  echo "check_threads: every thread start outside util/ is in $ALLOW and every named thread in $ARCH"
fi
exit "$fail"
