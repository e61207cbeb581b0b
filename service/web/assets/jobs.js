// The jobs page: every job, live from /api/jobs/feed; submit a job file; cancel.
'use strict';

(() => {
  const {element, formatSeconds, formatNumber, json, request} = softwire;
  softwire.header('jobs');
  const body = document.querySelector('#jobs tbody');

  function timeLeft(job) {
    if (job.state !== 'running' || !(job.samples_per_second > 0) || !(job.samples_per_step > 0)) return '–';
    const remaining = (job.steps - job.completed_steps) * job.samples_per_step;
    return formatSeconds(remaining / job.samples_per_second);
  }

  async function cancel(jobId, button) {
    button.disabled = true;
    try {
      await json('/api/jobs/' + jobId + '/cancel', {method: 'POST'});
    } catch (error) {
      alert('cancel ' + jobId + ': ' + error.message);
      button.disabled = false;
    }
  }

  function row(job) {
    const fraction = job.steps > 0 ? Math.min(1, job.completed_steps / job.steps) : 0;
    const live = job.state === 'queued' || job.state === 'running';
    const links = [element('a', {href: 'job.html?id=' + job.job_id}, 'curves')];
    if (job.state === 'succeeded' || job.state === 'failed' || job.state === 'cancelled') {
      links.push(' · ', element('a', {href: 'timeline.html?job=' + job.job_id}, 'timeline'));
    }
    if (live) {
      links.push(' ', element('button', {class: 'danger', onclick: (event) => cancel(job.job_id, event.target)}, 'cancel'));
    }
    return element('tr', {'data-job': job.job_id, 'data-state': job.state, 'data-step': job.completed_steps},
      element('td', {}, element('a', {href: 'job.html?id=' + job.job_id}, job.job_id)),
      element('td', {}, job.name),
      element('td', {}, element('span', {class: 'state ' + job.state, title: job.error || ''}, job.state)),
      element('td', {},
        element('span', {class: 'progress'}, element('div', {style: 'width:' + (100 * fraction).toFixed(1) + '%'})),
        ' ', element('span', {class: 'step'}, job.completed_steps + ' / ' + job.steps)),
      element('td', {}, job.completed_steps > 0 ? formatNumber(job.last_loss) : '–'),
      element('td', {}, job.samples_per_second > 0 ? formatNumber(job.samples_per_second, 0) : '–'),
      element('td', {}, timeLeft(job)),
      element('td', {class: 'mono'}, (job.devices || []).join(', ')),
      element('td', {}, links));
  }

  function show(list) {
    body.replaceChildren(...list.jobs.map(row));
    document.getElementById('empty').style.display = list.jobs.length ? 'none' : '';
    document.title = 'softwire · jobs' + (list.queued ? ' (' + list.queued + ' queued)' : '');
  }

  softwire.feed('/api/jobs/feed', (event, data) => { if (event === 'jobs') show(data); },
                (state) => softwire.setLive(state === 'live' ? '● live' : state));

  document.getElementById('submit').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const result = document.getElementById('submit-result');
    const data = new FormData();
    const job = form.elements.job.files[0];
    data.append('job', job, job.name);
    // A data file goes by the path the job names for a file of its name ("data/x.npy" for
    // x.npy), else by its name.
    const named = [...(await job.text()).matchAll(/path:\s*"([^"]+)"/g)].map((m) => m[1]);
    for (const file of form.elements.data.files) {
      const path = named.find((p) => p === file.name || p.endsWith('/' + file.name)) || file.name;
      data.append('data', file, path);
    }
    for (const name of ['steps', 'pp', 'dp']) {
      if (form.elements[name].value) data.append(name, form.elements[name].value);
    }
    if (form.elements.trace.checked) data.append('trace', '1');
    if (form.elements.trace_steps.value) data.append('trace_steps', form.elements.trace_steps.value);
    result.className = 'muted';
    result.textContent = 'submitting ' + job.name + ' ...';
    try {
      const response = await request('/api/jobs', {method: 'POST', body: data});
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.statusText);
      result.className = '';
      result.replaceChildren('submitted as ', element('a', {href: 'job.html?id=' + answer.job.job_id}, answer.job.job_id));
    } catch (error) {
      result.className = 'error';
      result.textContent = error.message;
    }
  });
})();
