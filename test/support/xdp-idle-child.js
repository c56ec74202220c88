'use strict';
// A receiving loop on an AF_XDP device with idle 'interrupt', for test/xdp/xdp-idle.test.js:
// `node xdp-idle-child.js ADDRESS WANT WAY [RXQUEUES]` opens ADDRESS, prints 'ready' and
// the device's interrupt lines, then receives until it has WANT UDP frames to port 7000:
// WAY 'receive' with receive(q, { idle: 'interrupt' }) on every RX queue, 'run' with one
// ixy.run() loop over them all. Prints one JSON line: the frames per queue, their sequence
// numbers (the payload's first four bytes) in the order they came, how often each line
// woke the loop, and whether close() let go of the lines.
const ixy = require('../../lib/index');

const isOurs = (data, length) => length >= 46 && data[12] === 0x08 && data[13] === 0 && data[23] === 17 && ((data[36] << 8) | data[37]) === 7000;
const seqOf = (data) => ((data[42] << 24) | (data[43] << 16) | (data[44] << 8) | data[45]) >>> 0;

async function main() {
  const [address, want, way, rxQueues = '1'] = process.argv.slice(2);
  const dev = await ixy.open(address, { rxQueues: Number(rxQueues), idle: 'interrupt' });
  const lines = dev.interruptLines();
  console.log(JSON.stringify({ ready: true, lines: lines.map((l) => l.fd), sockets: dev.sockets.map((s) => s.fd) }));
  const perQueue = dev.rxQueues.map(() => 0);
  const seqs = [];
  const take = (q, batch, n) => {
    for (let i = 0; i < n; i++) {
      const data = batch.data(i);
      if (!isOurs(data, batch.lengths[i])) continue;
      perQueue[q]++;
      seqs.push(seqOf(data));
    }
  };
  const done = () => seqs.length >= Number(want);
  if (way === 'run') {
    const batch = new ixy.PacketBatch(32);
    await ixy.run(() => {
      for (let q = 0; q < perQueue.length; q++) {
        const n = dev.rxBatch(q, batch);
        take(q, batch, n);
        batch.release();
      }
      return done();
    }, { devices: [dev], idle: 'interrupt' });
  } else {
    const stop = new AbortController();
    await Promise.all(perQueue.map(async (_, q) => {
      for await (const batch of dev.receive(q, { idle: 'interrupt', signal: stop.signal })) {
        take(q, batch, batch.count);
        batch.release();
        if (done()) stop.abort();
      }
    }));
  }
  const rings = dev.rxRings.slice();
  dev.close();
  const wakes = lines.map((l) => l.count); // how often each socket's fd woke the loop
  console.log(JSON.stringify({ perQueue, seqs, wakes, linesClosed: lines.every((l) => l.watcher === null) && rings.every((r) => r.line === null) }));
}

main().catch((err) => {
  console.log(JSON.stringify({ code: err.code, message: err.message, stack: err.stack }));
  process.exitCode = 1;
});
