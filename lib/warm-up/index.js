'use strict';

// Before the traffic: let V8 watch the hot path do its real work.
//
// V8 optimises a function for what it has seen it do. A forwarder that starts before its
// traffic is optimised on its idle path alone (receive() returning 0), and every other
// path is compiled as "deoptimise here". The first real frames then throw the optimised
// code away; the loop runs in the interpreter until TurboFan has compiled it again, and
// meanwhile frames pile up past what the ring and the NIC's packet buffer hold.
//
// warmUp() runs the app's own per-batch function first, on RX and TX queues of the
// driver's classes against a NIC played in memory (lib/warm-up/stand-in.js), through the
// paths real traffic takes: batches of every size from empty to full, rings that wrap, a
// TX ring that is full, fresh queues meeting their first pool. No device is touched. The
// queues are those of ixgbe and igb (lib/intel); virtio's have classes of their own
// and are not warmed.
const { openPort, standInNic, closeQueues } = require('./stand-in');
const { Mempool } = require('../memory/mempool');
const ixgbeLayout = require('../intel/ixgbe/registers');
const { IxyError, shown } = require('../host/errors');
const { checkOptionNames } = require('../host/option-names');

const RING = 64;
// Enough for TurboFan to have optimised the per-batch function and what it calls. In
// ROUNDS rounds on fresh ports: V8 records what a function does only from its first few
// calls on, and a fresh queue's first send takes a path of its own.
const STEPS = 12000;
const ROUNDS = 4;
const LONGEST_BURST = 40; // RX frames per step cycle through 0..LONGEST_BURST
const LENGTHS = [60, 1514, 590]; // frame lengths, in turn

// work(rxQueue, txQueue, direction): the app's per-batch function, called as its loop
// calls it, for both directions of two stand-in ports (direction 0, then 1).
// bufferSize: the app's mempool buffer size.
// Returns the stand-ins, for close() when the app ends and not before: freeing DMA memory
// detaches its ArrayBuffer, and after the first detach in a process V8 checks on every
// typed array access whether its buffer is gone; freeing the last ring would also make
// the ring memory anew, no longer a constant (lib/intel/rings.js).
function warmUp(work, options = {}) {
  if (typeof work !== 'function') throw new IxyError('EINVAL', `warmUp() needs the per-batch function work(rxQueue, txQueue), got ${shown(work)}`);
  const { bufferSize = 2048 } = checkOptionNames('warmUp()', options, ['bufferSize']);
  const pools = [0, 1].map(() => new Mempool({ entries: 4 * RING, bufferSize }));
  let ports = null;
  for (let round = 0; round < ROUNDS; round++) {
    // Fresh queues each round, on the same pools; the last round's close only once the
    // new ones hold their rings.
    const fresh = pools.map((pool) => openPort(ixgbeLayout, RING, { pool }));
    if (ports !== null) ports.forEach(closeQueues);
    ports = fresh;
    const [a, b] = ports;
    for (let k = 0; k < STEPS / ROUNDS; k++) {
      const rxLimit = k % (LONGEST_BURST + 1);
      const holdTx = (k & 63) < 4; // four steps in 64 complete no TX descriptor: the ring fills
      const length = LENGTHS[k % LENGTHS.length];
      standInNic(a, length, rxLimit, holdTx);
      standInNic(b, length, rxLimit, holdTx);
      work(a.rx, b.tx, 0);
      work(b.rx, a.tx, 1);
    }
  }
  return {
    close() {
      // Queues first: each TX ring holds the other port's buffers.
      ports.forEach(closeQueues);
      for (const pool of pools) pool.close();
    },
  };
}

module.exports = { warmUp };
