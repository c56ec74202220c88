'use strict';

// Forwarding latency on the model (issue 37): the JS `forward` app against the C yardstick
// (bench/c-forward.c) at fixed rates, from the model's latency truth (native/model/README.md,
// "Latency truth": for every frame, RX write-back to the driver handing it back on TX).
//
//   npm run bench -- --latency [--rates 0.1,1,5] [--seconds 10] [--warmup 2] [--batch 32] [--runs 1]
//                              [--helpers driver|model] [--results DIR]
//
// Per rate and driver: a fresh model, its lines paced at 10 Gb/s, port 0's source at the
// rate (64-byte frames), the driver forwarding 0 -> 1 (and 1 -> 0, idle); after --warmup
// seconds the histogram of port 1 is cleared, after --seconds more it is read. The model
// runs on CPU 0, the driver on CPU 1, V8's own threads (compiler, GC helpers) with it by
// default (--helpers driver; host.js pinDriver): the model stands in for a NIC, which no
// thread of the driver's can delay, and V8's threads on the model's CPU did, their time
// counted as the driver's latency (--helpers model, loss.js's default: bench/PERFORMANCE.md,
// "Latency", has both). The JS driver counts its GCs over the same window (js-child.js).
// Over the window, too: how long the driver's main thread waited for its CPU (the host's
// other work, while arriving frames wait), and how long the model skipped its source, not
// being scheduled.
const os = require('os');
const path = require('path');
const { Model } = require('../lib/model');
const { startDriver, sleep } = require('./run-one');
const { buildCForward } = require('./c-build');
const { machine, writeResults } = require('./summary');
const { eachOption } = require('./args');
const { pin, pinDriver, waitedNs } = require('./host');

const FRAME_SIZE = 60; // 64 bytes on the wire with the FCS
const USAGE = `usage: npm run bench -- --latency [--rates 0.1,1,5] [--seconds S] [--warmup S] [--batch N] [--runs N] [--helpers driver|model] [--results DIR]
  --rates LIST  Mpps (default 0.1,1,5)
  --seconds S   measured window (default 10)
  --warmup S    before it (default 2)
  --batch N     batch size of both drivers (default 32)
  --runs N      runs of each driver per rate, JS and C in turn, each first in every other run (default 1)
  --helpers C   the CPU of V8's own threads: driver (default) or model
  --results DIR where the JSON goes (default bench/results)`;

// One run: the model's histogram of port 1 over the window, the drops, the driver's GCs.
async function latencyRun({ lang, mpps, seconds, warmup, batch, helpers, cForward }) {
  const model = await Model.start({ ports: 2, config: ['sink 0', 'sink 1', 'latency on'] });
  let driver = null;
  try {
    pin(model.pid, 0);
    const cfg = { mode: 'forward', batch, warmup, seconds, touch: true, ring: 512, dir: model.dir, addresses: model.addresses };
    driver = await startDriver(lang, cfg, cForward);
    pinDriver(driver.child.pid, helpers);
    await model.source(0, { rate: Math.round(mpps * 1e6), size: FRAME_SIZE });
    await sleep(warmup * 1000);
    await model.clear(0);
    await model.clear(1);
    const waited = waitedNs(driver.child.pid);
    await sleep(seconds * 1000);
    const histogram = await model.latency(1);
    const driverWaitedNs = waitedNs(driver.child.pid) - waited;
    const [port0, port1] = await model.stats();
    await model.sourceOff(0);
    const last = (await driver.finished()) || {};
    return {
      lang, mpps, histogram, offered: port0.rxOffered, dropped: port0.rxDropNoDesc,
      // received but not sent on: what the driver dropped for a full TX ring (C does, the
      // JS app holds such frames back), give or take the frames in flight at either end
      notForwarded: port0.rxDelivered - port1.txFrames,
      gcs: last.gcs ?? null, gcPauseUs: last.gcPauseUs ?? null, gcTypes: last.gcTypes ?? null, sourcePausedUs: port0.sourcePausedUs,
      driverWaitedNs,
    };
  } finally {
    if (driver) driver.kill();
    await model.stop();
  }
}

const us = (ns) => (ns / 1000).toFixed(2);

function row(r) {
  const h = r.histogram;
  const types = r.gcTypes ? Object.entries(r.gcTypes).map(([type, n]) => `${n} ${type}`).join(', ') : '';
  const gc = r.gcs === null ? '-' : `${r.gcs} (${(r.gcPauseUs / 1000).toFixed(1)} ms${types ? `: ${types}` : ''})`;
  return `| ${r.mpps} Mpps | ${r.lang === 'js' ? 'JavaScript' : 'C yardstick'} | ${us(h.p50Ns)} | ${us(h.p99Ns)} | ${us(h.p999Ns)} | ${us(h.p9999Ns)} | ${us(h.maxNs)} | ${h.count.toLocaleString('en')} | ${r.dropped.toLocaleString('en')} | ${r.notForwarded.toLocaleString('en')} | ${gc} | ${Math.round(r.driverWaitedNs / 1e6)} | ${Math.round(r.sourcePausedUs / 1000)} |`;
}

function parseArgs(argv) {
  const o = { rates: [0.1, 1, 5], seconds: 10, warmup: 2, batch: 32, runs: 1, helpers: 'driver', results: path.join(__dirname, 'results') };
  eachOption(argv, USAGE, (option, next) => {
    if (option === '--rates') o.rates = next().split(',').map(Number);
    else if (option === '--seconds') o.seconds = Number(next());
    else if (option === '--warmup') o.warmup = Number(next());
    else if (option === '--batch') o.batch = Number(next());
    else if (option === '--runs') o.runs = Number(next());
    else if (option === '--helpers') o.helpers = next();
    else if (option === '--results') o.results = next();
    else return false;
    return true;
  });
  if (!o.rates.length || o.rates.some((r) => !(r > 0 && r <= 14.88))) throw new Error('--rates must be Mpps from 0 to 14.88 (the line)');
  if (!(o.seconds > 0) || !(o.warmup >= 0)) throw new Error('--seconds must be above 0 and --warmup at least 0');
  if (!Number.isInteger(o.batch) || o.batch < 1 || o.batch > 512) throw new Error(`bad batch size ${o.batch}`);
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be 1 or more');
  if (o.helpers !== 'driver' && o.helpers !== 'model') throw new Error('--helpers must be driver or model');
  return o;
}

async function main(argv) {
  const o = parseArgs(argv);
  if (os.cpus().length < 2) throw new Error('the latency benchmark needs two CPUs: one for the model, one for the driver');
  pin(process.pid, 0);
  const started = new Date();
  const cForward = buildCForward();
  const results = [];
  // driver away: its main thread waiting for its CPU (driverWaitedNs); model away: source
  // time the model skipped while it was descheduled (sourcePausedUs)
  console.log('| Rate | Driver | p50 us | p99 us | p99.9 us | p99.99 us | max us | frames | dropped (no descriptor) | not forwarded | GCs (pause) | driver away ms | model away ms |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const mpps of o.rates) {
    for (let run = 0; run < o.runs; run++) {
      // Who goes first changes from run to run: the host's own work comes in spells, and a
      // fixed order would give each spell's start to the same language.
      for (const lang of run % 2 === 0 ? ['js', 'c'] : ['c', 'js']) {
        const r = await latencyRun({ lang, mpps, seconds: o.seconds, warmup: o.warmup, batch: o.batch, helpers: o.helpers, cForward });
        results.push(r);
        console.log(row(r));
      }
    }
  }
  const { results: dir, ...options } = o;
  const file = writeResults(dir, 'latency-', started, { date: started.toISOString(), machine: machine(), options, results });
  console.log(`results: ${file}`);
}

module.exports = { main, latencyRun };
