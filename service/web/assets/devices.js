// The devices page: each device, the job holding it and its memory against that job's plan;
// memory in use over time (sampled); utilization over time from a traced job's firings; with
// node agents, each node (devices, heartbeat age, clock offset, live) and a traced job's
// data-plane bytes per link.
'use strict';

(() => {
  const {element, formatBytes, json, param} = softwire;
  softwire.header('devices');
  const page = window.devicesPage = {history: {}, planned: {}, utilization: null, nodes: null, links: null};
  const began = Date.now() / 1000;

  async function plannedBytes(jobId, device) {
    if (!jobId) return null;
    if (!(jobId in page.planned)) {
      page.planned[jobId] = null;
      try {
        const info = await json('/api/jobs/' + jobId);
        // The plan names the first K devices; the job runs on info.devices in the same order.
        const byDevice = {};
        (info.devices || []).forEach((d, k) => { if (info.plan && info.plan.devices[k]) byDevice[d] = info.plan.devices[k].planned_bytes; });
        page.planned[jobId] = byDevice;
      } catch (error) { /* shown as unknown */ }
    }
    return page.planned[jobId] ? page.planned[jobId][device] : null;
  }

  async function sample() {
    let answer;
    try { answer = await json('/api/devices'); softwire.setLive('● live'); } catch (error) { softwire.setLive(error.message); return; }
    const now = Date.now() / 1000 - began;
    const rows = [];
    for (const d of answer.devices) {
      (page.history[d.device] = page.history[d.device] || []).push([now, d.allocated_bytes / (1 << 20)]);
      if (page.history[d.device].length > 600) page.history[d.device].shift();
      const planned = await plannedBytes(d.job_id, d.device);
      const share = d.memory_bytes > 0 ? d.allocated_bytes / d.memory_bytes : 0;
      rows.push(element('tr', {'data-device': d.device},
        element('td', {class: 'mono'}, d.device), element('td', {}, d.kind), element('td', {}, d.cores),
        element('td', {}, d.job_id ? element('a', {href: 'job.html?id=' + d.job_id}, d.job_id) : element('span', {class: 'muted'}, 'free')),
        element('td', {}, element('span', {class: 'progress'}, element('div', {style: 'width:' + (100 * share).toFixed(1) + '%'})),
          ' ' + formatBytes(d.allocated_bytes) + (d.memory_bytes > 0 ? ' of ' + formatBytes(d.memory_bytes) : ' (no memory limit)')),
        element('td', {}, planned === null || planned === undefined ? '–' : formatBytes(planned) +
          (d.allocated_bytes ? ' (' + (100 * d.allocated_bytes / planned).toFixed(0) + '% of it in use)' : ''))));
    }
    document.querySelector('#devices tbody').replaceChildren(...rows);
    charts.line(document.getElementById('memory'), Object.entries(page.history).map(([name, points]) => ({name, points})),
      {xLabel: 'seconds since this page opened', yLabel: 'MiB', yMin: 0});
  }

  async function sampleNodes() {
    let answer;
    try { answer = await json('/api/nodes'); } catch (error) { return; }
    page.nodes = answer.nodes;
    document.getElementById('nodes-note').textContent = answer.nodes_wanted > 0
      ? '(' + answer.nodes.length + ' joined; the server runs jobs on node agents, ' + answer.nodes_wanted + ' wanted)'
      : '(none: this server runs jobs on its own devices)';
    const offset = (n) => n.clock_offset_seconds === null ? 'not measured yet'
      : (n.clock_offset_seconds * 1e6).toFixed(1) + ' µs ± ' + (n.clock_round_trip_seconds * 0.5e6).toFixed(1) + ' µs';
    document.querySelector('#nodes tbody').replaceChildren(...answer.nodes.map((n) => element('tr', {'data-node': n.name},
      element('td', {class: 'mono'}, n.name), element('td', {}, n.host || '–'),
      element('td', {class: 'mono'}, n.devices.join(', ')),
      element('td', {}, n.heartbeat_age_seconds.toFixed(1) + ' s ago'),
      element('td', {}, offset(n)), element('td', {class: 'mono'}, n.data_plane_address || '–'),
      element('td', {}, String(n.pid)), element('td', {}, n.run_ids.join(', ') || '–'))));
  }

  async function showLinks(jobId) {
    const label = document.getElementById('links-job');
    try {
      const data = await json('/api/jobs/' + jobId + '/links');
      page.links = data.links;
      label.textContent = '(' + jobId + (data.links.length ? '' : ': no data plane, one node') + ')';
      document.querySelector('#links tbody').replaceChildren(...data.links.map((l) => element('tr', {'data-link': l.from + '->' + l.to},
        element('td', {class: 'mono'}, l.from), element('td', {class: 'mono'}, l.to),
        element('td', {}, formatBytes(l.bytes)), element('td', {}, String(l.sends)),
        element('td', {}, formatBytes(l.bytes_per_second) + '/s'))));
    } catch (error) {
      label.textContent = '(' + jobId + ': ' + error.message + ')';
    }
  }

  // Busy share per device in 100 slices of the trace's span: the union of its firings.
  function utilizationSeries(data) {
    const slices = 100, span = Math.max(1, data.span_ns), width = span / slices;
    const f = data.firings;
    const order = f.start.map((_, i) => i);  // Already by start.
    return data.devices.map((device, index) => {
      const busy = new Float64Array(slices);
      let open = -1, close = -1;
      const add = (a, b) => {
        for (let s = Math.floor(a / width); s < slices && s * width < b; ++s) {
          busy[s] += Math.max(0, Math.min(b, (s + 1) * width) - Math.max(a, s * width));
        }
      };
      for (const i of order) {
        if (data.actors[f.actor[i]].device !== index) continue;
        if (f.start[i] > close) { if (close > open) add(open, close); open = f.start[i]; close = f.end[i]; }
        else close = Math.max(close, f.end[i]);
      }
      if (close > open) add(open, close);
      return {name: device.name, points: Array.from(busy, (b, s) => [(s + 0.5) * width / 1e9, b / width])};
    });
  }

  async function showUtilization(jobId) {
    const label = document.getElementById('utilization-job');
    try {
      const data = await json('/api/jobs/' + jobId + '/trace');
      page.utilization = utilizationSeries(data);
      label.textContent = '(' + jobId + ', ' + data.job_name + ')';
      charts.line(document.getElementById('utilization'), page.utilization, {xLabel: 'seconds into the trace', yLabel: 'busy', yMin: 0});
    } catch (error) {
      label.textContent = '(' + jobId + ': ' + error.message + ')';
    }
  }

  async function newestTracedJob() {
    const list = await json('/api/jobs');
    for (const job of list.jobs.filter((j) => j.state === 'succeeded').slice(0, 5)) {
      const response = await softwire.request('/api/jobs/' + job.job_id + '/trace/summary');
      if (response.ok) return job.job_id;
    }
    return '';
  }

  document.getElementById('utilization-show').addEventListener('click', () => {
    const jobId = document.getElementById('utilization-input').value.trim();
    showUtilization(jobId);
    showLinks(jobId);
  });
  (async () => {
    const jobId = param('job') || await newestTracedJob();
    document.getElementById('utilization-input').value = jobId;
    if (jobId) { showUtilization(jobId); showLinks(jobId); }
  })();
  sample();
  sampleNodes();
  setInterval(sample, 1000);
  setInterval(sampleNodes, 1000);
})();
