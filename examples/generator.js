#!/usr/bin/env node
'use strict';

// A paced UDP generator: frames built once in a pool of its own, a sequence number written
// into each as it goes out, at most `--rate` frames a second. Built on ixy.run().
//
//   sudo node examples/generator.js 0000:03:00.0 --rate 100000 --count 1000000 [--size 60] [--dst-port 53]
//
// In your own project: require('ixy').
const ixy = require('..');

const { packet } = ixy;

function parseArgs(argv) {
  const o = { address: argv[0], rate: 1000, count: 0, size: 60, dstPort: 5000 };
  const names = { '--rate': 'rate', '--count': 'count', '--size': 'size', '--dst-port': 'dstPort' };
  for (let i = 1; i < argv.length; i += 2) {
    if (!names[argv[i]]) throw new ixy.IxyError('EINVAL', `unknown argument ${argv[i]} (${Object.keys(names).join(', ')})`);
    o[names[argv[i]]] = Number(argv[i + 1]);
  }
  return o;
}

async function main() {
  const { address, rate, count, size, dstPort } = parseArgs(process.argv.slice(2));
  const dev = await ixy.open(address, { rxQueues: 0 });
  // The pool's buffers each get the frame once; sending gives them back to this pool
  // when the NIC is done, still holding it, so each frame only needs its sequence number.
  const pool = new ixy.Mempool({ entries: 4096 });
  const template = new Uint8Array(size);
  packet.writeUdpFrame(template, { size, dstPort });
  for (const buffer of pool.buffers) buffer.set(template);
  const batch = new ixy.PacketBatch(32, pool);
  let sent = 0;
  const start = performance.now();

  const work = (rx, tx) => {
    // Pacing: no more than the clock allows since the start, and no more than `count`.
    let want = Math.floor(((performance.now() - start) / 1000) * rate) - sent;
    if (count > 0 && count - sent < want) want = count - sent;
    if (want > 32) want = 32;
    if (want <= 0) return count > 0 && sent >= count;
    const got = pool.allocMany(batch.ids, want);
    batch.count = got;
    for (let i = 0; i < got; i++) {
      batch.lengths[i] = size;
      packet.writeSeq(batch.data(i), sent + i);
    }
    const n = tx.send(batch);
    batch.freeFrom(n); // the TX ring was full: those numbers go out next time
    sent += n;
    return count > 0 && sent >= count;
  };

  try {
    console.log(`sending ${size}-byte frames to UDP port ${dstPort} on ${dev.address} at ${rate} frames/s${count ? `, ${count} frames` : ''}; Ctrl-C stops`);
    // No warm-up: it would run `work` on stand-in queues, counting `sent` and taking this
    // pool's buffers; and a generator that starts cold sends slower for a moment but
    // loses nothing (a receiver that starts cold drops what its ring cannot hold).
    const reason = await ixy.run(work, { paths: [[null, dev.txQueues[0]]], devices: [dev], report: true, warmUp: false });
    console.log(`stopped (${reason}): sent ${sent} frames in ${((performance.now() - start) / 1000).toFixed(2)} s`);
  } finally {
    dev.close();
    pool.close();
  }
}

main().catch((err) => {
  console.error(`generator: ${err.message}`);
  process.exitCode = 1;
});
