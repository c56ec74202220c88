'use strict';

// `ixy forward A B --workers N`: the forwarder of forward.js with one worker thread per
// queue pair. Both ports are opened here with { workers: true } (global init, RSS over N RX
// queues, no queues of their own); worker i attaches queue pair i of each port
// (lib/queue-pair.js) and forwards RX queue i of each port to TX queue i of the
// other, holding back what a full TX ring did not take, as forward.js does.
// The devices are watched as the single thread's are (lib/loop/watch.js): each second a
// rate line per port (Device.stats() totals what the workers counted), link changes, and a
// removed port ends the command with EDEVICELOST after the totals. Each worker checks its
// own pairs (lib/loop/worker-loop.js: a hung TX queue is reset there, by its owner) and
// sends what it found here to be told. Idle: the workers' (lib/loop/worker-loop.js). On
// SIGINT/SIGTERM, after --seconds, when a worker fails or a port is gone, this thread stops
// the workers first and then closes the ports. Nothing per packet crosses threads.
const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const { IxyError, checkInteger } = require('../host/errors');
const { noTraffic } = require('../loop/rates');
const { Report } = require('../loop/report');
const { Watch } = require('../loop/watch');
const { afterMs } = require('../loop');
const { runWorkerLoop, workerIdle } = require('../loop/worker-loop');
const { isXdpName } = require('../xdp/iface');

const STOP = 0; // word of the flags: set to stop the workers

// stop: an AbortSignal that stops it as SIGINT does, during the link wait too
// (lib/apps/stop-signal.js). idle: the workers' idle mode (workerIdle()).
async function forwardWorkers(addressA, addressB, { workers, batchSize = 32, seconds = 0, out = process.stdout, deviceOptions = {}, idle, stop: stopSignal } = {}) {
  if (addressA === addressB) throw new IxyError('EINVAL', 'forward needs two different ports');
  checkInteger('workers', workers, 1, 16);
  const idleAs = workerIdle(idle === undefined ? deviceOptions.idle : idle, isXdpName(addressA) && isXdpName(addressB));
  const { open } = require('../open');
  // Whether a worker's full RX queue drops or holds its frames is the driver's default for
  // worker queues (lib/intel/nic-options.js: they hold), unless deviceOptions say.
  const options = { ...deviceOptions, idle: undefined, rxQueues: workers, txQueues: workers, workers: true, signal: stopSignal };
  const report = new Report({ out });
  const devs = [];
  try {
    try {
      for (const address of [addressA, addressB]) devs.push(await open(address, options));
    } catch (err) {
      if (err.code !== 'EABORTED') throw err;
      for (const address of [addressA, addressB]) report.total(address, noTraffic(), {}, ', per worker RX -');
      return { stats: {} };
    }
    report.line('start', `forwarding ${devs[0].address} (${devs[0].mac}) <-> ${devs[1].address} (${devs[1].mac}), batch ${batchSize}, ${workers} workers`);
    const { failure, held } = await runWorkers(devs, { workers, batchSize, seconds, idle: idleAs, stopSignal, report });
    const stats = {};
    devs.forEach((dev, p) => {
      const s = dev.stats();
      s.txDropped += held[p]; // held back for a full TX ring when the workers stopped
      s.perWorker = s.rxQueues.map((q) => q.packets);
      stats[dev.address] = s;
      report.total(dev.address, s, {}, `, per worker RX ${s.perWorker.join(' + ')}`);
    });
    if (failure) throw failure;
    return { stats };
  } finally {
    for (const dev of devs) dev.close();
  }
}

// Starts the workers and waits until every one has ended, watching the devices meanwhile.
// Resolves with the first failure (a worker's error, EDEVICELOST) or null, and the frames
// each port's TX was still holding back at the end.
async function runWorkers(devs, { workers, batchSize, seconds, idle, stopSignal, report }) {
  const flags = new Int32Array(new SharedArrayBuffer(4));
  const held = new Float64Array(new SharedArrayBuffer(8 * workers * 2)); // per worker and port
  const handles = devs.map((dev) => dev.workerHandle());
  const halt = () => { Atomics.store(flags, STOP, 1); Atomics.notify(flags, STOP); };
  const watch = new Watch({ devices: devs, lines: report, stop: stopSignal });
  let failure = null;
  const exits = [];
  for (let i = 0; i < workers; i++) {
    const w = new Worker(module.filename, { workerData: { ixyForwardWorker: true, handles, queue: i, flags, held, batchSize, idle } });
    // A hung TX queue the worker reset: told as the single thread tells it, and emitted.
    w.on('message', ({ port, event }) => {
      report.event(devs[port].address, event);
      devs[port].emit(event.type, event);
    });
    exits.push(new Promise((resolve) => {
      w.once('error', (err) => { failure = failure || err; halt(); });
      w.once('exit', resolve);
    }));
  }
  const cancelTimer = seconds > 0 ? afterMs(seconds * 1000, () => watch.end('time')) : null; // in chunks past 24.8 days
  const poll = setInterval(() => { if (watch.reason !== null) halt(); }, 20);
  try {
    await Promise.all(exits);
  } finally {
    halt();
    clearInterval(poll);
    if (cancelTimer) cancelTimer();
    watch.close();
  }
  const heldPerPort = [0, 0];
  for (let i = 0; i < workers; i++) for (let p = 0; p < 2; p++) heldPerPort[p] += held[i * 2 + p];
  return { failure: failure || watch.failure, held: heldPerPort };
}

// Worker i: queue pair i of both ports, forwarded both ways until the stop flag is set.
function runWorker({ handles, queue, flags, held, batchSize, idle }) {
  const { attachQueue } = require('../queue-pair');
  const { PacketBatch } = require('../memory/batch');
  const { forwardBatch } = require('./forward');
  const { warmUp } = require('../warm-up');
  const pairs = [];
  const batches = [new PacketBatch(batchSize), new PacketBatch(batchSize)];
  // As the single thread does (forward.js): the step meets its first frames optimised for
  // frames, not for the empty rings before them. Closed after the pairs (warm-up says why).
  const standIns = warmUp((rx, tx, direction) => forwardBatch(rx, tx, batches[direction]), { bufferSize: handles[0].bufferSize });
  for (const batch of batches) batch.freeFrom(0);
  try {
    for (const handle of handles) pairs.push(attachQueue(handle, queue));
    const [a, b] = pairs;
    const received = () => a.rx.totals[0] + b.rx.totals[0];
    runWorkerLoop({
      flags, stopAt: STOP, pairs, idle, batchSize,
      step: () => {
        const before = received();
        forwardBatch(a.rx, b.tx, batches[0]);
        forwardBatch(b.rx, a.tx, batches[1]);
        return received() - before;
      },
      onEvent: (port, event) => parentPort.postMessage({ port, event }),
    });
  } finally {
    // Both first: each TX ring holds the other's buffers. The stop takes the frames its TX
    // ring never sent out of the TX totals, into the dropped ones (QueuePair.stop()).
    for (const pair of pairs) pair.stop();
    // batches[0] held frames back toward b (port 1), batches[1] toward a (port 0).
    for (let p = 0; p < pairs.length; p++) held[queue * 2 + p] = batches[1 - p].count;
    for (const batch of batches) if (batch.count > 0) batch.freeFrom(0);
    for (const pair of pairs) pair.close();
    standIns.close();
  }
}

if (!isMainThread && workerData && workerData.ixyForwardWorker) runWorker(workerData);

module.exports = { forwardWorkers };
