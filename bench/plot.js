'use strict';

// The benchmark as an SVG line chart, drawn by hand (no plotting dependency), in the
// style of the ixy language comparisons: packet rate against batch size on a log2 x
// axis, one line per driver, the median as a marker and the min..max range as a bar.

const W = 640;
const H = 400;
const M = { left: 60, right: 20, top: 40, bottom: 50 };
const COLORS = { js: '#d62728', c: '#1f77b4' };
const LABELS = { js: 'ixy (JavaScript, Node)', c: 'C yardstick (same algorithm)' };

// A round step for about five y-axis ticks.
function niceStep(max) {
  const raw = max / 5;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * pow) return m * pow;
  return 10 * pow;
}

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

// rows: [{ batch, js: { median, min, max }, c: { median, min, max } }, ...]
function plotSvg(rows, { title = 'Bidirectional forwarding on the 82599 model, 64-byte frames' } = {}) {
  const batches = rows.map((r) => r.batch);
  const lo = Math.log2(Math.min(...batches));
  const hi = Math.max(Math.log2(Math.max(...batches)), lo + 1);
  const top = Math.max(1, ...rows.flatMap((r) => ['js', 'c'].filter((k) => r[k]).map((k) => r[k].max)));
  const step = niceStep(top);
  const yMax = Math.ceil(top / step) * step;
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const x = (b) => M.left + ((Math.log2(b) - lo) / (hi - lo)) * pw;
  const y = (v) => M.top + ph - (v / yMax) * ph;
  const f = (n) => n.toFixed(1);

  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  for (let v = 0; v <= yMax + 1e-9; v += step) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#ddd"/>`);
    out.push(`<text x="${M.left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${+v.toFixed(2)}</text>`);
  }
  for (const b of batches) {
    out.push(`<line x1="${f(x(b))}" x2="${f(x(b))}" y1="${M.top}" y2="${M.top + ph}" stroke="#eee"/>`);
    out.push(`<text x="${f(x(b))}" y="${M.top + ph + 16}" text-anchor="middle">${b}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 12}" text-anchor="middle">Batch size</text>`);
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">Packet rate [Mpps]</text>`);

  let legendY = M.top + 16;
  for (const key of ['c', 'js']) {
    const points = rows.filter((r) => r[key]);
    if (points.length === 0) continue;
    const color = COLORS[key];
    const path = points.map((r, i) => `${i ? 'L' : 'M'}${f(x(r.batch))},${f(y(r[key].median))}`).join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const r of points) {
      const cx = f(x(r.batch));
      out.push(`<line x1="${cx}" x2="${cx}" y1="${f(y(r[key].min))}" y2="${f(y(r[key].max))}" stroke="${color}"/>`);
      out.push(`<circle cx="${cx}" cy="${f(y(r[key].median))}" r="3.5" fill="${color}"/>`);
    }
    out.push(`<line x1="${M.left + 12}" x2="${M.left + 36}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${M.left + 42}" y="${legendY + 4}">${esc(LABELS[key])}</text>`);
    legendY += 18;
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { plotSvg };
