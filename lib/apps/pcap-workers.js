'use strict';

// `ixy pcap <pci> <file> --workers N`: the capture of pcap.js with one worker thread per RX
// queue. The port is opened here with { rxQueues: N, txQueues: 0, workers: true } (global
// init, and RSS spreading the flows over the N queues); worker i attaches queue i
// (lib/queue-pair.js), applies the filter, stamps what it keeps and appends whole records
// to the one file (shared-pcap.js). `count` counts the frames written by all workers
// together: each takes its share of it before it writes.
//
// Order in the file: the frames of one queue in the order that queue received them, so
// their timestamps never go back, and every flow in order (RSS keeps a flow on one queue).
// The queues' frames are interleaved a whole worker buffer at a time (1 MiB, or one batch
// to a pipe or with packetBuffered): across queues a frame may have an earlier timestamp
// than the one before it. `reordercap` (Wireshark) sorts such a file by time.
//
// This thread writes the file header, prints the per-second report and the totals from
// counters the workers publish, and stops the workers on SIGINT/SIGTERM (or `stop`), after
// `seconds`, once `count` frames are written, or when one fails, whose error then ends
// the capture; then it closes the port. A stopped worker first writes what its ring holds.
// Nothing per packet crosses threads.
const fs = require('fs');
const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const { IxyError, checkInteger } = require('../host/errors');
const { computeRates, formatRates, formatPacketRate, noTraffic } = require('../loop/rates');
const { Report } = require('../loop/report');
const { afterMs } = require('../loop');
const { ownFifo, openFifoForWriting } = require('./fifo');
const { SharedPcapAppender, sharedState, framesTaken } = require('./shared-pcap');
const { ProgressBar } = require('./progress');
const { checkBatchSize } = require('../memory/batch');
const { runWorkerLoop, workerIdle } = require('../loop/worker-loop');
const { isXdpName } = require('../xdp/iface');

// Per worker: RX packets, RX bytes, frames written, their bytes in the file, buffers not
// back in its pool after close (Float64, written by that worker only).
const FIELDS = 5;
const PUBLISH_EVERY = 64; // polls between counter updates
// Words of the stop flag's array: the flag, and why a worker stopped everyone.
const STOP = 0;
const WHY = 1;
const WORKER_REASONS = [null, 'count', 'pipe closed'];

async function pcapWorkers(address, file, {
  workers, count = 0, batchSize = 32, nanoseconds = true, seconds = 0, packetBuffered = false, err = process.stderr, deviceOptions = {}, idle, filter = '', stop,
} = {}) {
  checkInteger('workers', workers, 1, 16);
  checkInteger('count', count, 0, 2 ** 32 - 1);
  const { open } = require('../open');
  const { PcapWriter } = require('../pcap-file');
  const { compileFilter } = require('../filter');
  checkBatchSize(batchSize); // EBATCH and EFILTER before the device is touched
  if (filter !== '') compileFilter(filter);
  const idleAs = workerIdle(idle, isXdpName(address)); // 'interrupt' only on AF_XDP (lib/loop/worker-loop.js)
  const report = new Report({ out: err });
  const interrupted = (before) => {
    const stats = noTraffic();
    report.total(address, stats);
    report.line('end', `captured 0 frames (interrupted before ${before}; no file written)`);
    return { reason: 'signal', frames: 0, bytes: 0, stats, perWorker: [], buffersInUse: [] };
  };
  // A FIFO waits for its reader before the NIC is opened; Ctrl-C ends the wait (fifo.js).
  let fifo = null;
  if (file !== '-' && ownFifo(file)) {
    fifo = await openFifoForWriting(file, stop);
    if (fifo === null) return interrupted('a reader opened the FIFO');
  }
  let dev;
  try {
    dev = await open(address, { ...deviceOptions, rxQueues: workers, txQueues: 0, workers: true, signal: stop });
  } catch (e) {
    if (fifo !== null) fs.closeSync(fifo);
    if (e.code !== 'EABORTED') throw e;
    return interrupted('the link came up');
  }
  let writer = null;
  try {
    writer = new PcapWriter(fifo !== null ? fifo : file === '-' ? 1 : file, { nanoseconds });
    if (fifo !== null) writer.name = `'${file}'`;
    const name = file === '-' ? 'stdout' : file;
    const what = `${name}${count ? `, ${count} frames` : ''}${filter ? ` matching '${filter}'` : ''}`;
    const { reason, counts } = await runWorkers(dev, writer, {
      workers, count, batchSize, nanoseconds, seconds, filter, stop, err, report, what, idle: idleAs,
      flushEachBatch: packetBuffered || writer.isPipe,
    });
    const stats = totals(dev, counts, workers);
    const frames = sum(counts, workers, 2);
    const bytes = writer.bytes + sum(counts, workers, 3);
    report.total(dev.address, stats, {}, `, per worker RX ${stats.perWorker.join(' + ')}`);
    const why = { signal: ' (interrupted)', 'pipe closed': ' (the reader closed the pipe)' }[reason] || '';
    report.line('end', `captured ${frames} frames (${bytes} bytes) to ${name}${why}`);
    return { reason, frames, bytes, stats, perWorker: perWorkerField(counts, workers, 2), buffersInUse: perWorkerField(counts, workers, 4) };
  } finally {
    try {
      if (writer) writer.close();
    } finally {
      if (fifo !== null) fs.closeSync(fifo);
      dev.close();
    }
  }
}

// Starts one worker per queue and waits until every one has ended: resolves with why they
// stopped and their counters, or rejects with the first worker's error. No worker runs on
// when it returns, however it returns.
async function runWorkers(dev, writer, o) {
  const { workers, stop } = o;
  const counts = new Float64Array(new SharedArrayBuffer(8 * workers * FIELDS));
  const flags = new Int32Array(new SharedArrayBuffer(8));
  const shared = sharedState();
  let reason = null;
  let failure = null;
  const halt = (why) => {
    if (reason === null) reason = why;
    Atomics.store(flags, STOP, 1);
    Atomics.notify(flags, STOP);
  };
  const onSignal = () => halt('signal');
  const { CaptureClock } = require('../pcap-file');
  const common = {
    ixyPcapWorker: true, handle: dev.workerHandle(), flags, counts, shared, fd: writer.fd, fileName: writer.name,
    filter: o.filter, count: o.count, batchSize: o.batchSize, nanoseconds: o.nanoseconds, flushEachBatch: o.flushEachBatch,
    clockBase: new CaptureClock().base(), idle: o.idle,
  };
  const exits = [];
  const attached = [];
  for (let i = 0; i < workers; i++) {
    const w = new Worker(module.filename, { workerData: { ...common, queue: i } });
    // Once its queue runs (or it ended without getting there).
    attached.push(new Promise((resolve) => {
      w.once('message', resolve);
      w.once('exit', resolve);
    }));
    exits.push(new Promise((resolve) => {
      w.once('error', (e) => {
        failure = failure || e;
        halt('error');
      });
      w.once('exit', (code) => {
        if (code !== 0 && failure === null) failure = new IxyError('EWORKER', `capture worker ${i} exited with code ${code}`);
        if (code !== 0) halt('error');
        resolve();
      });
    }));
  }
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (stop) {
    if (stop.aborted) onSignal();
    else stop.addEventListener('abort', onSignal);
  }
  let cancelTimer = null;
  // The device watch of the single-thread capture (lib/loop/watch.js): link lines, and a
  // port that is gone ends the capture with EDEVICELOST.
  const watch = setInterval(() => {
    try {
      for (const event of dev.checkEvents()) o.report.event(dev.address, event);
    } catch (e) {
      failure = failure || e;
      halt('error');
    }
  }, 1000);
  let ticker = null;
  try {
    await Promise.all(attached); // the start line says that every queue is capturing
    // --seconds of capture, from then: starting the workers may take a while on a busy machine.
    if (o.seconds > 0) cancelTimer = afterMs(o.seconds * 1000, () => halt('time')); // chunks past 24.8 days
    if (failure === null) {
      o.report.line('start', `capturing on ${dev.address} (${dev.mac}) to ${o.what}, ${workers} workers; Ctrl-C stops`);
      ticker = startTicker(dev, counts, shared, o);
    }
    await Promise.all(exits);
  } finally {
    halt(null);
    await Promise.all(exits);
    if (ticker) ticker.end(sum(counts, workers, 2));
    if (cancelTimer) cancelTimer();
    clearInterval(watch);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (stop) stop.removeEventListener('abort', onSignal);
  }
  if (failure) throw failure;
  return { reason: reason === null ? WORKER_REASONS[Atomics.load(flags, WHY)] : reason, counts };
}

// The progress bar (a count, on a terminal), or else the rate line each second with each
// worker's share. end(frames) stops it.
function startTicker(dev, counts, shared, { workers, count, err }) {
  if (count > 0 && err.isTTY) {
    const progress = new ProgressBar(err, count);
    const timer = setInterval(() => progress.draw(framesTaken(shared)), 100);
    return { end: (frames) => { clearInterval(timer); progress.finish(frames); } };
  }
  let last = totals(dev, counts, workers);
  let lastTime = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const current = totals(dev, counts, workers);
    const secs = (now - lastTime) / 1000;
    const perWorker = current.perWorker.map((n, i) => formatPacketRate((n - last.perWorker[i]) / secs)).join(' + ');
    err.write(`${formatRates(dev.address, computeRates(last, current, secs))} (RX per worker: ${perWorker})\n`);
    last = current;
    lastTime = now;
  }, 1000);
  return { end: () => clearInterval(timer) };
}

function sum(counts, workers, field) {
  let s = 0;
  for (let w = 0; w < workers; w++) s += counts[w * FIELDS + field];
  return s;
}

function perWorkerField(counts, workers, field) {
  const values = [];
  for (let w = 0; w < workers; w++) values.push(counts[w * FIELDS + field]);
  return values;
}

// The port's totals: RX summed over the workers' counters, drops from the device.
function totals(dev, counts, workers) {
  const own = dev.stats();
  return {
    ...noTraffic(), rxPackets: sum(counts, workers, 0), rxBytes: sum(counts, workers, 1),
    rxMissed: own.rxMissed, rxErrors: own.rxErrors, perWorker: perWorkerField(counts, workers, 0),
  };
}

// Worker i: RX queue i into the shared file until the stop flag is set.
function runWorker({ handle, queue, flags, counts, shared, fd, fileName, filter, count, batchSize, nanoseconds, flushEachBatch, clockBase, idle }) {
  const { attachQueue } = require('../queue-pair');
  const { PacketBatch } = require('../memory/batch');
  const { CaptureClock } = require('../pcap-file');
  const { compileFilter } = require('../filter');
  const keep = filter === '' ? null : compileFilter(filter);
  const batch = new PacketBatch(batchSize);
  const clock = new CaptureClock(clockBase);
  const out = new SharedPcapAppender(fd, fileName, shared, { nanoseconds });
  const at = queue * FIELDS;
  let pair = null;
  const publish = () => {
    counts[at] = pair.rx.totals[0];
    counts[at + 1] = pair.rx.totals[1];
    counts[at + 2] = out.frames;
    counts[at + 3] = out.bytes;
  };
  const stopAll = (why) => {
    Atomics.compareExchange(flags, WHY, 0, WORKER_REASONS.indexOf(why));
    Atomics.store(flags, STOP, 1);
    Atomics.notify(flags, STOP);
  };
  // One poll: receives, filters and writes a batch; returns the frames received.
  const captureBatch = (rx) => {
    const received = rx.receive(batch);
    const n = received > 0 && keep !== null ? batch.keepIf(keep) : received;
    if (n === 0) return received;
    // With a count, write only the frames this worker could take; the rest are dropped.
    const wanted = count > 0 ? out.reserve(n, count) : n;
    clock.now(); // one clock read per batch: its frames left the ring in this poll
    batch.count = wanted;
    out.writeBatch(batch, clock.sec, clock.nsec);
    batch.count = n;
    batch.freeFrom(0);
    if (flushEachBatch) out.flush();
    if (count > 0 && out.takenAll(count)) stopAll('count'); // each worker writes what it took, then stops
    return received;
  };
  try {
    pair = attachQueue(handle, queue);
    parentPort.postMessage('attached');
    const rx = pair.rx;
    try {
      let step = 0;
      runWorkerLoop({
        flags, stopAt: STOP, pairs: [pair], idle, batchSize, onEvent: () => {},
        step: () => {
          if (++step % PUBLISH_EVERY === 0) publish();
          return captureBatch(rx);
        },
      });
      // What the ring held when the stop came (at most a ring's worth: traffic that goes on
      // arriving does not hold the stop up): every frame the NIC had delivered is written.
      for (let left = handle.rxRingSize; left > 0;) {
        const n = captureBatch(rx);
        if (n === 0) break;
        left -= n;
      }
      out.flush();
    } catch (e) {
      // A reader that closed the pipe ends the capture as Ctrl-C does (apps/pcap.js).
      if (e !== out.failure || e.code !== 'EPIPE') throw e;
      stopAll('pipe closed');
    }
  } finally {
    if (batch.count > 0) batch.freeFrom(0);
    if (pair !== null) {
      if (pair.rx !== null) publish();
      pair.close();
      counts[at + 4] = pair.pool === null ? 0 : pair.pool.inUse;
    }
  }
}

if (!isMainThread && workerData && workerData.ixyPcapWorker) runWorker(workerData);

module.exports = { pcapWorkers };
