'use strict';

// Forwarding with worker threads (issue 40): `ixy forward --workers N` (lib/apps/
// forward-workers.js) on the model, for each N of --workers.
//
//   npm run bench -- --workers 1,2 [--seconds S] [--warmup S] [--runs N] [--batch N] [--flows N] [--results DIR]
//
// Per run: a fresh model whose two sources send --flows UDP flows (64-byte frames, no rate
// limit, flows varying in addresses and both ports so that RSS spreads them), the JS
// forwarder in its own process (js-child.js, mode forward-workers). Over the window
// [ready + warmup, ready + warmup + seconds] the model counts the frames sent (the total,
// as every run of run.js counts) and the frames it delivered to each RX queue (queue i of
// both ports is worker i's): a worker's ns/packet is the window over the frames it
// forwarded, the total's the window over all of them; CPU ns/packet is the driver
// process's CPU time (every thread) over the frames sent. The model runs on CPU 0 and every
// thread of the driver on CPU 1 (--no-pin: where the scheduler puts them): on this machine's
// two vCPUs the workers share one, so the figures show what a second worker costs there,
// not a speed-up.
const os = require('os');
const { Model } = require('../lib/model');
const { startDriver, sample, sleep } = require('./run-one');
const { spread, machine, writeResults, checkDescriptors, total } = require('./summary');
const { eachOption } = require('./args');
const { cpuSeconds, pin } = require('./host');

const USAGE = `usage: npm run bench -- --workers 1,2 [options]
  --workers LIST  worker counts to run, each 1..16 (e.g. 1,2)
  --seconds S     measured seconds per run (default 3)
  --warmup S      seconds before measuring (default 1)
  --runs N        runs per worker count (default 3)
  --batch N       batch size (default 32)
  --flows N       flows per source (default 64)
  --ring N        descriptors per ring, a power of two 64..4096 (default 512)
  --no-pin        leave the model and the driver where the scheduler puts them (default:
                  the model on CPU 0, every driver thread on CPU 1)
  --results DIR   where the JSON goes (default bench/results)`;

function parseArgs(argv) {
  const o = { workers: null, seconds: 3, warmup: 1, runs: 3, batch: 32, flows: 64, ring: 512, pin: os.cpus().length >= 2, results: `${__dirname}/results` };
  eachOption(argv, USAGE, (a, next) => {
    if (a === '--workers') o.workers = next().split(',').map(Number);
    else if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--warmup') o.warmup = Number(next());
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--batch') o.batch = Number(next());
    else if (a === '--flows') o.flows = Number(next());
    else if (a === '--ring') o.ring = Number(next());
    else if (a === '--results') o.results = next();
    else if (a === '--no-pin') o.pin = false;
    else return false;
    return true;
  });
  if (o.workers === null || o.workers.length === 0 || !o.workers.every((n) => Number.isInteger(n) && n >= 1 && n <= 16)) {
    throw new Error('--workers takes worker counts of 1..16, e.g. --workers 1,2');
  }
  if (!(o.seconds > 0) || !(o.warmup >= 0) || !Number.isInteger(o.runs) || o.runs < 1) throw new Error('--seconds and --runs must be positive, --warmup at least 0');
  if (!Number.isInteger(o.batch) || o.batch < 1 || o.batch > 512) throw new Error('--batch must be 1..512');
  if (!Number.isInteger(o.flows) || o.flows < 1 || o.flows > 65536) throw new Error('--flows must be 1..65536');
  if (!Number.isInteger(o.ring) || o.ring < 64 || o.ring > 4096 || (o.ring & (o.ring - 1)) !== 0) throw new Error(`--ring must be a power of two from 64 to 4096, got ${o.ring}`);
  return o;
}

// Both ports: a source of `flows` flows at no rate limit, a counting sink, an unlimited wire.
function modelConfig(flows) {
  return [0, 1].flatMap((p) => [`source ${p} rate=0 size=60 flows=${flows} vary=sip,sport,dport`, `sink ${p}`, `wire ${p} unlimited`]);
}

// Frames the model delivered to RX queue q of every port: worker q's.
function queueFrames(ports, q) {
  return ports.reduce((sum, p) => sum + p.rxQueues[q], 0);
}

// One run with `workers` workers: { mpps, nsPerPacket, cpuNsPerPacket, perWorker: [{ packets, mpps, nsPerPacket }], packets, seconds }.
async function workersRun({ workers, warmup, seconds, batch, flows, ring, pin: pinned = false }) {
  const model = await Model.start({ ports: 2, config: modelConfig(flows) });
  let driver = null;
  try {
    if (pinned) pin(model.pid, 0);
    const cfg = { mode: 'forward-workers', workers, batch, warmup, seconds, ring, dir: model.dir, addresses: model.addresses };
    driver = await startDriver('js', cfg);
    if (pinned) pin(driver.child.pid, 1); // its workers' threads exist once it is ready
    await sleep(warmup * 1000);
    const cpu1 = cpuSeconds(driver.child.pid);
    const s1 = await sample(model);
    await sleep(seconds * 1000);
    const s2 = await sample(model);
    const cpu2 = cpuSeconds(driver.child.pid);
    await driver.finished();
    checkDescriptors(s2.ports, 'JS driver');
    const secs = (s2.at - s1.at) / 1000;
    const packets = s2.txFrames - s1.txFrames;
    const perWorker = [];
    for (let q = 0; q < workers; q++) {
      const n = queueFrames(s2.ports, q) - queueFrames(s1.ports, q);
      perWorker.push({ packets: n, mpps: n / secs / 1e6, nsPerPacket: n > 0 ? secs * 1e9 / n : null });
    }
    const dropped = total(s2.ports, 'rxDropNoDesc') - total(s1.ports, 'rxDropNoDesc');
    return {
      mpps: packets / secs / 1e6, nsPerPacket: packets > 0 ? secs * 1e9 / packets : null,
      cpuNsPerPacket: packets > 0 ? (cpu2 - cpu1) * 1e9 / packets : null, cpuShare: (cpu2 - cpu1) / secs,
      perWorker, packets, seconds: secs, rxDropped: dropped,
    };
  } finally {
    if (driver) driver.kill();
    await model.stop();
  }
}

function fmt(n, digits = 2) {
  return n === null || n === undefined ? '-' : n.toFixed(digits);
}

async function main(argv) {
  const o = parseArgs(argv);
  const started = new Date();
  const result = { kind: 'workers', date: started.toISOString(), machine: machine(), options: { ...o, results: undefined, frameSize: 60 }, rows: [] };
  process.stdout.write(`workers: ixy forward --workers N on the model, ${o.flows} flows per port, batch ${o.batch}; ${o.runs} run(s) of ${o.warmup}+${o.seconds} s; ` +
    `${o.pin ? 'model on CPU 0, driver on CPU 1' : 'not pinned'}; ` +
    `${os.cpus().length} vCPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  for (const workers of o.workers) {
    const runs = [];
    for (let r = 0; r < o.runs; r++) runs.push(await workersRun({ ...o, workers }));
    const row = {
      workers,
      mpps: spread(runs.map((r) => r.mpps)),
      nsPerPacket: spread(runs.map((r) => r.nsPerPacket)),
      cpuNsPerPacket: spread(runs.map((r) => r.cpuNsPerPacket)),
      perWorker: Array.from({ length: workers }, (_, q) => ({
        mpps: spread(runs.map((r) => r.perWorker[q].mpps)),
        nsPerPacket: spread(runs.map((r) => r.perWorker[q].nsPerPacket)),
      })),
      runs,
    };
    result.rows.push(row);
    process.stdout.write(`  ${workers} worker${workers > 1 ? 's' : ' '}  total ${fmt(row.mpps.median).padStart(6)} Mpps [${fmt(row.mpps.min)}..${fmt(row.mpps.max)}]` +
      `  ${fmt(row.nsPerPacket.median, 1).padStart(6)} ns/pkt  CPU ${fmt(row.cpuNsPerPacket.median, 1)} ns/pkt\n`);
    row.perWorker.forEach((w, q) => {
      process.stdout.write(`    worker ${q}  ${fmt(w.mpps.median).padStart(6)} Mpps  ${fmt(w.nsPerPacket.median, 1).padStart(6)} ns/pkt\n`);
    });
  }
  result.loadAverageAfter = os.loadavg();
  const file = writeResults(o.results, 'workers-', started, result);
  process.stdout.write(`results: ${file}\n`);
}

module.exports = { main, workersRun };
