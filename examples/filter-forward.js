#!/usr/bin/env node
'use strict';

// A filtering forwarder: forwards between two ports in both directions, as `ixy forward`
// does, but only the frames a tcpdump filter expression accepts (ixy.compileFilter()).
// Built on ixy.run(): the same loop, idle modes, warm-up and Ctrl-C handling as the command.
//
//   sudo node examples/filter-forward.js 0000:03:00.0 0000:03:00.1 --filter 'not (udp and dst port 5000)' [--seconds s]
//
// In your own project: require('ixy').
const ixy = require('..');

function parseArgs(argv) {
  const o = { a: argv[0], b: argv[1], filter: '', seconds: 0 };
  for (let i = 2; i < argv.length; i += 2) {
    if (argv[i] === '--filter') o.filter = argv[i + 1];
    else if (argv[i] === '--seconds') o.seconds = Number(argv[i + 1]);
    else throw new ixy.IxyError('EINVAL', `unknown argument ${argv[i]} (--filter, --seconds)`);
  }
  return o;
}

async function main() {
  const { a: A, b: B, filter, seconds } = parseArgs(process.argv.slice(2));
  // The predicate: compiled once (EFILTER for a bad expression), then a plain function of
  // a frame's bytes that allocates nothing. Any (bytes, length) => boolean would do.
  const keep = filter === '' ? () => true : ixy.compileFilter(filter);
  const dropped = new Float64Array(2); // per direction
  const batches = [new ixy.PacketBatch(32), new ixy.PacketBatch(32)];

  // One batch from rx to tx: batch.keepIf() gives the frames the predicate rejects back to
  // the pool at once and moves the rest, in order, to the front. What a full TX ring
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
    const kept = batch.keepIf(keep);
    dropped[direction] += n - kept;
    if (kept === 0) return;
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
    console.log(`forwarding ${a.address} <-> ${b.address}${filter ? ` what matches '${filter}'` : ''}; Ctrl-C stops`);
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
