#!/usr/bin/env node
'use strict';

// Forwards between two ports with one worker thread per queue pair: RSS spreads the flows
// over N RX queues, and worker i forwards RX queue i of each port to TX queue i of the
// other. The main thread opens both ports ({ workers: true }: global init and RSS, no
// queues of its own), prints the packet rate summed over the workers every second, and on
// Ctrl-C (or a worker's error) stops the workers, then closes the ports.
//
//   sudo node examples/forward-workers.js 0000:03:00.0 0000:03:00.1 [workers]
//
// Nothing per packet crosses threads: each worker has its own rings and buffers; the
// workers and the main thread share only a stop flag and one counter per worker.
// In your own project: require('ixy').
const { Worker, isMainThread, workerData } = require('worker_threads');
const ixy = require('..');

const BATCH = 64;

async function main(addresses, workers) {
  const options = { rxQueues: workers, txQueues: workers, workers: true };
  const devs = [];
  let failure = null;
  try {
    for (const address of addresses) devs.push(await ixy.open(address, options));
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const counts = new Float64Array(new SharedArrayBuffer(8 * workers));
    const handles = devs.map((dev) => dev.workerHandle());
    const halt = () => { Atomics.store(stop, 0, 1); Atomics.notify(stop, 0); };
    process.once('SIGINT', halt);
    process.once('SIGTERM', halt);
    const done = [];
    for (let i = 0; i < workers; i++) {
      const w = new Worker(module.filename, { workerData: { handles, queue: i, stop, counts } });
      done.push(new Promise((resolve) => {
        w.once('error', (err) => { failure = failure || err; halt(); });
        w.once('exit', resolve);
      }));
    }
    console.log(`forwarding ${addresses.join(' <-> ')} with ${workers} workers; Ctrl-C stops`);
    let last = 0;
    const report = setInterval(() => {
      const now = counts.reduce((a, b) => a + b, 0);
      console.log(`${((now - last) / 1e6).toFixed(2)} Mpps (${[...counts].map((c) => c.toFixed(0)).join(' + ')})`);
      last = now;
    }, 1000);
    await Promise.all(done);
    clearInterval(report);
    console.log(`total ${counts.reduce((a, b) => a + b, 0)} packets forwarded (${[...counts].join(' + ')})`);
  } finally {
    for (const dev of devs) dev.close();
  }
  if (failure) throw failure;
}

// Worker i: queue pair i of both ports, forwarded both ways until the stop flag is set.
function worker({ handles, queue, stop, counts }) {
  const pairs = [];
  try {
    for (const handle of handles) pairs.push(ixy.attachQueue(handle, queue));
    const batches = [new ixy.PacketBatch(BATCH), new ixy.PacketBatch(BATCH)];
    while (Atomics.load(stop, 0) === 0) {
      let moved = 0;
      for (let k = 0; k < 2; k++) {
        const batch = batches[k];
        pairs[k].rxBatch(batch);
        if (batch.count === 0) continue;
        moved += pairs[1 - k].txBatch(batch);
        batch.release(); // what the TX ring did not take is dropped: the loop never waits on it
      }
      counts[queue] += moved;
      // Nothing to do: sleep 1 ms on the stop flag instead of spinning.
      if (moved === 0) Atomics.wait(stop, 0, 0, 1);
    }
  } finally {
    for (const pair of pairs) pair.stop(); // both first: a TX ring holds the other's buffers
    for (const pair of pairs) pair.close();
  }
}

if (isMainThread) {
  const [a, b, n = '2'] = process.argv.slice(2);
  if (!a || !b || !/^[1-9][0-9]*$/.test(n)) {
    console.error('usage: node examples/forward-workers.js PCI_A PCI_B [workers]');
    process.exit(2);
  }
  main([a, b], Number(n)).catch((err) => {
    console.error(`forward-workers: ${err.message}`);
    process.exit(1);
  });
} else {
  worker(workerData);
}
