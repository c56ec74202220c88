'use strict';

// `ixy latency` against the model's truth in the same run (issue 47): ports 0-1 and 2-3
// cabled, a forwarder (the JS `forward` app or the C yardstick) between 1 and 2, `ixy latency`
// from 0 to 3 with load at each rate, and the model timing the same PTP probes itself
// (native/model/README.md, "Latency truth": RX write-back on port 1 to TX fetch on port 2).
// The meter's figure is the truth plus what lies outside the forwarder: both cables (what
// `ixy latency` over one bare cable reads, the first row) and the probe's time on the line.
//
//   npm run bench -- --latency-meter [--rates 0.1,1] [--seconds 5] [--runs 1] [--results DIR]
//
// The model runs on CPU 0, the forwarder's main thread on CPU 1 (host.js pinDriver), the
// meter wherever the kernel puts it: it naps between its polls (lib/apps/latency.js).
const os = require('os');
const path = require('path');
const { execFile } = require('child_process');
const { Model } = require('../lib/model');
const { startDriver, sleep } = require('./run-one');
const { buildCForward } = require('./c-build');
const { machine, writeResults } = require('./summary');
const { eachOption } = require('./args');
const { pin, pinDriver } = require('./host');

const IXY = path.join(__dirname, '..', 'bin', 'ixy.js');
const PROBE_WIRE_NS = (60 + 12) * 0.8; // a probe's bytes, FCS, preamble and SFD at 10 Gb/s
const USAGE = `usage: npm run bench -- --latency-meter [--rates 0.1,1] [--seconds S] [--runs N] [--results DIR]
  --rates LIST  load in Mpps (default 0.1,1)
  --seconds S   how long ixy latency measures (default 5)
  --runs N      runs of each forwarder per rate (default 1)
  --results DIR where the JSON goes (default bench/results)`;

// `ixy latency TX RX --json` on the model at dir: its summary (us).
function meter(dir, tx, rx, pps, seconds) {
  const args = [IXY, 'latency', tx, rx, '--rate', String(pps), '--seconds', String(seconds), '--json'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env: { ...process.env, IXY_PCI_ROOT: dir }, timeout: (seconds + 60) * 1000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`ixy latency: ${stderr.trim() || err.message}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

// What ixy latency reads over one bare cable (no forwarder): the baseline.
async function cableRun(seconds) {
  const model = await Model.start({ ports: 2, config: ['cable 0 1'] });
  try {
    pin(model.pid, 0);
    const m = await meter(model.dir, model.addresses[0], model.addresses[1], 0, Math.min(seconds, 2));
    const [a, b] = await model.stats();
    return { cableNs: a.txLatencyNs + b.rxLatencyNs, p50Ns: m.p50 * 1000, count: m.count };
  } finally {
    await model.stop();
  }
}

// One run through a forwarder: the meter's summary and the model's histogram of port 2.
async function forwardRun({ lang, mpps, seconds, cForward }) {
  const model = await Model.start({ ports: 4, config: ['cable 0 1', 'cable 2 3', 'latency on'] });
  let driver = null;
  try {
    pin(model.pid, 0);
    const cfg = { mode: 'forward', batch: 32, warmup: 0, seconds: seconds + 30, touch: true, ring: 512, dir: model.dir, addresses: model.addresses.slice(1, 3), firstPort: 1 };
    driver = await startDriver(lang, cfg, cForward);
    pinDriver(driver.child.pid);
    await sleep(300);
    const m = await meter(model.dir, model.addresses[0], model.addresses[3], Math.round(mpps * 1e6), seconds);
    const truth = await model.latency(2);
    const stats = await model.stats();
    const cablesNs = stats[0].txLatencyNs + stats[1].rxLatencyNs + PROBE_WIRE_NS + stats[2].txLatencyNs + stats[3].rxLatencyNs;
    return { lang, mpps, meter: m, truth: { count: truth.count, p50Ns: truth.p50Ns, p99Ns: truth.p99Ns }, cablesNs };
  } finally {
    if (driver) driver.kill();
    await model.stop();
  }
}

const us = (ns) => (ns / 1000).toFixed(3);

function row(r) {
  const meterNs = r.meter.p50 * 1000;
  const inside = meterNs - r.cablesNs;
  const off = r.truth.p50Ns > 0 ? `${(((inside - r.truth.p50Ns) / r.truth.p50Ns) * 100).toFixed(1)}%` : '-';
  return `| ${r.mpps} Mpps | ${r.lang === 'js' ? 'ixy forward' : 'C yardstick'} | ${us(meterNs)} | ${us(r.cablesNs)} | ${us(inside)} | ${us(r.truth.p50Ns)} | ${off} | ${r.meter.count} / ${r.truth.count} |`;
}

function parseArgs(argv) {
  const o = { rates: [0.1, 1], seconds: 5, runs: 1, results: path.join(__dirname, 'results') };
  eachOption(argv, USAGE, (option, next) => {
    if (option === '--rates') o.rates = next().split(',').map(Number);
    else if (option === '--seconds') o.seconds = Number(next());
    else if (option === '--runs') o.runs = Number(next());
    else if (option === '--results') o.results = next();
    else return false;
    return true;
  });
  if (!o.rates.length || o.rates.some((r) => !(r > 0 && r <= 5))) throw new Error('--rates must be Mpps above 0, at most 5');
  if (!(o.seconds > 0)) throw new Error('--seconds must be above 0');
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be 1 or more');
  return o;
}

async function main(argv) {
  const o = parseArgs(argv);
  if (os.cpus().length < 2) throw new Error('the latency benchmark needs two CPUs: one for the model, one for the forwarder');
  pin(process.pid, 0);
  const started = new Date();
  const cForward = buildCForward();
  const cable = await cableRun(o.seconds);
  console.log(`ixy latency over one cable: p50 ${us(cable.p50Ns)} us, the model's two port latencies ${us(cable.cableNs)} us (${cable.count} probes)`);
  console.log('| Load | Forwarder | ixy latency p50 us | cables + probe on the line us | meter less cables us | model truth p50 us | off | probes meter / truth |');
  console.log('|---|---|---|---|---|---|---|---|');
  const results = [];
  for (const mpps of o.rates) {
    for (let run = 0; run < o.runs; run++) {
      for (const lang of ['js', 'c']) {
        const r = await forwardRun({ lang, mpps, seconds: o.seconds, cForward });
        results.push(r);
        console.log(row(r));
      }
    }
  }
  const { results: dir, ...options } = o;
  const file = writeResults(dir, 'latency-meter-', started, { date: started.toISOString(), machine: machine(), options, cable, results });
  console.log(`results: ${file}`);
}

module.exports = { main };
