'use strict';

// What an RX and a TX queue of the Intel NICs (rx-queue.js, tx-queue.js) share: a ring of
// advanced descriptors (a span of the ring memory, rings.js), the buffer id behind each
// descriptor (a span of the index arena), the driver's register `layout`, and the ENABLE
// bit of the queue's descriptor control register (RXDCTL, TXDCTL), which starts and stops
// it. Cold code only: the hot loops are the subclasses'.
const rings = require('./rings');
const arena = require('../memory/arena');
const { Queue } = require('../device/device');
const { setBits, clearBits, waitSet, waitClear, sleepSync } = require('../host/register-access');

// How long stopQueues() lets the TX rings drain before it stops them anyway.
const DRAIN_MS = 100;

class RingQueue extends Queue {
  // kind: 'RX' or 'TX'; control: the queue's RXDCTL or TXDCTL offset; enableBit: its ENABLE.
  constructor(kind, regs, layout, index, ringSize, control, enableBit) {
    super();
    this.regs = regs;
    this.layout = layout;
    this.index = index;
    this.size = ringSize;
    this.mask = ringSize - 1;
    // The ring is a span of the shared ring memory: `ring` is its own view, the hot loops
    // index rings.words at ringAt instead (rings.js says why).
    this.span = rings.allocRing(ringSize * rings.DESCRIPTOR_BYTES);
    this.ring = this.span.view;
    this.ringAt = this.span.at;
    this.bufferIds = arena.allocWords(ringSize);
    this.bufferIdsAt = arena.offsetOf(this.bufferIds);
    this.kind = kind;
    this.control = control;
    this.enableBit = enableBit;
    this.running = false; // ENABLE set, not yet seen cleared: the NIC may use the ring
  }

  // How many buffers of `pool` this ring holds while the NIC may use them (Mempool.close()
  // asks); 0 once the queue has stopped.
  ringBuffersOf(pool) {
    return this.running ? this.buffersOf(pool) : 0;
  }

  // Sets ENABLE and waits until the NIC reads it back set (82599 4.6.7.1, 4.6.8.1).
  enable() {
    setBits(this.regs, this.control, this.enableBit);
    this.running = true;
    waitSet(this.regs, this.control, this.enableBit, `${this.kind} queue ${this.index} to start (${this.kind}DCTL.ENABLE)`);
  }

  // Clears ENABLE and waits until the NIC says the queue has stopped (82599 4.6.7.1.2,
  // 4.6.8.1.2): from then on it touches none of the ring's memory.
  stop() {
    clearBits(this.regs, this.control, this.enableBit);
    waitClear(this.regs, this.control, this.enableBit, `${this.kind} queue ${this.index} to stop (${this.kind}DCTL.ENABLE)`);
    this.running = false;
  }

  // Releases the ring memory (after stop(); a subclass gives its buffers back first).
  close() {
    this.running = false;
    rings.releaseRing(this.span);
  }
}

// Lets the TX queues drain (DRAIN_MS at most), then stops every queue: the NIC then
// touches none of their memory. A queue that does not stop in time is released anyway:
// whoever stops it is leaving it.
function stopQueues(rxQueues, txQueues) {
  const deadline = Date.now() + DRAIN_MS;
  while (txQueues.some((q) => !q.drained()) && Date.now() < deadline) sleepSync(1);
  for (const q of [...rxQueues, ...txQueues]) {
    try {
      q.stop();
    } catch {
      // released anyway, see above
    }
  }
}

module.exports = { RingQueue, stopQueues };
