'use strict';

// Statistics over benchmark runs, and a description of the machine they ran on.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

// A cache line's one-way trip between the two vCPUs below this (ns): the host has put them
// on cores that share a cache. Seen: 35-75 ns then, 100-220 ns otherwise (line-trip.c).
const NEAR_NS = 100;

function spread(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1] };
}

// The sum of `key` over the ports of model.stats().
function total(ports, key) {
  return ports.reduce((sum, p) => sum + p[key], 0);
}

// A run is only a measurement if the driver gave the model good descriptors. A buffer
// address outside the driver's DMA memory is a descriptor error that the model completes
// without copying the frame (native/model/rx.c), so a broken driver would look fast.
// Throws if any of `ports` (model.stats()) counted one.
function checkDescriptors(ports, who) {
  const errors = total(ports, 'descErrors');
  if (errors > 0) throw new Error(`${who}: the model counted ${errors} descriptor errors, so the rate means nothing`);
}

// runs: results of runOne() or runStandIn() ({ mpps, nsPerPacket, packets, seconds }).
// Heap bytes per packet (runOne() of the JS app): what the JS process allocated in its
// measured window over the packets the model counted in (nearly) the same window.
function summarize(runs) {
  const s = {
    mpps: spread(runs.map((r) => r.mpps)),
    nsPerPacket: spread(runs.map((r) => r.nsPerPacket)),
    runs: runs.map((r) => ({ mpps: r.mpps, packets: r.packets, seconds: r.seconds, driver: r.child })),
  };
  // The C yardstick's mean frames per receive call (see c-forward.c).
  const fill = spread(runs.map((r) => r.child && r.child.rxPerCall));
  if (fill) s.rxPerCall = fill;
  const withHeap = runs.filter((r) => r.child && typeof r.child.heapAllocated === 'number' && r.packets > 0);
  if (withHeap.length > 0) {
    s.heapBytesPerPacket = Math.max(...withHeap.map((r) => r.child.heapAllocated / r.packets)); // worst run
    s.gcs = Math.max(...withHeap.map((r) => r.child.gcs));
    s.gcPauseUs = Math.max(...withHeap.map((r) => r.child.gcPauseUs));
  }
  return s;
}

function machine() {
  let cpu = os.cpus()[0] ? os.cpus()[0].model : 'unknown';
  try {
    const m = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1];
  } catch { /* keep os.cpus() */ }
  return { cpu, nproc: os.cpus().length, node: process.version, kernel: os.release(), loadAverage: os.loadavg() };
}

// Writes `result` as JSON to DIR/PREFIX<date>.json (the date as a file name may have it),
// DIR made if need be; returns the file's path.
function writeResults(dir, prefix, date, result) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${prefix}${date.toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

// The line-trip probe (build/line-trip, from line-trip.c): one-way trip in ns.
function lineTrip(binary) {
  return Number(execFileSync(binary, { encoding: 'utf8' }));
}

// For measurements taken one after another: probes once now, and each call of the
// function it returns probes again and gives [the previous probe, the new one], the line
// trips just before and just after the measurement that has ended (`trips` of byPhase()).
function tripsBetween(binary) {
  let last = lineTrip(binary);
  return () => {
    const before = last;
    last = lineTrip(binary);
    return [before, last];
  };
}

// Splits measurements by the host's phase and gives the spread of ratioOf(m) in each:
// { near: { count, ratios }, far: { ... }, mixed } (ratios null where a phase had none).
// Each measurement carries the line trip probed just before and just after it (`trips`,
// ns). The host can change phase within seconds: a measurement whose two probes disagree
// is counted as mixed and left out of both.
function byPhase(measurements, ratioOf) {
  const groups = { near: [], far: [], mixed: [] };
  for (const m of measurements) {
    const [before, after] = m.trips.map((t) => t < NEAR_NS);
    groups[before !== after ? 'mixed' : before ? 'near' : 'far'].push(m);
  }
  const phase = (some) => ({ count: some.length, ratios: spread(some.map(ratioOf)) });
  return { near: phase(groups.near), far: phase(groups.far), mixed: groups.mixed.length, nearBelowNs: NEAR_NS };
}

module.exports = { total, checkDescriptors, spread, summarize, machine, writeResults, tripsBetween, byPhase };
