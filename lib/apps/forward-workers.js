'use strict';

// `ixy forward A B --workers N`: the forwarder of forward.js with one worker thread per
// queue pair. Both ports are opened here with { workers: true } (global init, RSS over N RX
// queues, no queues of their own); worker i attaches queue pair i of each port
// (lib/queue-pair.js) and forwards RX queue i of each port to TX queue i of the
// other, holding back what a full TX ring did not take, as forward.js does. This thread
// prints the per-second report and the totals from counters the workers publish, and on
// SIGINT/SIGTERM, after --seconds or when a worker fails, stops the workers first and then
// closes the ports. Nothing per packet crosses threads.
const { Worker, isMainThread, workerData } = require('worker_threads');
const { IxyError, checkInteger } = require('../host/errors');
const { computeRates, formatRates, formatTotals, noTraffic } = require('../loop/rates');
const { afterMs } = require('../loop');

// Per worker and port: RX packets, RX bytes, TX packets, TX bytes, TX dropped (Float64,
// written by the worker only; TX dropped once it stopped: frames held back for a full TX
// ring and frames its TX ring never sent, as forward.js counts them).
const FIELDS = 5;
const IDLE_SPINS = 1 << 16; // idle steps before the worker sleeps 1 ms on the stop flag
const PUBLISH_EVERY = 64; // steps between counter updates

// stop: an AbortSignal that stops it as SIGINT does, during the link wait too
// (lib/apps/stop-signal.js).
async function forwardWorkers(addressA, addressB, { workers, batchSize = 32, seconds = 0, out = process.stdout, deviceOptions = {}, stop: stopSignal } = {}) {
  if (addressA === addressB) throw new IxyError('EINVAL', 'forward needs two different ports');
  checkInteger('workers', workers, 1, 16);
  const { open } = require('../open');
  const options = { ...deviceOptions, rxQueues: workers, txQueues: workers, workers: true, signal: stopSignal };
  const devs = [];
  let failure = null;
  try {
    try {
      for (const address of [addressA, addressB]) devs.push(await open(address, options));
    } catch (err) {
      if (err.code !== 'EABORTED') throw err;
      for (const address of [addressA, addressB]) out.write(`${formatTotals(address, noTraffic())}, per worker RX -\n`);
      return { stats: {} };
    }
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const counts = new Float64Array(new SharedArrayBuffer(8 * workers * 2 * FIELDS));
    const handles = devs.map((dev) => dev.workerHandle());
    const halt = () => { Atomics.store(stop, 0, 1); Atomics.notify(stop, 0); };
    const exits = [];
    for (let i = 0; i < workers; i++) {
      const w = new Worker(module.filename, { workerData: { ixyForwardWorker: true, handles, queue: i, stop, counts, batchSize } });
      exits.push(new Promise((resolve) => {
        w.once('error', (err) => { failure = failure || err; halt(); });
        w.once('exit', resolve);
      }));
    }
    process.once('SIGINT', halt);
    process.once('SIGTERM', halt);
    if (stopSignal) {
      if (stopSignal.aborted) halt();
      else stopSignal.addEventListener('abort', halt);
    }
    const cancelTimer = seconds > 0 ? afterMs(seconds * 1000, halt) : null; // in chunks past 24.8 days
    out.write(`forwarding ${devs[0].address} (${devs[0].mac}) <-> ${devs[1].address} (${devs[1].mac}), batch ${batchSize}, ${workers} workers\n`);
    let last = devs.map((dev, p) => portStats(dev, p, counts, workers));
    let lastTime = process.hrtime.bigint();
    const report = setInterval(() => {
      const now = process.hrtime.bigint();
      const current = devs.map((dev, p) => portStats(dev, p, counts, workers));
      const secs = Number(now - lastTime) / 1e9;
      devs.forEach((dev, p) => {
        const perWorker = current[p].perWorker.map((n, i) => ((n - last[p].perWorker[i]) / secs / 1e6).toFixed(2)).join(' + ');
        out.write(`${formatRates(dev.address, computeRates(last[p], current[p], secs))} (RX per worker: ${perWorker} Mpps)\n`);
      });
      last = current;
      lastTime = now;
    }, 1000);
    await Promise.all(exits);
    clearInterval(report);
    if (cancelTimer) cancelTimer();
    process.removeListener('SIGINT', halt);
    process.removeListener('SIGTERM', halt);
    if (stopSignal) stopSignal.removeEventListener('abort', halt);
    const stats = {};
    devs.forEach((dev, p) => {
      stats[dev.address] = portStats(dev, p, counts, workers);
      out.write(`${formatTotals(dev.address, stats[dev.address])}, per worker RX ${stats[dev.address].perWorker.join(' + ')}\n`);
    });
    if (failure) throw failure;
    return { stats };
  } finally {
    for (const dev of devs) dev.close();
  }
}

// One port's totals: the workers' counters summed, drops from the device's registers.
function portStats(dev, p, counts, workers) {
  const s = { rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, rxMissed: 0, rxErrors: 0, txDropped: 0, perWorker: [] };
  for (let w = 0; w < workers; w++) {
    const at = (w * 2 + p) * FIELDS;
    s.rxPackets += counts[at];
    s.rxBytes += counts[at + 1];
    s.txPackets += counts[at + 2];
    s.txBytes += counts[at + 3];
    s.txDropped += counts[at + 4];
    s.perWorker.push(counts[at]);
  }
  const own = dev.stats();
  s.rxMissed = own.rxMissed;
  s.rxErrors = own.rxErrors;
  return s;
}

// Worker i: queue pair i of both ports, forwarded both ways until the stop flag is set.
function runWorker({ handles, queue, stop, counts, batchSize }) {
  const { attachQueue } = require('../queue-pair');
  const { PacketBatch } = require('../memory/batch');
  const { forwardBatch } = require('./forward');
  const pairs = [];
  const batches = [new PacketBatch(batchSize), new PacketBatch(batchSize)];
  const publish = () => {
    for (let p = 0; p < pairs.length; p++) {
      const at = (queue * 2 + p) * FIELDS;
      counts[at] = pairs[p].rx.totals[0];
      counts[at + 1] = pairs[p].rx.totals[1];
      counts[at + 2] = pairs[p].tx.totals[0];
      counts[at + 3] = pairs[p].tx.totals[1];
    }
  };
  try {
    for (const handle of handles) pairs.push(attachQueue(handle, queue));
    const [a, b] = pairs;
    let idle = 0;
    let seen = 0;
    for (let step = 0; Atomics.load(stop, 0) === 0; step++) {
      forwardBatch(a.rx, b.tx, batches[0]);
      forwardBatch(b.rx, a.tx, batches[1]);
      if (step % PUBLISH_EVERY !== 0) continue;
      publish();
      const moved = a.rx.totals[0] + b.rx.totals[0];
      idle = moved === seen ? idle + PUBLISH_EVERY : 0;
      seen = moved;
      if (idle >= IDLE_SPINS) Atomics.wait(stop, 0, 0, 1);
    }
  } finally {
    for (const pair of pairs) pair.stop(); // both first: each TX ring holds the other's buffers
    if (pairs.length === 2) {
      // After the stop, which took the frames its TX ring never sent out of its totals
      // (tx.dropped): every frame received is then sent or dropped. batches[0] held frames
      // back toward b (pair 1), batches[1] toward a (pair 0).
      publish();
      for (let p = 0; p < 2; p++) counts[(queue * 2 + p) * FIELDS + 4] = pairs[p].tx.dropped + batches[1 - p].count;
    }
    for (const batch of batches) if (batch.count > 0) batch.freeFrom(0);
    for (const pair of pairs) pair.close();
  }
}

if (!isMainThread && workerData && workerData.ixyForwardWorker) runWorker(workerData);

module.exports = { forwardWorkers };
