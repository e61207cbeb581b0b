// Line charts on a canvas: several series overlaid, axes with round ticks, a legend. Used for
// the job page's loss and metric curves and the devices page's histories.
'use strict';

const charts = (() => {
  const PALETTE = ['#2f6fdf', '#e4572e', '#29a36a', '#9b5de5', '#f2a541', '#17becf', '#8c564b'];

  function niceTicks(low, high, count) {
    if (!(high > low)) { high = low + 1; }
    const raw = (high - low) / count;
    const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) || raw;
    const ticks = [];
    for (let t = Math.ceil(low / step) * step; t <= high + step * 1e-9; t += step) ticks.push(t);
    return ticks;
  }

  function label(value) {
    const abs = Math.abs(value);
    if (abs !== 0 && (abs >= 1e5 || abs < 1e-3)) return value.toExponential(1);
    return String(Number(value.toPrecision(4)));
  }

  // Draws `series` ([{name, color?, points: [[x, y], ...]}]) into `canvas`.
  // options: {xLabel, yLabel, yMin}. Returns nothing; safe to call again on new data.
  function line(canvas, series, options) {
    const opts = options || {};
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 600, height = canvas.clientHeight || 260;
    canvas.width = width * ratio; canvas.height = height * ratio;
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const left = 60, right = 12, top = 22, bottom = 34;
    let xMin = Infinity, xMax = -Infinity, yMin = Infinity, yMax = -Infinity;
    for (const s of series) {
      for (const [x, y] of s.points) {
        if (!isFinite(y)) continue;
        xMin = Math.min(xMin, x); xMax = Math.max(xMax, x);
        yMin = Math.min(yMin, y); yMax = Math.max(yMax, y);
      }
    }
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#6b7383';
    if (xMin === Infinity) { g.fillText('no data yet', left + 10, top + 20); return; }
    if (opts.yMin !== undefined) yMin = Math.min(yMin, opts.yMin);
    if (xMax === xMin) xMax = xMin + 1;
    if (yMax === yMin) { yMax += Math.abs(yMax) * 0.05 || 1; yMin -= Math.abs(yMin) * 0.05 || 1; }
    const pad = (yMax - yMin) * 0.05; yMax += pad; if (opts.yMin === undefined) yMin -= pad;
    const px = (x) => left + (x - xMin) / (xMax - xMin) * (width - left - right);
    const py = (y) => top + (1 - (y - yMin) / (yMax - yMin)) * (height - top - bottom);
    g.strokeStyle = '#e3e7ee'; g.lineWidth = 1;
    g.textAlign = 'right'; g.textBaseline = 'middle';
    for (const t of niceTicks(yMin, yMax, 5)) {
      g.beginPath(); g.moveTo(left, py(t)); g.lineTo(width - right, py(t)); g.stroke();
      g.fillText(label(t), left - 6, py(t));
    }
    g.textAlign = 'center'; g.textBaseline = 'top';
    for (const t of niceTicks(xMin, xMax, 8)) g.fillText(label(t), px(t), height - bottom + 6);
    if (opts.xLabel) g.fillText(opts.xLabel, (left + width - right) / 2, height - 14);
    g.textAlign = 'left'; g.textBaseline = 'alphabetic';
    if (opts.yLabel) g.fillText(opts.yLabel, 4, 12);
    let legendX = left + 60;
    series.forEach((s, i) => {
      const color = s.color || PALETTE[i % PALETTE.length];
      g.strokeStyle = color; g.lineWidth = 1.6;
      g.beginPath();
      s.points.forEach(([x, y], k) => { if (k === 0) g.moveTo(px(x), py(y)); else g.lineTo(px(x), py(y)); });
      g.stroke();
      if (s.points.length <= 60) {
        g.fillStyle = color;
        for (const [x, y] of s.points) { g.beginPath(); g.arc(px(x), py(y), 2.2, 0, 2 * Math.PI); g.fill(); }
      }
      g.fillStyle = color; g.fillRect(legendX, 6, 10, 10);
      g.fillStyle = '#1d2430'; g.fillText(s.name, legendX + 14, 15);
      legendX += 24 + g.measureText(s.name).width;
    });
  }

  return {line, PALETTE};
})();
