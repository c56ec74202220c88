'use strict';

// An AF_XDP socket's transmit side: the TX ring (frames for the kernel to send) and the
// completion ring (buffers it has sent), i.e. an 82599 TX ring and its write-back as two
// rings. A buffer is in flight from send() until its address comes back on the completion
// ring; the completion ring is as large as the TX ring, so at most `size` are in flight.
//
// A batch of the UMEM (frames received by any socket of this thread) goes out as it is,
// buffer ids and all. A batch of another pool (a generator's, a replayed file's) cannot:
// the kernel reads only UMEM chunks. Its frames are copied into fresh UMEM buffers (one
// addon call per batch) and its own buffers go back to its pool at once.
const { Queue, PACKETS, BYTES } = require('../device/device');
const { native } = require('../host/native');
const { FRAME_OFFSET } = require('./umem');
const { MAX_BATCH } = require('./limits');

class XdpTxQueue extends Queue {
  constructor(sock) {
    super();
    this.sock = sock;
    this.pool = sock.umem;
    this.addon = native();
    this.txProd = 0;
    this.compCons = 0;
    this.wakeups = 0; // sendto() calls the TX ring's need_wakeup asked for
    this.copied = 0; // frames copied in from other pools
    this.plan = new Uint32Array(3 * MAX_BATCH); // copyFrames(): from, to, length per frame
  }

  // TX descriptors, as an ixy TX queue's size (a generator sizes its pool by it).
  get size() {
    return this.sock.tx.size;
  }

  get inFlight() {
    return (this.txProd - this.compCons) >>> 0;
  }

  // Buffers the kernel has sent go back to the UMEM's free stack.
  reclaim() {
    const ring = this.sock.comp;
    const words = ring.words;
    const prod = Atomics.load(words, ring.producerAt);
    let cons = this.compCons;
    if (prod === cons) return;
    const pool = this.pool;
    const free = pool.freeIds;
    const shift = pool.bufferShift;
    const mask = ring.mask;
    const descAt = ring.descAt;
    let top = pool.freeCount;
    for (; cons !== prod; cons = (cons + 1) >>> 0) free[top++] = words[descAt + ((cons & mask) << 1)] >>> shift;
    pool.freeCount = top;
    this.compCons = cons;
    Atomics.store(words, ring.consumerAt, cons);
  }

  // How many frames send() takes now.
  room() {
    this.reclaim();
    return this.sock.tx.size - this.inFlight;
  }

  // Queues batch.ids[0..) for sending; returns how many went.
  send(batch) {
    this.reclaim();
    const ring = this.sock.tx;
    let n = ring.size - this.inFlight;
    if (n > batch.count) n = batch.count;
    if (n > 0) {
      const foreign = batch.pool !== this.pool;
      if (foreign) n = this.copyIn(batch, n);
      this.publish(batch, n, foreign);
      if (foreign) batch.pool.freeMany(batch.ids, 0, n);
    }
    // need_wakeup: in copy mode the kernel sends only when told (sendto), some frames per
    // call; a full ring also asks again until it drains.
    if ((n > 0 || this.inFlight > 0) && ring.needsWakeup()) this.wake();
    return n;
  }

  // TX descriptors for the first n frames (foreign: their copies, at plan[3i + 1]).
  publish(batch, n, foreign) {
    const ring = this.sock.tx;
    const words = ring.words;
    const mask = ring.mask;
    const descAt = ring.descAt;
    const chunk = this.pool.chunk;
    const ids = batch.ids;
    const lengths = batch.lengths;
    const plan = this.plan;
    let prod = this.txProd;
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const w = descAt + ((prod & mask) << 2);
      const length = lengths[i];
      words[w] = (foreign ? plan[3 * i + 1] : ids[i] * chunk) + FRAME_OFFSET;
      words[w + 2] = length;
      bytes += length;
      prod = (prod + 1) >>> 0;
    }
    this.txProd = prod;
    Atomics.store(words, ring.producerAt, prod);
    const totals = this.totals;
    totals[PACKETS] += n;
    totals[BYTES] += bytes;
  }

  // Copies the first n frames (at most as many as the UMEM has free buffers) into UMEM
  // buffers; returns how many. plan[3i + 1] is then copy i's chunk offset in the UMEM.
  copyIn(batch, n) {
    const pool = this.pool;
    const src = batch.pool;
    if (n > pool.freeCount) n = pool.freeCount;
    const plan = this.plan;
    const ids = batch.ids;
    const lengths = batch.lengths;
    const free = pool.freeIds;
    const srcShift = src.bufferShift;
    const chunk = pool.chunk;
    let top = pool.freeCount;
    for (let i = 0; i < n; i++) {
      plan[3 * i] = ids[i] << srcShift;
      plan[3 * i + 1] = free[--top] * chunk;
      plan[3 * i + 2] = lengths[i];
    }
    pool.freeCount = top;
    // plan's destinations as offsets into pool.bytes, which starts FRAME_OFFSET in: the
    // same as chunk offsets into the UMEM.
    this.addon.copyFrames(src.bytes, pool.bytes, plan, n);
    this.copied += n;
    return n;
  }

  wake() {
    this.wakeups++;
    this.addon.xdpKickTx(this.sock.fd);
  }

  // Whether the kernel has sent everything queued (asking it to, in copy mode).
  drained() {
    this.reclaim();
    if (this.inFlight > 0 && this.sock.tx.needsWakeup()) this.wake();
    return this.inFlight === 0;
  }

  // Frames still in flight when the socket closes are the kernel's to drop; their buffers
  // go with the UMEM or, for a UMEM other sockets still use, stay out of its free stack.
  close() {
    this.reclaim();
  }
}

module.exports = { XdpTxQueue };
