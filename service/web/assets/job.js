// The job page: loss and metric curves as steps finish (other jobs overlaid), the plan
// summary, and the live diagnosis of a running job.
'use strict';

(() => {
  const {element, formatSeconds, formatBytes, formatNumber, json, param} = softwire;
  softwire.header('');
  const jobId = param('id');
  document.getElementById('title').textContent = 'Job ' + jobId;
  // Steps by job: the page's state, also read by the browser tests.
  const page = window.jobPage = {jobId, jobs: {}, order: [jobId], info: null};

  function addJob(id) {
    if (page.jobs[id]) return;
    page.jobs[id] = {steps: [], state: ''};
    if (!page.order.includes(id)) page.order.push(id);
    softwire.feed('/api/jobs/' + id + '/events', (event, data) => {
      if (event !== 'job') return;
      if (data.kind === 'step') page.jobs[id].steps.push(data.step);
      if (id === jobId) onOwnEvent(data);
      scheduleDraw();
    }, (state) => { if (id === jobId) softwire.setLive(state === 'live' ? '● live' : state); });
  }

  let drawPending = false;
  function scheduleDraw() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => { drawPending = false; draw(); });
  }

  function draw() {
    const series = page.order.filter((id) => page.jobs[id]).map((id) => ({
      name: id, points: page.jobs[id].steps.map((s) => [s.step, s.loss])}));
    charts.line(document.getElementById('loss'), series, {xLabel: 'step', yLabel: 'loss'});
    const names = new Set();
    for (const id of page.order) for (const s of (page.jobs[id] || {steps: []}).steps) Object.keys(s.metrics).forEach((n) => names.add(n));
    const holder = document.getElementById('metrics');
    for (const name of [...names].sort()) {
      let canvas = holder.querySelector('canvas[data-metric="' + CSS.escape(name) + '"]');
      if (!canvas) {
        holder.appendChild(element('h2', {}, name + ' per step'));
        canvas = element('canvas', {'data-metric': name, style: 'width:100%;height:220px'});
        holder.appendChild(canvas);
      }
      charts.line(canvas, page.order.filter((id) => page.jobs[id]).map((id) => ({
        name: id, points: page.jobs[id].steps.filter((s) => name in s.metrics).map((s) => [s.step, s.metrics[name]])})),
        {xLabel: 'step', yLabel: name});
    }
    const own = page.jobs[jobId].steps;
    const rows = document.querySelector('#steps tbody');
    for (let i = rows.children.length; i < own.length; ++i) {
      const s = own[i];
      rows.appendChild(element('tr', {'data-step': s.step},
        element('td', {}, s.step), element('td', {class: 'loss'}, formatNumber(s.loss, 6)),
        element('td', {class: 'metrics mono'}, Object.entries(s.metrics).map(([k, v]) => k + '=' + formatNumber(v, 6)).join(' ')),
        element('td', {}, formatNumber(s.samples_per_second, 0))));
    }
  }

  function kv(holder, pairs) {
    holder.replaceChildren(...pairs.flatMap(([k, v]) => [element('span', {class: 'muted'}, k), element('span', {}, v)]));
  }

  async function refreshInfo() {
    const info = page.info = await json('/api/jobs/' + jobId);
    const elapsed = (info.ended_unix || Date.now() / 1000) - info.started_unix;
    kv(document.getElementById('info'), [
      ['name', info.name],
      ['state', element('span', {class: 'state ' + info.state}, info.state)],
      ['steps', info.completed_steps + ' / ' + info.steps],
      ['last loss', info.completed_steps ? formatNumber(info.last_loss, 6) : '–'],
      ['samples/s', info.samples_per_second ? formatNumber(info.samples_per_second, 0) : '–'],
      ['running for', info.started_unix ? formatSeconds(elapsed) : '–'],
      ['devices', (info.devices || []).join(', ') || '–'],
      ['error', info.error ? element('span', {class: 'error'}, info.error) : '–'],
      ['trace', element('a', {href: 'timeline.html?job=' + jobId}, 'timeline')]]);
    if (info.plan) showPlan(info.plan, info.state === 'running' ? await memoryInUse(info) : null);
    if (!page.summaryShown && (info.state === 'succeeded' || info.state === 'failed' || info.state === 'cancelled')) {
      page.summaryShown = true;
      showTraceSummary();
    }
    document.getElementById('diagnosis-panel').style.display = info.state === 'running' ? '' : 'none';
  }

  // Bytes in use on each of the job's devices now ({device: bytes}).
  async function memoryInUse(info) {
    const inUse = {};
    try {
      for (const d of (await json('/api/devices')).devices) if (d.job_id === info.job_id) inUse[d.device] = d.allocated_bytes;
    } catch (error) { /* shown as planned only */ }
    return inUse;
  }

  // The trace summary's text (utilization, critical path, bubble) when the job was traced.
  async function showTraceSummary() {
    const response = await softwire.request('/api/jobs/' + jobId + '/trace/summary');
    if (!response.ok) return;
    const panel = document.getElementById('trace-summary');
    panel.style.display = '';
    panel.querySelector('pre').textContent = await response.text();
  }

  function showPlan(plan, inUse) {
    const kinds = Object.entries(plan.actors_by_kind).sort((a, b) => b[1] - a[1]).map(([k, n]) => k + ' ' + n).join(', ');
    // The plan names the first K devices; the job runs on info.devices in the same order.
    const running = (page.info && page.info.devices) || [];
    const devices = element('div', {}, plan.devices.map((d, k) => element('div', {class: 'mono'},
      d.device + ': ' + formatBytes(d.planned_bytes) + ' planned (' + formatBytes(d.register_bytes) + ' registers)' +
      (inUse && running[k] in inUse ? ', ' + formatBytes(inUse[running[k]]) + ' in use on ' + running[k] : ''))));
    const p = plan.parallel || {};
    kv(document.getElementById('plan'), [
      ['actors', plan.actors + ' (' + kinds + ')'],
      ['parallel', 'data ' + (p.data || 1) + ' × tensor ' + (p.tensor || 1) + ' × pipeline ' + (p.pipeline || 1)],
      ['samples/step', plan.samples_per_step],
      ['loss', plan.loss || '–'],
      ['metrics', (plan.metrics || []).join(', ') || '–'],
      ['memory', devices]]);
  }

  function onOwnEvent(event) {
    if (event.kind !== 'step') refreshInfo();
    else if (page.jobs[jobId].steps.length % 10 === 1) refreshInfo();
  }

  async function diagnose() {
    if (!page.info || page.info.state !== 'running') return;
    try {
      const waits = await json('/api/jobs/' + jobId + '/diagnosis');
      document.getElementById('diagnosis-when').textContent = 'after ' + formatSeconds(waits.elapsed_seconds) +
        ', ' + waits.unfinished + ' of ' + waits.actors + ' actors unfinished';
      document.querySelector('#diagnosis tbody').replaceChildren(...waits.waits.map((w) => element('tr', {title: w.line},
        element('td', {class: 'mono'}, w.name), element('td', {}, w.kind), element('td', {class: 'mono'}, w.device),
        element('td', {}, w.state),
        element('td', {class: 'mono'}, w.register ? w.register + ' from ' + w.waiting_on.join(', ') : ''),
        element('td', {}, w.completed_firings))));
    } catch (error) {
      document.getElementById('diagnosis-when').textContent = error.message;
    }
  }

  document.getElementById('compare').addEventListener('submit', (event) => {
    event.preventDefault();
    for (const id of event.target.elements.jobs.value.split(/[\s,]+/)) if (id) addJob(id);
    history.replaceState(null, '', 'job.html?id=' + jobId + '&compare=' + page.order.slice(1).join(','));
  });

  refreshInfo().catch((error) => { document.getElementById('info').textContent = error.message; });
  addJob(jobId);
  for (const id of param('compare').split(',')) if (id) addJob(id);
  setInterval(diagnose, 2000);
  window.addEventListener('resize', scheduleDraw);
})();
