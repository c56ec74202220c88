'use strict';

// The transmit virtqueue of a virtio-net device (virtio 1.1, 5.1.6.2). Each packet is a
// chain of two device-readable descriptors: 2k points at a zeroed virtio-net header (no
// checksum offload, no GSO), 2k+1 at the frame in its mempool buffer. Header and data in
// separate descriptors is the layout legacy devices without VIRTIO_F_ANY_LAYOUT demand
// and every device accepts. Free chains sit on a stack; send() allocates nothing.
const C = require('./constants');
const { Queue, PACKETS, BYTES } = require('../device/device');
const { pushId } = require('../memory/mempool');

// Bytes of scratch per chain's header: 16, or 32 for the 20-byte header that comes with
// VIRTIO_NET_F_HASH_REPORT (which a transmit chain carries too, zeroed).
const HEADER_SLOT = 16;
const HASH_HEADER_SLOT = 32;

class VirtioTxQueue extends Queue {
  constructor(vq, headerBytes, notify) {
    super();
    this.vq = vq;
    this.headerBytes = headerBytes;
    this.notify = notify;
    this.chains = vq.size >> 1;
    this.bufferIds = new Uint32Array(this.chains);
    this.pools = new Array(this.chains).fill(null);
    this.freeChains = new Uint16Array(this.chains);
    this.freeCount = 0;
    this.headerSlot = headerBytes > HEADER_SLOT ? HASH_HEADER_SLOT : HEADER_SLOT;
  }

  // The fixed part of every chain: header descriptor -> data descriptor.
  prepare() {
    const vq = this.vq;
    vq.scratch.fill(0, 0, this.chains * this.headerSlot);
    for (let k = 0; k < this.chains; k++) {
      vq.setDescriptor(2 * k, vq.scratchPhys(k * this.headerSlot), this.headerBytes, C.DESC_F_NEXT, 2 * k + 1);
      vq.setDescriptor(2 * k + 1, 0, 0, 0, 0);
      this.freeChains[this.freeCount++] = this.chains - 1 - k;
    }
  }

  // Takes back the chains the device has used (2.6.14) and frees their buffers.
  reclaim() {
    const vq = this.vq;
    const usedRing = vq.usedRing;
    const mask = vq.mask;
    const used = Atomics.load(vq.usedHead, 1);
    let last = vq.lastUsed;
    while (last !== used) {
      const k = usedRing[(last & mask) << 1] >>> 1;
      pushId(this.pools[k], this.bufferIds[k]);
      this.freeChains[this.freeCount++] = k;
      last = (last + 1) & 0xffff;
    }
    vq.lastUsed = last;
  }

  // Queues batch.ids[0..) for sending; returns how many fit (5.1.6.2, 2.6.13).
  send(batch) {
    this.reclaim();
    const vq = this.vq;
    const desc = vq.desc;
    const avail = vq.avail;
    const mask = vq.mask;
    const pool = batch.pool;
    const phys = pool.phys;
    const ids = batch.ids;
    const lengths = batch.lengths;
    const n = batch.count < this.freeCount ? batch.count : this.freeCount;
    let availIdx = vq.availIdx;
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      const length = lengths[i];
      const k = this.freeChains[--this.freeCount];
      const w = (2 * k + 1) << 2;
      desc[w] = phys[2 * id];
      desc[w + 1] = phys[2 * id + 1];
      desc[w + 2] = length;
      this.bufferIds[k] = id;
      this.pools[k] = pool;
      avail[2 + (availIdx & mask)] = 2 * k;
      availIdx = (availIdx + 1) & 0xffff;
      bytes += length;
    }
    if (n > 0) {
      // Then the notification, unless the device said it does not need one (2.6.10).
      if (vq.publish(availIdx)) this.notify();
      const totals = this.totals;
      totals[PACKETS] += n;
      totals[BYTES] += bytes;
    }
    return n;
  }

  get inFlight() {
    return this.chains - this.freeCount;
  }

  drained() {
    this.reclaim();
    return this.freeCount === this.chains;
  }

  // Buffers still on the ring go home; the ring memory is released.
  close() {
    this.reclaim();
    const busy = new Uint8Array(this.chains).fill(1);
    for (let i = 0; i < this.freeCount; i++) busy[this.freeChains[i]] = 0;
    for (let k = 0; k < this.chains; k++) {
      if (busy[k] && this.pools[k]) this.pools[k].free(this.bufferIds[k]);
    }
    this.freeCount = this.chains;
    this.vq.free();
  }
}

module.exports = { VirtioTxQueue };
