#!/usr/bin/env node
'use strict';

// A filtering forwarder: forwards between two ports in both directions, as `ixy forward`
// does, but drops UDP to one port (default 5000) on the way. Built on ixy.run(): the same
// loop, idle modes, warm-up and Ctrl-C handling as the command.
//
//   sudo node examples/filter-forward.js 0000:03:00.0 0000:03:00.1 [--drop-port 5000] [--seconds s]
//
// In your own project: require('ixy').
const ixy = require('..');

const { packet } = ixy;

function parseArgs(argv) {
  const o = { a: argv[0], b: argv[1], dropPort: 5000, seconds: 0 };
  for (let i = 2; i < argv.length; i += 2) {
    if (argv[i] === '--drop-port') o.dropPort = Number(argv[i + 1]);
    else if (argv[i] === '--seconds') o.seconds = Number(argv[i + 1]);
    else throw new ixy.IxyError('EINVAL', `unknown argument ${argv[i]} (--drop-port, --seconds)`);
  }
  return o;
}

async function main() {
  const { a: A, b: B, dropPort, seconds } = parseArgs(process.argv.slice(2));
  const info = new packet.FrameInfo(); // filled in place for every frame
  const dropped = new Float64Array(2); // per direction
  const batches = [new ixy.PacketBatch(32), new ixy.PacketBatch(32)];

  // The predicate: true for frames to forward. A plain function of the frame's bytes.
  const keep = (bytes, length) => packet.parseFrame(bytes, length, info) !== packet.IPPROTO_UDP || info.dstPort !== dropPort;

  // One batch from rx to tx: frames the predicate rejects go back to the pool at once,
  // the rest move to the front of the batch (keep order) and are sent. What a full TX ring
  // does not take stays in the batch and goes first at the next step, which receives
  // nothing until then: the RX ring and the NIC's packet buffer hold what comes meanwhile,
  // as in `ixy forward`, instead of frames being dropped here.
  const work = (rx, tx, direction) => {
    const batch = batches[direction];
    if (batch.count > 0) {
      const sent = tx.send(batch);
      if (sent === batch.count) batch.count = 0;
      else batch.keepFrom(sent);
      return;
    }
    const n = rx.receive(batch);
    if (n === 0) return;
    const ids = batch.ids;
    const lengths = batch.lengths;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if (keep(batch.data(i), lengths[i])) {
        ids[kept] = ids[i];
        lengths[kept] = lengths[i];
        kept++;
      } else {
        batch.pool.free(ids[i]);
      }
    }
    dropped[direction] += n - kept;
    batch.count = kept;
    const sent = tx.send(batch);
    if (sent === kept) batch.count = 0;
    else batch.keepFrom(sent);
  };

  const standIns = ixy.warmUp(work); // before the ports go live (docs/api.md)
  dropped.fill(0); // the warm-up ran work on stand-in frames
  for (const batch of batches) batch.freeFrom(0); // and may have left some held back
  const a = await ixy.open(A);
  const b = await ixy.open(B);
  try {
    console.log(`forwarding ${a.address} <-> ${b.address}, dropping UDP to port ${dropPort}; Ctrl-C stops`);
    const reason = await ixy.run(work, {
      paths: [[a.rxQueues[0], b.txQueues[0]], [b.rxQueues[0], a.txQueues[0]]],
      devices: [a, b],
      warmUp: standIns,
      seconds,
      report: true,
    });
    const sa = a.stats();
    const sb = b.stats();
    console.log(`stopped (${reason}): ${a.address} -> ${b.address}: received ${sa.rxPackets}, dropped by the filter ${dropped[0]}, sent ${sb.txPackets}`);
    console.log(`stopped (${reason}): ${b.address} -> ${a.address}: received ${sb.rxPackets}, dropped by the filter ${dropped[1]}, sent ${sa.txPackets}`);
  } finally {
    a.stop();
    b.stop(); // both stop before either frees memory: each TX ring holds the other's buffers
    for (const batch of batches) batch.freeFrom(0); // frames still held back are dropped
    a.close();
    b.close();
  }
}

main().catch((err) => {
  console.error(`filter-forward: ${err.message}`);
  process.exitCode = 1;
});
