#!/usr/bin/env bash
# The management page in headless Chromium against a real HA pair (deploy/start-cluster.sh in a
# private network namespace): the page shows what `nasd-admin` says (volumes and their space,
# NVRAM fill, per-procedure call counts, which node serves which address) once logged in —
# driven through chromedriver like a user, with the password start-node.sh printed — and
# nothing before; it keeps a screenshot and runs a planned failover, after which node b serves
# a's volume and address.
#   management_page_test.sh NASD_BINARY SCREENSHOT_DIR   (exit 77 = skipped: no chromium)
# Screenshots: SCREENSHOT_DIR/management_page.png, management_page_after_failover.png.
set -euo pipefail
nasd=$1 shots=$2
chromium=$(command -v chromium || command -v chromium-browser || true)
driver=$(command -v chromedriver || true)
[[ -n $chromium ]] || { echo "SKIP: chromium is not installed (deploy/install-deps.sh installs it)"; exit 77; }
[[ -n $driver ]] || { echo "FAIL: chromium without chromedriver (Debian chromium-driver; deploy/install-deps.sh installs it)"; exit 1; }
[[ ${NASD_IN_NETNS:-} == 1 ]] || exec env NASD_IN_NETNS=1 "$(dirname "$0")/../../bench/netns.sh" "$0" "$@"

test_name=management-page
ha_load=/bin/true  # the pair library's load clients are not used here
# shellcheck source=ha_pair_lib.sh
source "$(dirname "$0")/ha_pair_lib.sh"
mkdir -p "$shots"
profile=$(mktemp -d "$dir/chromium.XXXXXX")
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$profile")
page=http://127.0.0.1:8049/

LEASE_MS=3000 start_pair
# Both nodes start at once and print their passwords in either order: take node a's.
password=$(sed -n "s#.*management page login: user admin, password \([A-Za-z0-9]*\) (shown once; hashed in $dir/a/data/http.passwd.*#\1#p" "$dir/start.log" | head -1)
[[ -n $password ]] || { cat "$dir/start.log"; fail "start-node.sh printed no password"; }
[[ $(stat -c %a "$dir/a/data/http.passwd") == 600 ]] || fail "http.passwd is not mode 600"

# Some traffic through node a, so the procedure table and the NVRAM have something to show.
head -c 300000 /dev/urandom >"$dir/payload"
nfs-cp "$dir/payload" "nfs://127.0.0.1/r/v0/payload?nfsport=2049&mountport=20048&version=3" >/dev/null || fail "nfs-cp"
nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null || fail "nfs-ls"
# The write-behind drains the NVRAM in the background: wait (bounded) until its fill holds
# still, so that the page and nasd-admin are compared on the same state.
nvram_fill() { admin_on a nvram | sed -n 's/^  fill: .*(\([0-9.]*\)%).*/\1/p'; }
prev=$(nvram_fill)
for _ in $(seq 1 20); do
  sleep 1
  now=$(nvram_fill)
  [[ $now == "$prev" ]] && break
  prev=$now
done

dump() { timeout 60 "$chromium" "${flags[@]}" --virtual-time-budget=8000 --dump-dom "$page" 2>"$dir/chromium.err"; }
# Before a login the page shows nothing of the node: the state (exports and their clients,
# lock owners, the cluster) needs the admin's session. The page fills itself from several
# fetches; under load the virtual time budget can run out before the last one answered: dump
# again (bounded) until it has.
for attempt in 1 2 3; do
  dom=$(dump) || { cat "$dir/chromium.err"; fail "chromium --dump-dom"; }
  grep -q 'data-loaded="login"' <<<"$dom" && grep -q '<body[^>]* data-session=' <<<"$dom" && break
done
echo "$dom" >"$dir/dom_logged_out.html"
grep -q '<body[^>]* data-session="none"' <<<"$dom" || fail "the page is not logged out before a login"
grep -q 'data-loaded="login"' <<<"$dom" || fail "the logged-out page did not ask for a login (see $dir/dom_logged_out.html)"
grep -q '<tr data-volume=' <<<"$dom" && fail "the logged-out page shows the volumes"
[[ $(curl -s -o /dev/null -w '%{http_code}' "${page}api/status") == 401 ]] || fail "/api/status answered without a login"

# Like a user: log in, then the page shows the node.
"$driver" --port=9515 >"$dir/chromedriver.log" 2>&1 &
clients+=($!)  # stopped by the pair library's cleanup
wait_for 10 "chromedriver" curl -sf http://127.0.0.1:9515/status -o /dev/null
wd() { curl -sS -X "$1" "http://127.0.0.1:9515$2" -H 'Content-Type: application/json' ${3:+-d "$3"}; }
args=$(printf '"%s",' "${flags[@]}" --window-size=1400,2200); args="[${args%,}]"
reply=$(wd POST /session "{\"capabilities\":{\"alwaysMatch\":{\"browserName\":\"chrome\",\"goog:chromeOptions\":{\"binary\":\"$chromium\",\"args\":$args}}}}")
sid=$(grep -o '"sessionId":"[^"]*"' <<<"$reply" | cut -d'"' -f4)
[[ -n $sid ]] || fail "chromedriver session: $reply"
js() { wd POST "/session/$sid/execute/sync" "{\"script\":\"$1\",\"args\":[]}"; }
element() { wd POST "/session/$sid/element" "{\"using\":\"css selector\",\"value\":\"$1\"}" | grep -o '"element-6066-11e4-a52e-4f735466cecf":"[^"]*"' | cut -d'"' -f4; }
page_says() { js "return document.body.dataset.$1 || ''" | grep -q "\"value\":\"$2\""; }
wd POST "/session/$sid/url" "{\"url\":\"$page\"}" >/dev/null
wait_for 15 "the login form in chromedriver" page_says loaded login
wd POST "/session/$sid/element/$(element '#login-password')/value" "{\"text\":\"$password\"}" >/dev/null
wd POST "/session/$sid/element/$(element '#login-button')/click" '{}' >/dev/null
for _ in $(seq 150); do page_says session admin && break; sleep 0.1; done
page_says session admin || fail "the login; the page says: $(js "return document.getElementById('action-result').textContent")"
wait_for 15 "the page loading the node's state after the login" page_says loaded yes
# The page as the browser holds it (the webdriver returns it JSON-quoted: unquote the markup).
dom=$(wd POST "/session/$sid/execute/sync" '{"script":"return document.documentElement.outerHTML","args":[]}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')
echo "$dom" >"$dir/dom.html"

# Volumes: the page's space column is the line `nasd-admin volumes` prints.
space=$(admin_on a volumes | sed -n 's/^  space: \(.*\)$/\1/p' | head -1)
[[ -n $space ]] || fail "nasd-admin volumes shows no space line"
grep -q "<tr data-volume=\"v0\">.*<td data-field=\"space\">$space</td>" <<<"$dom" \
  || fail "page's v0 space differs from nasd-admin's '$space'"
grep -q '<tr data-volume="v1">' <<<"$dom" || fail "the partner's volume v1 is not listed"
# NVRAM fill: the percentage `nasd-admin nvram` prints.
fill=$(nvram_fill)
grep -q -e "id=\"nvram-fill\" data-percent=\"$fill\"" -e "id=\"nvram-fill\" data-percent=\"$prev\"" <<<"$dom" \
  || fail "page's NVRAM fill differs from nasd-admin's $fill% (before the page: $prev%)"
# Procedure counts: WRITE, LOOKUP and CREATE as `nasd-admin stats` counts them.
stats=$(admin_on a stats)
for proc in WRITE LOOKUP CREATE; do
  calls=$(awk -v p="$proc" '/^[^ ]/ {nfs = /\(program 100003\) version 3/} nfs && $1 == p {print $2}' <<<"$stats")
  [[ -n $calls && $calls -gt 0 ]] || fail "nasd-admin stats shows no $proc calls"
  grep -q "<tr data-proc=\"nfs v3 $proc\">.*<td class=\"num\" data-field=\"calls\">$calls</td>" <<<"$dom" \
    || fail "page's $proc count differs from nasd-admin's $calls"
done
# Node state: which virtual servers this node answers for, as `nasd-admin cluster` says.
cluster_line a "^  evs a .*: served here" || fail "node a does not serve its address"
grep -q '<tr data-virtual-server="a"><td>[^<]*</td><td class="state-ok">served here</td>' <<<"$dom" \
  || fail "the page does not show a's address served here"
grep -q '<tr data-node="b"><td>peer b</td><td class="state-ok">interconnect up</td>' <<<"$dom" \
  || fail "the page does not show peer b up"
wd GET "/session/$sid/screenshot" | sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d >"$shots/management_page.png"
[[ -s $shots/management_page.png ]] || fail "no screenshot"

# Ten seconds of client traffic, so the live charts have something to draw.
( end=$((SECONDS + 10)); while ((SECONDS < end)); do
    nfs-cat "nfs://127.0.0.1/r/v0/payload?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1
    nfs-ls "nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&version=3" >/dev/null 2>&1; done ) &
traffic=$!
has_chart() { js "return document.querySelectorAll('#ops-chart polyline').length" | grep -qv '"value":0'; }
wait_for 15 "a line in the ops/s chart" has_chart
wait "$traffic"
wd POST "/session/$sid/element/$(element '#action-failover')/click" '{}' >/dev/null
wait_for 5 "the confirmation" bash -c "curl -sf http://127.0.0.1:9515/session/$sid/alert/text >/dev/null"
wd POST "/session/$sid/alert/accept" '{}' >/dev/null
result_ok() { js "return document.getElementById('action-result').dataset.status || ''" | grep -q '"value":"ok"'; }
wait_for 10 "the failover's answer on the page" result_ok
wait_for 30 "b serving v0 after the failover" cluster_line b "^    volume v0 .*served here"
wait_for 30 "b serving a's address" cluster_line b "^  evs a .*: served here"
a_state() { js "var c = document.querySelector('[data-virtual-server=a] td:last-child'); return c ? c.textContent : ''" | grep -q '"value":"not here"'; }
wait_for 15 "the page showing a's address gone" a_state
wd GET "/session/$sid/screenshot" | sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d >"$shots/management_page_after_failover.png"
wd DELETE "/session/$sid" >/dev/null
grep -q "management page: action failover" "$dir/a/data/nasd.log" || fail "node a did not log the action"
echo "PASS: page shows nothing before the login, agrees with nasd-admin after it; planned failover from the page; screenshots in $shots"
