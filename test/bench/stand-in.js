'use strict';

// The driver's own cost, without the model: the JavaScript forwarding loop against a NIC
// played in this process, so that no cache line travels between cores and the host's
// phases (see summary.js, byPhase()) do not enter. The C yardstick has the same mode
// (`c-forward --mode stand-in`, c-forward-init.h), and run.js gives the ratio of the two.
//   node stand-in.js '{"batch":32,"warmup":1,"seconds":3,"ring":512}'
// stdout: {"ready":true}, then one JSON line: { packets, seconds, mpps, nsPerPacket }.
// The tests that run receive() and send() without the model use its openPort() and
// standInNic() too (test/helpers.js, runOptimising()).
//
// Two ports, each an RX and a TX queue on a register file in plain memory and a mempool
// of its own, as `ixy forward` opens them (rings of `ring`, RX descriptors given back in
// groups of ring/4); between two steps the stand-in NIC completes every RX descriptor up
// to RDT as a 60-byte frame (the buffer itself is not written) and marks every TX
// descriptor up to TDT done. Each step forwards one batch each way with the app's own
// forwardBatch(), touch included. The stand-in's own work is part of the figure, in both
// languages alike.
const R = require('../../lib/ixgbe/registers');
const D = require('../../lib/advanced/descriptors');
const { RxQueue } = require('../../lib/advanced/rx-queue');
const { TxQueue } = require('../../lib/advanced/tx-queue');
const { Mempool } = require('../../lib/mempool');
const { PacketBatch } = require('../../lib/batch');
const { forwardBatch } = require('../../lib/apps/forward');
const { tuneJit } = require('../../lib/jit');

const GOOD_FRAME = D.RXD_STAT_DD | D.RXD_STAT_EOP;

// An RX and a TX queue of `ring` descriptors on registers in plain memory, started, with
// a mempool of `entries` buffers of `bufferSize` bytes; RX descriptors go back in groups
// of rxFree.
function openPort(ring, { entries = 4096, rxFree = ring / 4, bufferSize = 2048 } = {}) {
  const regs = new Uint32Array(0x80000 / 4); // the 82599's 512 KiB of registers
  const pool = new Mempool({ entries, bufferSize });
  const rx = new RxQueue(regs, R, 0, ring, pool, rxFree);
  const tx = new TxQueue(regs, R, 0, ring);
  rx.start(() => {});
  tx.start(() => {});
  return { regs, pool, rx, tx, rxHead: 0, txHead: 0 };
}

// What the NIC would do between two steps (see the top of this file), with frames of
// `length` bytes. The heads are kept in locals, as c-forward's stand_in_nic() does: this
// is the stand-in's cost, not the driver's, and it should be as small in JavaScript as
// in C.
function standInNic(port, length = 60) {
  const { regs, rx, tx } = port;
  const mask = rx.mask;
  const rxRing = rx.ring;
  const txRing = tx.ring;
  let head = port.rxHead;
  for (const rdt = regs[rx.tailIndex]; head !== rdt; head = (head + 1) & mask) {
    rxRing[head * 4 + 3] = length;
    rxRing[head * 4 + 2] = GOOD_FRAME;
  }
  port.rxHead = head;
  head = port.txHead;
  for (const tdt = regs[tx.tailIndex]; head !== tdt; head = (head + 1) & mask) txRing[head * 4 + 3] = D.TXD_STAT_DD;
  port.txHead = head;
}

// Forwards for about `ms` milliseconds; returns the packets sent.
function forwardFor(a, b, batch, ms) {
  const before = a.tx.packets + b.tx.packets;
  const end = performance.now() + ms;
  do {
    for (let i = 0; i < 1024; i++) {
      standInNic(a);
      standInNic(b);
      forwardBatch(a.rx, b.tx, batch);
      forwardBatch(b.rx, a.tx, batch);
    }
  } while (performance.now() < end);
  return a.tx.packets + b.tx.packets - before;
}

function main() {
  tuneJit(); // as the ixy command does (bin/ixy.js)
  const cfg = JSON.parse(process.argv[2]);
  const a = openPort(cfg.ring);
  const b = openPort(cfg.ring);
  const batch = new PacketBatch(cfg.batch);
  process.stdout.write('{"ready":true}\n');
  forwardFor(a, b, batch, cfg.warmup * 1000);
  const start = performance.now();
  const packets = forwardFor(a, b, batch, cfg.seconds * 1000);
  const seconds = (performance.now() - start) / 1000;
  const mpps = packets / seconds / 1e6;
  process.stdout.write(`${JSON.stringify({ packets, seconds, mpps, nsPerPacket: 1000 / mpps })}\n`);
  // Queues first: each TX ring holds the other port's buffers.
  for (const port of [a, b]) {
    port.rx.close();
    port.tx.close();
  }
  a.pool.close();
  b.pool.close();
}

if (require.main === module) main();

module.exports = { openPort, standInNic };
