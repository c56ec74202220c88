'use strict';

// An AF_XDP socket's receive side: the RX ring (frames the kernel wrote into UMEM
// buffers) and the fill ring (empty buffers given to the kernel for the frames to come),
// i.e. an 82599 RX ring's write-back and refill as two rings. receive() turns each RX
// descriptor into its buffer id and length and puts as many fresh buffers on the fill ring;
// it allocates nothing.
const { Queue, PACKETS, BYTES } = require('../device/device');
const { native } = require('../host/native');
const { pushId } = require('../memory/mempool');
const { InterruptLine } = require('../host/interrupts');

class XdpRxQueue extends Queue {
  constructor(sock) {
    super();
    this.sock = sock;
    this.pool = sock.umem;
    this.errors = 0;
    this.wakeups = 0; // recvfrom() calls the fill ring's need_wakeup asked for
    this.rxCons = 0;
    this.fillProd = 0;
    this.fillCons = 0; // the kernel's fill consumer as last read
    this.inFill = 0; // buffers on the fill ring or in the kernel's hands
    this.line = null; // the socket as idle 'interrupt' sleeps on it, once asked for
    // What idle 'backoff' may sleep on (lib/device/idle-bound.js ringHold()): every
    // receive() refills the fill ring whole, so while nobody polls, the RX ring holds `size`.
    this.size = sock.rx.size;
  }

  // idle 'interrupt' (lib/device/idle.js): the socket's fd as an interrupt line, readable
  // once the kernel has put frames on the RX ring (the kernel wakes the fd's waiters as it
  // flushes them, in the NAPI poll that the NIC's, or the veth peer's, interrupt began). Its
  // poll() also does what need_wakeup asks, but receive() has done that already: the loop
  // polls once before it waits. The line only watches the fd: close() stops it before the
  // socket closes.
  interruptLine() {
    if (this.line === null) this.line = new InterruptLine({ readableFd: this.sock.fd });
    return this.line;
  }

  // The fill ring's first buffers: all of its room.
  fill() {
    this.refill(this.sock.fill.size);
  }

  // Up to `want` buffers from the pool onto the fill ring, as far as it has room.
  refill(want) {
    const ring = this.sock.fill;
    const words = ring.words;
    let room = ring.size - ((this.fillProd - this.fillCons) >>> 0);
    if (room < want) {
      this.fillCons = Atomics.load(words, ring.consumerAt);
      room = ring.size - ((this.fillProd - this.fillCons) >>> 0);
    }
    const pool = this.pool;
    let n = want < room ? want : room;
    if (n > pool.freeCount) n = pool.freeCount;
    if (n === 0) return;
    const mask = ring.mask;
    const descAt = ring.descAt;
    const chunk = pool.chunk;
    const free = pool.freeIds;
    let top = pool.freeCount;
    let prod = this.fillProd;
    for (let i = 0; i < n; i++) {
      // A u64 address: the low word; the high one stays 0 (a UMEM under 4 GiB).
      words[descAt + ((prod & mask) << 1)] = free[--top] * chunk;
      prod = (prod + 1) >>> 0;
    }
    pool.freeCount = top;
    this.fillProd = prod;
    this.inFill += n;
    Atomics.store(words, ring.producerAt, prod);
  }

  receive(batch) {
    const ring = this.sock.rx;
    const words = ring.words;
    const cons = this.rxCons;
    let n = (Atomics.load(words, ring.producerAt) - cons) >>> 0;
    if (n > batch.capacity) n = batch.capacity;
    const ids = batch.ids;
    const lengths = batch.lengths;
    const mask = ring.mask;
    const descAt = ring.descAt;
    const shift = this.pool.bufferShift;
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const w = descAt + (((cons + i) & mask) << 2); // 16-byte xdp_desc: addr, len, options
      const length = words[w + 2];
      ids[i] = words[w] >>> shift; // the chunk's id: the frame sits FRAME_OFFSET bytes in
      lengths[i] = length;
      bytes += length;
    }
    batch.count = n;
    batch.pool = this.pool;
    if (batch.statusAt >= 0) batch.filledBy = null; // AF_XDP reports no checksum status
    if (batch.hashesAt >= 0) batch.hashes.fill(0, 0, n); // nor RSS hashes
    if (n > 0) {
      this.rxCons = (cons + n) >>> 0;
      Atomics.store(words, ring.consumerAt, this.rxCons);
      this.inFill -= n;
      const totals = this.totals;
      totals[PACKETS] += n;
      totals[BYTES] += bytes;
    }
    // A full fill ring (every buffer given is still the kernel's) needs no look at its
    // consumer index: an idle poll costs one load of the RX producer.
    if (this.inFill < this.sock.fill.size) this.refill(n > 32 ? n : 32);
    // need_wakeup: the driver stopped for want of fill buffers and waits to be told.
    if (this.sock.fill.needsWakeup()) this.wake();
    return n;
  }

  wake() {
    this.wakeups++;
    native().xdpKickRx(this.sock.fd);
  }

  // Before the socket closes, with the queue's XSKMAP entry gone: the interrupt line stops
  // watching the fd, and the buffers still on the fill ring and the frames not yet received
  // go back to the pool (which other sockets of the thread may go on using).
  close() {
    if (this.line !== null) this.line.close(); // a pending wait ends as a timeout would
    this.line = null;
    const pool = this.pool;
    const shift = pool.bufferShift;
    const fill = this.sock.fill;
    for (let c = Atomics.load(fill.words, fill.consumerAt); c !== this.fillProd; c = (c + 1) >>> 0) {
      pushId(pool, fill.words[fill.descAt + ((c & fill.mask) << 1)] >>> shift);
    }
    const rx = this.sock.rx;
    for (let c = this.rxCons, p = Atomics.load(rx.words, rx.producerAt); c !== p; c = (c + 1) >>> 0) {
      pushId(pool, rx.words[rx.descAt + ((c & rx.mask) << 2)] >>> shift);
    }
    this.fillProd = Atomics.load(fill.words, fill.consumerAt);
  }
}

module.exports = { XdpRxQueue };
