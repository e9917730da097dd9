// The nasd management page: polls /api/status every 2 s and renders it; no library, no
// external resource (the node's Content-Security-Policy allows only its own files).
'use strict';
(function () {
  const POLL_MS = 2000, HISTORY = 60;
  const COLORS = ['#0b5cad', '#c0392b', '#1f8a3b', '#c27c0e', '#7d3c98', '#138d90', '#5d6d7e', '#d35400'];
  const $ = (id) => document.getElementById(id);
  let csrf = null, history = [], previous = null, lastStatus = null;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  const mib = (b) => Math.floor(b / 1048576);
  function bytes(b) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b) + ' ' + u[i];
  }
  function miniBar(pct) {
    const fill = el('i'); fill.style.width = pct.toFixed(1) + '%';
    return el('span', {class: 'mini'}, fill);
  }
  function replaceRows(tbody, rows) { tbody.replaceChildren(...rows); }

  function renderOverview(s) {
    $('node-name').textContent = 'node ' + s.node;
    const c = s.cluster || {};
    const parts = [];
    if (c.mode === 'alone') parts.push('node ' + s.node + ' alone: every volume local');
    else parts.push('cluster ' + c.name + ' (' + (c.mode === 'failover' ? 'failover' : 'static ownership') + '), this node ' + s.node);
    const summary = $('cluster-summary');
    summary.replaceChildren(el('div', {}, parts.join(' ')));
    if (c.membership) summary.append(el('div', {id: 'membership-state', 'data-state': c.membership}, 'membership: ' + c.membership));
    const rows = [];
    rows.push(el('tr', {'data-node': s.node}, el('td', {}, s.node + ' (this node)'), el('td', {class: 'state-ok'}, 'up')));
    for (const p of c.peers || [])
      rows.push(el('tr', {'data-node': p.name}, el('td', {}, 'peer ' + p.name),
        el('td', {class: p.up ? 'state-ok' : 'state-bad'}, 'interconnect ' + (p.up ? 'up' : 'down'))));
    for (const v of c.virtual_servers || [])
      rows.push(el('tr', {'data-virtual-server': v.name}, el('td', {}, 'virtual server ' + v.name + ' (' + v.address + ')'),
        el('td', {class: v.here ? 'state-ok' : 'state-idle'}, v.here ? 'served here' : 'not here')));
    replaceRows(document.querySelector('#virtual-servers tbody'), rows);
  }

  function renderNvram(s) {
    const n = s.nvram || {enabled: false};
    const facts = $('nvram-facts');
    if (!n.enabled) { facts.replaceChildren(el('dt', {}, 'journal'), el('dd', {}, 'off (write-through)')); return; }
    const pct = n.log_bytes ? 100 * n.used_bytes / n.log_bytes : 0;
    const bar = $('nvram-bar');
    bar.style.width = Math.max(pct, 0.5) + '%';
    bar.className = 'fill' + (pct > 75 ? ' high' : '');
    const m = n.mirror || {};
    const mirror = !m.configured ? 'none' : m.degraded ? 'DEGRADED: acknowledged from local NVRAM only'
      : (m.connected ? 'connected' : 'connecting') + ', lag ' + bytes(m.lag_bytes);
    const items = [
      ['fill', el('span', {id: 'nvram-fill', 'data-percent': pct.toFixed(1)}, pct.toFixed(1) + '% (' + bytes(n.used_bytes) + ' of ' + bytes(n.log_bytes) + ')')],
      ['records', el('span', {id: 'nvram-records'}, n.live_records)],
      ['mode', n.mode],
      ['group commits', n.commits + ' for ' + n.records_committed + ' records'],
      ['commit latency', 'p50 ≤ ' + n.commit_p50_us + ' µs, p99 ≤ ' + n.commit_p99_us + ' µs'],
      ['mirror', el('span', {id: 'nvram-mirror', class: m.degraded ? 'state-bad' : m.connected ? 'state-ok' : ''}, mirror)],
    ];
    facts.replaceChildren(...items.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  }

  function renderVolumes(s) {
    const routing = {};
    for (const r of (s.cluster || {}).volumes || []) routing[r.id] = r;
    const rows = (s.volumes || []).map((v) => {
      const pct = v.capacity_bytes ? 100 * v.used_bytes / v.capacity_bytes : 0;
      const r = routing[v.id];
      return el('tr', {'data-volume': v.name},
        el('td', {}, v.name + (v.failed ? ' (FAILED)' : '')),
        el('td', {class: 'num'}, v.id),
        el('td', {}, r ? (r.here ? 'here' : 'by ' + (r.owner || 'nobody')) : 'here'),
        el('td', {'data-field': 'space'}, mib(v.used_bytes) + ' MiB used of ' + mib(v.capacity_bytes) + ' MiB'),
        el('td', {}, miniBar(pct), pct.toFixed(1) + '%'),
        el('td', {'data-field': 'inodes'}, v.live_inodes + ' of ' + v.max_inodes),
        el('td', {}, v.cleaner_passes + ' passes, ' + v.cleaned_segments + ' segments'),
        el('td', {class: 'num'}, v.checkpoints));
    });
    // Volumes served elsewhere in the cluster.
    for (const r of (s.cluster || {}).volumes || [])
      if (!r.here && !(s.volumes || []).some((v) => v.id === r.id))
        rows.push(el('tr', {'data-volume': r.name}, el('td', {}, r.name), el('td', {class: 'num'}, r.id),
          el('td', {}, 'by ' + (r.owner || 'nobody')), el('td', {colspan: 5, class: 'state-idle'}, 'served by the partner')));
    replaceRows($('volume-rows'), rows);
    const sel = $('snapshot-volume');
    const names = (s.volumes || []).map((v) => v.name);
    if (sel.options.length !== names.length) sel.replaceChildren(...names.map((n) => el('option', {value: n}, n)));
  }

  function renderExports(s) {
    replaceRows($('export-rows'), (s.exports || []).map((e) => el('tr', {'data-export': e.path},
      el('td', {}, e.path), el('td', {}, e.volume), el('td', {}, e.access), el('td', {}, e.squash))));
  }

  function procList(s) {
    const out = [];
    for (const p of s.rpc.programs)
      for (const q of p.procs) out.push({key: p.name + ' v' + p.version + ' ' + q.name, prog: p.name + ' v' + p.version, ...q});
    return out;
  }

  function renderProcedures(s) {
    const rows = procList(s).filter((p) => p.calls > 0).map((p) => el('tr', {'data-proc': p.key},
      el('td', {}, p.prog), el('td', {}, p.name), el('td', {class: 'num', 'data-field': 'calls'}, p.calls),
      el('td', {class: 'num'}, p.errors), el('td', {class: 'num'}, p.p50_us.toFixed(1)), el('td', {class: 'num'}, p.p99_us.toFixed(1))));
    if (!rows.length) rows.push(el('tr', {}, el('td', {colspan: 6, class: 'state-idle'}, 'no calls yet')));
    replaceRows($('proc-rows'), rows);
  }

  function sample(s) {
    const now = s.time_ms, procs = {};
    for (const p of procList(s)) procs[p.key] = p;
    if (previous) {
      const dt = (now - previous.time) / 1000, point = {time: now, ops: {}, lat: {}};
      if (dt > 0) {
        for (const [k, p] of Object.entries(procs)) {
          const q = previous.procs[k];
          if (!q || p.calls < q.calls) continue;  // a stats reset: start over
          const dc = p.calls - q.calls;
          point.ops[k] = dc / dt;
          if (dc > 0) point.lat[k] = (p.latency_sum_us - q.latency_sum_us) / dc / 1000;
        }
        history.push(point);
        if (history.length > HISTORY) history.shift();
      }
    }
    previous = {time: now, procs};
  }

  function drawChart(svgId, legendId, field, unit) {
    const chart = $(svgId), W = 800, H = 220, PAD = 30;
    const totals = {};
    for (const pt of history) for (const [k, v] of Object.entries(pt[field])) totals[k] = (totals[k] || 0) + v;
    const keys = Object.keys(totals).filter((k) => totals[k] > 0).sort((a, b) => totals[b] - totals[a]).slice(0, COLORS.length);
    let max = 0;
    for (const pt of history) for (const k of keys) max = Math.max(max, pt[field][k] || 0);
    max = max > 0 ? max * 1.1 : 1;
    const nodes = [];
    for (let i = 0; i <= 4; i++) {
      const y = PAD / 2 + (H - PAD) * i / 4;
      nodes.push(svg('line', {x1: PAD + 20, x2: W, y1: y, y2: y, stroke: '#e3e7ec'}));
      const t = svg('text', {x: 2, y: y + 4, 'font-size': 11, fill: '#66717f'});
      t.textContent = (max * (4 - i) / 4).toFixed(max < 10 ? 2 : 0);
      nodes.push(t);
    }
    keys.forEach((k, ci) => {
      const pts = history.map((pt, i) => {
        const x = PAD + 20 + (W - PAD - 20) * (i + HISTORY - history.length) / (HISTORY - 1);
        const y = PAD / 2 + (H - PAD) * (1 - (pt[field][k] || 0) / max);
        return x.toFixed(1) + ',' + y.toFixed(1);
      });
      nodes.push(svg('polyline', {points: pts.join(' '), fill: 'none', stroke: COLORS[ci], 'stroke-width': 2, 'data-series': k}));
    });
    chart.replaceChildren(...nodes);
    const last = history.length ? history[history.length - 1][field] : {};
    $(legendId).replaceChildren(...(keys.length ? keys.map((k, ci) => {
      const sw = el('i'); sw.style.background = COLORS[ci];
      return el('span', {}, sw, k + ': ' + (last[k] || 0).toFixed(field === 'ops' ? 0 : 2) + ' ' + unit);
    }) : [el('span', {class: 'state-idle'}, history.length < 1 ? 'collecting…' : 'idle')]));
  }

  function renderAdmin(s) {
    const box = $('admin-text');
    const open = new Set([...box.querySelectorAll('details[open]')].map((d) => d.dataset.view));
    box.replaceChildren(...s.admin.map((v) => {
      const d = el('details', {'data-view': v.id}, el('summary', {}, v.title + ' — nasd-admin ' + v.command.join(' ')),
        el('pre', {id: 'admin-' + v.id}, v.text));
      if (open.has(v.id)) d.open = true;
      return d;
    }));
    const snap = s.admin.find((v) => v.id === 'snapshots');
    $('snapshots').hidden = !snap;
    if (snap) $('snapshot-text').textContent = snap.text;
    $('snapshot-form').hidden = !s.actions.includes('snapshot-create');
    for (const id of ['action-failover', 'action-failback']) $(id).hidden = !s.actions.includes('failover');
  }

  async function poll() {
    try {
      const r = await fetch('/api/status', {cache: 'no-store', credentials: 'same-origin'});
      if (r.status === 401) {
        // The node's state (exports, clients, lock owners) is shown only after a login.
        $('updated').textContent = 'log in to see this node';
        document.body.dataset.loaded = 'login';
        return;
      }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      const s = await r.json();
      lastStatus = s;
      sample(s);
      renderOverview(s); renderNvram(s); renderVolumes(s); renderExports(s); renderProcedures(s); renderAdmin(s);
      drawChart('ops-chart', 'ops-legend', 'ops', 'ops/s');
      drawChart('lat-chart', 'lat-legend', 'lat', 'ms');
      $('updated').textContent = 'updated ' + new Date(s.time_ms).toLocaleTimeString();
      document.body.dataset.loaded = 'yes';
    } catch (e) {
      $('updated').textContent = 'node unreachable: ' + e.message;
    }
  }

  async function post(path, fields) {
    const headers = {'Content-Type': 'application/x-www-form-urlencoded', 'X-Requested-With': 'nasd-page'};
    if (csrf) headers['X-CSRF-Token'] = csrf;
    const r = await fetch(path, {method: 'POST', headers, body: new URLSearchParams(fields), credentials: 'same-origin'});
    let body = {};
    try { body = await r.json(); } catch (e) { /* empty */ }
    return {status: r.status, body};
  }

  function showSession(loggedIn) {
    $('login-box').hidden = loggedIn;
    $('action-box').hidden = !loggedIn;
    $('session').textContent = loggedIn ? 'logged in as admin' : 'not logged in';
    document.body.dataset.session = loggedIn ? 'admin' : 'none';
  }

  async function refreshSession() {
    const r = await fetch('/api/session', {cache: 'no-store'});
    const s = await r.json();
    csrf = s.logged_in ? s.csrf : null;
    showSession(s.logged_in);
    if (!s.login_available) $('login-box').querySelector('.hint').textContent = 'No admin password is set on this node: nobody can log in (nasd-passwd --random FILE sets one).';
  }

  $('login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await post('/api/login', {user: $('login-user').value, password: $('login-password').value});
    $('login-password').value = '';
    $('action-result').textContent = r.body.ok ? '' : (r.body.error || 'login failed');
    if (r.body.ok) { csrf = r.body.csrf; showSession(true); poll(); }
  });
  $('logout-button').addEventListener('click', async () => {
    await post('/api/logout', {}); location.reload();  // drop the state shown while logged in
  });
  for (const id of ['action-failover', 'action-failback']) {
    $(id).addEventListener('click', async (ev) => {
      const action = ev.target.dataset.action;
      if (!window.confirm('Run ' + action + ' on node ' + (lastStatus ? lastStatus.node : '') + '?')) return;
      const r = await post('/api/action', {action});
      $('action-result').textContent = r.body.text || r.body.error || ('HTTP ' + r.status);
      $('action-result').dataset.status = r.body.ok ? 'ok' : 'error';
      poll();
    });
  }
  $('snapshot-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await post('/api/action', {action: 'snapshot-create', volume: $('snapshot-volume').value, name: $('snapshot-name').value});
    $('action-result').textContent = r.body.text || r.body.error || ('HTTP ' + r.status);
    $('action-result').dataset.status = r.body.ok ? 'ok' : 'error';
    poll();
  });

  refreshSession().catch(() => showSession(false));
  poll();
  setInterval(poll, POLL_MS);
})();
