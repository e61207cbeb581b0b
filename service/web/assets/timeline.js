// The timeline page: a job's actor trace on a canvas, a row per device queue (lanes where
// firings of one queue overlap), firings coloured by actor kind, zoom (wheel) and pan (drag),
// a click shows a firing's details and its flow arrows, the critical path outlined in red.
// Zoomed out, firings narrower than a pixel are aggregated per pixel column (busy share and
// the most common kind), so 100,000 firings draw in a few milliseconds.
'use strict';

(() => {
  const {element, formatSeconds, formatBytes, json, param} = softwire;
  softwire.header('timeline');
  const canvas = document.getElementById('canvas');
  const LABEL = 150, AXIS = 24, LANE = 20, ROW_GAP = 8, MAX_LANES = 8;
  const page = window.timelinePage = {data: null, view: null, selected: -1, rows: [], renderMs: 0};

  // Per firing typed columns and per row start-sorted firing lists, built once per load.
  function prepare(data) {
    const f = data.firings, n = f.actor.length;
    const start = Float64Array.from(f.start), end = Float64Array.from(f.end);
    const actor = Int32Array.from(f.actor);
    const rowKey = (a) => data.actors[a].device * 1000 + data.actors[a].queue;
    const keys = [...new Set(data.actors.map((_, a) => rowKey(a)))].sort((x, y) => x - y);
    const rowOfKey = new Map(keys.map((k, i) => [k, i]));
    const rows = keys.map((k) => ({
      label: data.devices[Math.floor(k / 1000)].name + ' q' + (k % 1000),
      firings: [], laneEnds: [], maxDuration: 0, y: 0, height: 0}));
    const lane = new Uint8Array(n), rowOf = new Int32Array(n);
    for (let i = 0; i < n; ++i) {
      const row = rows[rowOfKey.get(rowKey(actor[i]))];
      rowOf[i] = rowOfKey.get(rowKey(actor[i]));
      let l = row.laneEnds.findIndex((e) => e <= start[i]);
      if (l < 0) { l = Math.min(row.laneEnds.length, MAX_LANES - 1); }
      row.laneEnds[l] = Math.max(row.laneEnds[l] || 0, end[i]);
      lane[i] = l;
      row.firings.push(i);
      row.maxDuration = Math.max(row.maxDuration, end[i] - start[i]);
    }
    let y = AXIS;
    for (const row of rows) {
      row.lanes = Math.max(1, row.laneEnds.length);
      row.y = y; row.height = row.lanes * LANE; y += row.height + ROW_GAP;
    }
    const critical = new Uint8Array(n);
    for (const i of data.critical_path) critical[i] = 1;
    const flowsFrom = new Map(), flowsTo = new Map();
    data.flows.from.forEach((from, k) => {
      const to = data.flows.to[k];
      if (!flowsFrom.has(from)) flowsFrom.set(from, []);
      if (!flowsTo.has(to)) flowsTo.set(to, []);
      flowsFrom.get(from).push(k); flowsTo.get(to).push(k);
    });
    const colors = data.actors.map((a) => a.color);
    return {n, start, end, actor, lane, rowOf, rows, height: y, critical, flowsFrom, flowsTo, colors};
  }

  function fit() {
    const d = page.data;
    page.view = {t0: 0, t1: Math.max(1, d.span_ns) * 1.01};
    draw();
  }

  function xOf(t) { const v = page.view; return LABEL + (t - v.t0) / (v.t1 - v.t0) * (canvas.clientWidth - LABEL); }
  function tOf(x) { const v = page.view; return v.t0 + (x - LABEL) / (canvas.clientWidth - LABEL) * (v.t1 - v.t0); }

  // First index in row.firings whose firing may reach time t (start >= t - maxDuration).
  function firstVisible(row, t) {
    const s = page.p.start, list = row.firings, from = t - row.maxDuration;
    let lo = 0, hi = list.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (s[list[mid]] < from) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function draw() {
    const began = performance.now();
    const p = page.p, d = page.data, v = page.view;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    canvas.style.height = p.height + 'px';
    canvas.width = width * ratio; canvas.height = p.height * ratio;
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, p.height);
    g.font = '11px system-ui, sans-serif';
    drawAxis(g, width);
    const plotWidth = width - LABEL;
    const nsPerPixel = (v.t1 - v.t0) / plotWidth;
    for (const row of p.rows) {
      g.fillStyle = '#f6f7f9'; g.fillRect(LABEL, row.y, plotWidth, row.height);
      // Sub-pixel firings: busy ns per pixel column and lane, and a kind colour per column.
      const busy = new Float64Array(plotWidth * row.lanes), color = new Array(plotWidth * row.lanes);
      const onPath = new Uint8Array(plotWidth);
      const list = row.firings;
      for (let k = firstVisible(row, v.t0); k < list.length; ++k) {
        const i = list[k];
        if (p.start[i] > v.t1) break;
        if (p.end[i] < v.t0) continue;
        const x0 = xOf(p.start[i]), x1 = xOf(p.end[i]);
        const y = row.y + p.lane[i] * LANE;
        if (x1 - x0 >= 1.5) {
          g.fillStyle = p.colors[p.actor[i]];
          g.fillRect(x0, y + 1, x1 - x0, LANE - 2);
          if (p.critical[i]) { g.strokeStyle = '#d62728'; g.lineWidth = 1.5; g.strokeRect(x0, y + 1, x1 - x0, LANE - 2); }
        } else {
          const column = Math.max(0, Math.min(plotWidth - 1, Math.floor(x0 - LABEL)));
          busy[p.lane[i] * plotWidth + column] += Math.max(p.end[i] - p.start[i], nsPerPixel * 0.15);
          color[p.lane[i] * plotWidth + column] = p.colors[p.actor[i]];
          if (p.critical[i]) onPath[column] = 1;
        }
      }
      for (let l = 0; l < row.lanes; ++l) {
        for (let c = 0; c < plotWidth; ++c) {
          const b = busy[l * plotWidth + c];
          if (b === 0) continue;
          g.globalAlpha = Math.min(1, 0.25 + b / nsPerPixel);
          g.fillStyle = color[l * plotWidth + c];
          g.fillRect(LABEL + c, row.y + l * LANE + 1, 1, LANE - 2);
        }
      }
      g.globalAlpha = 1;
      g.fillStyle = '#d62728';
      for (let c = 0; c < plotWidth; ++c) if (onPath[c]) g.fillRect(LABEL + c, row.y + row.height - 2, 1, 2);
    }
    // Labels last, over anything that began before the view.
    g.clearRect(0, AXIS - 4, LABEL, p.height);
    g.fillStyle = '#1d2430'; g.textAlign = 'left'; g.textBaseline = 'middle';
    for (const row of p.rows) g.fillText(row.label, 6, row.y + row.height / 2);
    if (page.selected >= 0) {
      g.save();
      g.beginPath(); g.rect(LABEL, AXIS - 4, plotWidth, p.height); g.clip();
      drawSelection(g);
      g.restore();
    }
    page.renderMs = performance.now() - began;
  }

  function drawAxis(g, width) {
    const v = page.view, span = v.t1 - v.t0;
    const raw = span / 8, magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
    g.strokeStyle = '#e3e7ee'; g.fillStyle = '#6b7383'; g.textAlign = 'center'; g.textBaseline = 'top';
    for (let t = Math.ceil(v.t0 / step) * step; t <= v.t1; t += step) {
      const x = xOf(t);
      g.beginPath(); g.moveTo(x, AXIS - 4); g.lineTo(x, page.p.height); g.stroke();
      g.fillText(formatSeconds(t / 1e9), x, 4);
    }
  }

  function centerOf(i) {
    const p = page.p, row = p.rows[p.rowOf[i]];
    return {y: row.y + p.lane[i] * LANE + LANE / 2, x0: xOf(p.start[i]), x1: xOf(p.end[i])};
  }

  function arrow(g, x0, y0, x1, y1, color) {
    g.strokeStyle = color; g.fillStyle = color; g.lineWidth = 1.3;
    g.beginPath(); g.moveTo(x0, y0);
    g.bezierCurveTo((x0 + x1) / 2, y0, (x0 + x1) / 2, y1, x1, y1); g.stroke();
    const angle = Math.atan2(y1 - y0, Math.max(1, x1 - (x0 + x1) / 2));
    g.beginPath(); g.moveTo(x1, y1);
    g.lineTo(x1 - 6 * Math.cos(angle - 0.4), y1 - 6 * Math.sin(angle - 0.4));
    g.lineTo(x1 - 6 * Math.cos(angle + 0.4), y1 - 6 * Math.sin(angle + 0.4)); g.fill();
  }

  function drawSelection(g) {
    const p = page.p, d = page.data, i = page.selected, c = centerOf(i);
    g.strokeStyle = '#000'; g.lineWidth = 2;
    g.strokeRect(c.x0 - 1, c.y - LANE / 2, Math.max(2, c.x1 - c.x0) + 2, LANE);
    for (const k of p.flowsTo.get(i) || []) {
      const from = centerOf(d.flows.from[k]);
      arrow(g, from.x1, from.y, c.x0, c.y, '#333');
    }
    for (const k of p.flowsFrom.get(i) || []) {
      const to = centerOf(d.flows.to[k]);
      arrow(g, c.x1, c.y, to.x0, to.y, '#2f6fdf');
    }
  }

  // The firing under (x, y) in canvas pixels, within 3 pixels; -1 for none.
  function firingAt(x, y) {
    const p = page.p;
    const row = p.rows.find((r) => y >= r.y && y < r.y + r.height);
    if (!row || x < LABEL) return -1;
    const lane = Math.floor((y - row.y) / LANE), t = tOf(x), slack = 3 * (page.view.t1 - page.view.t0) / (canvas.clientWidth - LABEL);
    let best = -1, bestDistance = Infinity;
    for (let k = firstVisible(row, t - slack); k < row.firings.length; ++k) {
      const i = row.firings[k];
      if (p.start[i] > t + slack) break;
      if (p.lane[i] !== lane) continue;
      const distance = t < p.start[i] ? p.start[i] - t : t > p.end[i] ? t - p.end[i] : 0;
      if (distance <= slack && distance < bestDistance) { best = i; bestDistance = distance; }
    }
    return best;
  }

  function describe(i) {
    const d = page.data, f = d.firings, a = d.actors[f.actor[i]], p = page.p;
    const name = (id) => id >= 0 && id < d.actors.length ? d.actors[id].name : '–';
    const register = (id) => id >= 0 && id < d.registers.length ? d.registers[id] : '–';
    const flowLines = (list, end) => (list || []).map((k) =>
      element('div', {class: 'mono'}, register(d.flows.register[k]) + (end === 'from' ? ' from ' + name(f.actor[d.flows.from[k]]) : ' to ' + name(f.actor[d.flows.to[k]]))));
    const pairs = [
      ['actor', element('span', {class: 'mono', id: 'firing-actor'}, a.name)],
      ['kind', a.kind + (a.op_type ? ' (' + a.op_type + ')' : '')],
      ['device', d.devices[a.device].name + ' queue ' + a.queue + ', stage ' + a.stage],
      ['firing', f.firing[i] + ' (step ' + f.step[i] + ')'],
      ['ran', formatSeconds((f.end[i] - f.start[i]) / 1e9) + ' from ' + formatSeconds(f.start[i] / 1e9)],
      ['queued', formatSeconds((f.start[i] - f.launch[i]) / 1e9)],
      ['launched by', f.cause[i] + (f.cause_actor[i] >= 0 ? ': ' + name(f.cause_actor[i]) : '') +
        (f.cause_register[i] >= 0 ? ' (' + register(f.cause_register[i]) + ')' : '')],
      ['critical path', p.critical[i] ? 'yes' : 'no'],
      ['inputs from', element('div', {}, flowLines(p.flowsTo.get(i), 'from'))],
      ['outputs to', element('div', {}, flowLines(p.flowsFrom.get(i), 'to'))]];
    const kv = element('div', {class: 'kv'}, pairs.flatMap(([k, v]) => [element('span', {class: 'muted'}, k), element('span', {}, v)]));
    document.getElementById('firing').replaceChildren(element('h2', {}, 'Firing'), kv);
  }

  function showSummary(d) {
    const s = d.summary;
    const pairs = [
      ['job', d.job_name], ['span', formatSeconds(s.span_seconds)],
      ['firings', d.firings.actor.length + ' shown of ' + d.total_firings],
      ['steps', d.steps.first + ' to ' + (d.steps.end - 1)],
      ['critical path', formatSeconds(s.path_seconds) + ' (' + formatSeconds(s.path_busy_seconds) + ' of kernels)'],
      ['bottleneck', s.bottleneck ? s.bottleneck + ' (' + formatSeconds(s.bottleneck_seconds) + ' on the path)' : '–'],
      ['bubble', s.bubble_measured >= 0 ? (100 * s.bubble_measured).toFixed(1) + '% measured, ' + (100 * s.bubble_formula).toFixed(1) + '% by (p-1)/(m+p-1)' : '–'],
      ['stages × pieces', s.stages + ' × ' + s.pieces_per_step]];
    document.getElementById('summary').replaceChildren(...pairs.flatMap(([k, v]) => [element('span', {class: 'muted'}, k), element('span', {}, v)]));
    document.getElementById('devices').replaceChildren(...d.devices.flatMap((dev) => [
      element('span', {class: 'mono'}, dev.name),
      element('span', {}, element('span', {class: 'bar', style: 'width:' + (100 * (dev.utilization || 0)).toFixed(0) + 'px'})),
      element('span', {}, (100 * (dev.utilization || 0)).toFixed(0) + '%'),
      element('span', {class: 'muted'}, 'memory'),
      element('span', {class: 'muted', style: 'grid-column: span 2'}, formatBytes(dev.high_water_bytes || 0) + ' of ' + formatBytes(dev.planned_bytes) + ' planned')]));
    const kinds = [...new Set(d.actors.map((a) => a.kind))].sort();
    document.getElementById('legend').replaceChildren(...kinds.map((k) =>
      element('span', {}, element('i', {style: 'background:' + d.actors.find((a) => a.kind === k).color}), k)),
      element('span', {}, element('i', {style: 'background:none;border:2px solid #d62728'}), 'critical path'));
  }

  async function load(jobId, steps) {
    const status = document.getElementById('status');
    if (!jobId) { status.textContent = 'name a finished job that was traced'; return; }
    status.textContent = 'loading the trace of ' + jobId + ' ...';
    const began = performance.now();
    try {
      const data = await json('/api/jobs/' + jobId + '/trace' + (steps ? '?steps=' + encodeURIComponent(steps) : ''));
      const fetched = performance.now();
      page.data = data; page.p = prepare(data); page.selected = -1;
      document.getElementById('title').textContent = 'Timeline of ' + jobId + ' (' + data.job_name + ')';
      showSummary(data);
      fit();
      page.loadMs = {fetch: fetched - began, total: performance.now() - began};
      status.textContent = data.firings.actor.length + ' firings, drawn in ' + page.renderMs.toFixed(0) + ' ms';
      page.readyAt = performance.now();  // Since navigation: the first render's time.
      page.ready = true;
    } catch (error) {
      status.textContent = error.message;
      page.error = error.message;
    }
  }

  // Zoom with the wheel around the cursor; pan by dragging; click selects.
  canvas.addEventListener('wheel', (event) => {
    if (!page.data) return;
    event.preventDefault();
    const x = event.offsetX, t = tOf(Math.max(LABEL, x)), factor = Math.exp(event.deltaY * 0.002);
    const v = page.view;
    const span = Math.max(100, (v.t1 - v.t0) * factor);
    const share = (t - v.t0) / (v.t1 - v.t0);
    page.view = {t0: t - share * span, t1: t - share * span + span};
    draw();
  }, {passive: false});
  let drag = null;
  canvas.addEventListener('mousedown', (event) => { drag = {x: event.offsetX, view: page.view, moved: false}; });
  window.addEventListener('mouseup', (event) => {
    if (drag && !drag.moved && page.data && event.target === canvas) {
      page.selected = firingAt(event.offsetX, event.offsetY);
      if (page.selected >= 0) describe(page.selected);
      draw();
    }
    drag = null;
  });
  canvas.addEventListener('mousemove', (event) => {
    if (!drag || !page.data) return;
    const dx = event.offsetX - drag.x;
    if (Math.abs(dx) > 2) drag.moved = true;
    const shift = dx / (canvas.clientWidth - LABEL) * (drag.view.t1 - drag.view.t0);
    page.view = {t0: drag.view.t0 - shift, t1: drag.view.t1 - shift};
    draw();
  });
  document.getElementById('fit').addEventListener('click', () => page.data && fit());
  window.addEventListener('resize', () => page.data && draw());
  const form = document.getElementById('choose');
  form.elements.job.value = param('job');
  form.elements.steps.value = param('steps');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const job = form.elements.job.value.trim(), steps = form.elements.steps.value.trim();
    history.replaceState(null, '', 'timeline.html?job=' + encodeURIComponent(job) + (steps ? '&steps=' + encodeURIComponent(steps) : ''));
    load(job, steps);
  });
  // For tests and benchmarks: where firing i is drawn, in page coordinates.
  page.pagePositionOf = (i) => {
    const c = centerOf(i), box = canvas.getBoundingClientRect();
    return {x: box.left + (c.x0 + c.x1) / 2, y: box.top + c.y};
  };
  page.zoomTo = (t0, t1) => { page.view = {t0, t1}; draw(); };
  page.fit = fit;
  load(param('job'), param('steps'));
})();
