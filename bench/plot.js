#!/usr/bin/env node
'use strict';

// The benchmark as an SVG chart, drawn by hand (no plotting dependency): JavaScript's
// forwarding rate as a fraction of C's, against batch size on a log2 x axis. It plots the
// ratio, not the rates: both drivers measured side by side on one model go through the
// same host phase, so their ratio holds while the rates themselves jump by 3x when the
// host moves the vCPUs (summary.js, byPhase()).
//   node bench/plot.js [RESULTS.json [OUT.svg]]   (default results/latest.json, latest.svg)
// Series: side by side over all window pairs (median, min..max as a bar, cut at the
// frame), the same split by the host's phase, and the drivers' own cost without the model
// (stand-in.js) where the results have it.
const fs = require('fs');
const path = require('path');

const W = 640;
const H = 400;
const M = { left: 60, right: 20, top: 40, bottom: 50 };
const SERIES = [
  { key: 'all', color: '#d62728', label: 'side by side, all window pairs', line: true },
  { key: 'near', color: '#ff7f0e', label: 'side by side, vCPUs sharing a cache' },
  { key: 'far', color: '#1f77b4', label: 'side by side, vCPUs apart' },
  { key: 'own', color: '#7f7f7f', label: 'own cost, no model (stand-in)' },
];

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

// The points of each series from a results file of run.js: { all: [{ batch, median,
// min, max }], near: [...], far: [...], own: [...] }; a phase or batch without data has
// no point.
function ratioSeries(result) {
  const s = { all: [], near: [], far: [], own: [] };
  for (const row of result.forward || []) {
    const sbs = row.sideBySide;
    if (!sbs) continue;
    s.all.push({ batch: row.batch, median: sbs.ratio, min: sbs.ratios.min, max: sbs.ratios.max });
    for (const phase of ['near', 'far']) {
      const p = sbs.phases && sbs.phases[phase];
      if (p && p.count > 0) s[phase].push({ batch: row.batch, median: p.ratios.median, min: p.ratios.min, max: p.ratios.max });
    }
  }
  for (const row of result.standIn || []) s.own.push({ batch: row.batch, median: row.ratio, min: row.ratios.min, max: row.ratios.max });
  return s;
}

// result: a results file of run.js (with C); returns the SVG text, or null without ratios.
function plotSvg(result) {
  const s = ratioSeries(result);
  if (s.all.length === 0) return null;
  const batches = [...new Set(SERIES.flatMap(({ key }) => s[key].map((p) => p.batch)))].sort((a, b) => a - b);
  // Half a step of room at each end for the markers set beside each other.
  const lo = Math.log2(batches[0]) - 0.4;
  const hi = Math.max(Math.log2(batches[batches.length - 1]), lo + 1) + 0.4;
  const medians = SERIES.flatMap(({ key }) => s[key].map((p) => p.median));
  const yMax = Math.max(1.2, Math.ceil(Math.max(...medians) * 1.1 / 0.2) * 0.2);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  // Markers of the series at one batch sit a few pixels apart, so that none hides another.
  const x = (b, i = 0) => M.left + ((Math.log2(b) - lo) / (hi - lo)) * pw + (i - 1.5) * 5;
  const y = (v) => M.top + ph - (Math.min(Math.max(v, 0), yMax) / yMax) * ph;
  const f = (n) => n.toFixed(1);

  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">JavaScript / C, bidirectional forwarding on the 82599 model, 64-byte frames</text>`);
  for (let v = 0; v <= yMax + 1e-9; v += 0.2) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="${Math.abs(v - 1) < 1e-9 ? '#333' : '#ddd'}"${Math.abs(v - 1) < 1e-9 ? ' stroke-dasharray="4 3"' : ''}/>`);
    out.push(`<text x="${M.left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${v.toFixed(1)}</text>`);
  }
  for (const b of batches) {
    out.push(`<line x1="${f(x(b, 1.5))}" x2="${f(x(b, 1.5))}" y1="${M.top}" y2="${M.top + ph}" stroke="#eee"/>`);
    out.push(`<text x="${f(x(b, 1.5))}" y="${M.top + ph + 16}" text-anchor="middle">${b}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 12}" text-anchor="middle">Batch size</text>`);
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">JavaScript / C (1.0: as fast as C)</text>`);

  let legendY = M.top + ph - 8 - 16 * (SERIES.filter(({ key }) => s[key].length > 0).length - 1);
  SERIES.forEach(({ key, color, label, line }, i) => {
    const points = s[key];
    if (points.length === 0) return;
    if (line) out.push(`<path d="${points.map((p, j) => `${j ? 'L' : 'M'}${f(x(p.batch, i))},${f(y(p.median))}`).join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of points) {
      const cx = f(x(p.batch, i));
      out.push(`<line x1="${cx}" x2="${cx}" y1="${f(y(p.min))}" y2="${f(y(p.max))}" stroke="${color}"/>`);
      out.push(`<circle cx="${cx}" cy="${f(y(p.median))}" r="3.5" fill="${color}"/>`);
    }
    out.push(`<circle cx="${W - M.right - 236}" cy="${legendY}" r="3.5" fill="${color}"/>`);
    out.push(`<text x="${W - M.right - 226}" y="${legendY + 4}">${esc(label)}</text>`);
    legendY += 16;
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

if (require.main === module) {
  const input = process.argv[2] || path.join(__dirname, 'results', 'latest.json');
  const output = process.argv[3] || path.join(__dirname, 'latest.svg');
  try {
    const svg = plotSvg(JSON.parse(fs.readFileSync(input, 'utf8')));
    if (!svg) throw new Error(`${input} has no JS/C ratios (a run with --no-c?)`);
    fs.writeFileSync(output, svg);
    process.stdout.write(`plot: ${output}\n`);
  } catch (err) {
    process.stderr.write(`plot: ${err.message}\n`);
    process.exit(1);
  }
}

module.exports = { plotSvg };
