// What every page of the web view shares: the token, JSON requests, the live feeds, formatting.
// Plain browser JavaScript, no framework; nothing is fetched from anywhere but this server.
'use strict';

const softwire = (() => {
  const TOKEN_KEY = 'softwire.token';  // sessionStorage only: gone when the tab closes.

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

  function headers(extra) {
    const result = Object.assign({}, extra || {});
    if (token()) result['Authorization'] = 'Bearer ' + token();
    return result;
  }

  // Asks for the server's token once (a server started with --token-file needs it), keeps it
  // for this tab's session, and resolves when one was given.
  let asking = null;
  function askForToken(message) {
    if (asking) return asking;
    asking = new Promise((resolve) => {
      const dialog = document.createElement('div');
      dialog.id = 'token-dialog';
      dialog.innerHTML = '<form><h2>This server needs its token</h2>' +
        '<p class="muted">The token of <span class="mono">softwire serve --token-file</span>. ' +
        'It is kept in this tab only (sessionStorage).</p>' +
        '<p class="error"></p><input type="password" autocomplete="off" style="width:100%">' +
        '<p><input type="submit" value="Use the token"></p></form>';
      dialog.querySelector('.error').textContent = message || '';
      document.body.appendChild(dialog);
      const input = dialog.querySelector('input[type=password]');
      input.focus();
      dialog.querySelector('form').addEventListener('submit', (event) => {
        event.preventDefault();
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        dialog.remove();
        asking = null;
        resolve();
      });
    });
    return asking;
  }

  // fetch() with the token; asks for it on 401 and tries again. Resolves to the Response.
  async function request(path, options) {
    for (;;) {
      const opts = Object.assign({}, options || {});
      opts.headers = headers(opts.headers);
      if (opts.method && opts.method !== 'GET') opts.headers['X-Softwire-Request'] = '1';
      const response = await fetch(path, opts);
      if (response.status !== 401) return response;
      let message = 'the server refused the token';
      try { message = (await response.json()).error; } catch (e) { /* keep the default */ }
      await askForToken(token() ? message : '');
    }
  }

  // JSON of a GET (or of `options`); throws an Error with the server's message otherwise.
  async function json(path, options) {
    const response = await request(path, options);
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const error = new Error(body && body.error ? body.error : response.status + ' ' + response.statusText);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  // Follows a server-sent-event feed with the token in a header (EventSource cannot send one):
  // calls onMessage(eventName, data, id) for every message; after a dropped connection it
  // reconnects with Last-Event-ID, so nothing is missed or repeated. Returns {close()}.
  function feed(path, onMessage, onState) {
    let lastId = '';
    let closed = false;
    let controller = null;
    const state = onState || (() => {});
    async function run() {
      let delay = 500;
      while (!closed) {
        controller = new AbortController();
        try {
          const extra = {'Accept': 'text/event-stream'};
          if (lastId) extra['Last-Event-ID'] = lastId;
          const response = await request(path, {headers: extra, signal: controller.signal});
          if (!response.ok) throw new Error(response.status + ' ' + response.statusText);
          state('live');
          delay = 500;
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          let ended = false;
          for (;;) {
            const {value, done} = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, {stream: true});
            let cut;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              let event = 'message', data = '', id = null;
              for (const line of block.split('\n')) {
                if (line.startsWith('id: ')) id = line.slice(4);
                else if (line.startsWith('event: ')) event = line.slice(7);
                else if (line.startsWith('data: ')) data += line.slice(6);
              }
              if (id !== null) lastId = id;
              if (event === 'end') ended = true;
              if (data) onMessage(event, JSON.parse(data), id);
            }
          }
          if (ended) { state('ended'); return; }
        } catch (error) {
          if (closed) return;
          state('reconnecting');
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
    run();
    return {close() { closed = true; if (controller) controller.abort(); }};
  }

  function formatSeconds(seconds) {
    if (!isFinite(seconds) || seconds < 0) return '–';
    if (seconds < 1e-3) return (seconds * 1e6).toFixed(0) + ' µs';
    if (seconds < 1) return (seconds * 1e3).toFixed(1) + ' ms';
    if (seconds < 120) return seconds.toFixed(1) + ' s';
    if (seconds < 7200) return Math.floor(seconds / 60) + ' min ' + Math.round(seconds % 60) + ' s';
    return (seconds / 3600).toFixed(1) + ' h';
  }

  function formatBytes(bytes) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = bytes, unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) { value /= 1024; ++unit; }
    return (unit === 0 ? value.toFixed(0) : value.toFixed(1)) + ' ' + units[unit];
  }

  function formatNumber(value, digits) {
    if (value === null || value === undefined || !isFinite(value)) return '–';
    return Number(value).toFixed(digits === undefined ? 4 : digits);
  }

  // An element from a tag, attributes and children (strings become text: no HTML injection).
  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === 'string' || typeof child === 'number'
        ? document.createTextNode(String(child)) : child);
    }
    return node;
  }

  // The page header: the brand, the pages, the feed's state.
  function header(here) {
    const pages = [['Jobs', 'index.html'], ['Timeline', 'timeline.html'], ['Devices', 'devices.html']];
    const nav = element('nav', {}, pages.map(([name, href]) =>
      element('a', {href, class: name.toLowerCase() === here ? 'here' : ''}, name)));
    const live = element('span', {class: 'live', id: 'live'}, '');
    document.body.prepend(element('header', {}, element('span', {class: 'brand'}, 'softwire'), nav, live));
  }

  function setLive(text) {
    const live = document.getElementById('live');
    if (live) live.textContent = text;
  }

  function param(name) { return new URLSearchParams(location.search).get(name) || ''; }

  return {token, request, json, feed, formatSeconds, formatBytes, formatNumber, element, header,
          setLive, param};
})();
