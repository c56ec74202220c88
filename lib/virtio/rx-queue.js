'use strict';

// The receive virtqueue of a virtio-net device (virtio 1.1, 5.1.6.3 and 5.1.6.4). Every
// buffer is a chain of two device-writable descriptors: 2k holds the virtio-net header
// (its own slot of the scratch area; no offloads were negotiated, so only a hash report is
// read from it), 2k+1 is a mempool buffer, so the frame lands at offset 0 of the buffer as
// on every ixy NIC. The chains never change shape: receiving only swaps the buffer of
// descriptor 2k+1 and puts head 2k back on the available ring. receive() allocates nothing.
const C = require('./constants');
const { IxyError } = require('../host/errors');
const { Queue, PACKETS, BYTES } = require('../device/device');
const { popId } = require('../memory/mempool');

// Bytes of scratch per chain's header: the 10- or 12-byte header, or the 20-byte one with
// a hash report (C.NET_HDR_HASH), which takes a 32-byte slot.
const HEADER_SLOT = 16;
const HASH_HEADER_SLOT = 32;

class VirtioRxQueue extends Queue {
  constructor(vq, pool, headerBytes, notify) {
    super();
    this.vq = vq;
    this.pool = pool;
    this.headerBytes = headerBytes;
    this.notify = notify;
    this.chains = vq.size >> 1;
    this.bufferIds = new Uint32Array(this.chains);
    this.filled = false;
    this.errors = 0;
    this.headerSlot = headerBytes > HEADER_SLOT ? HASH_HEADER_SLOT : HEADER_SLOT;
    // With hash reports (VIRTIO_NET_F_HASH_REPORT, 1.2 5.1.6.4.4): the scratch as 32-bit
    // words, where chain k's hash_value is word k * slotWords + hashWord. Else null, and
    // a batch that keeps hashes gets 0 for every frame, as from an Intel NIC without RSS.
    const slotWords = this.headerSlot >> 2;
    this.hashWords = headerBytes === C.NET_HDR_HASH
      ? new Uint32Array(vq.scratch.buffer, vq.scratch.byteOffset, this.chains * slotWords) : null;
    this.slotWords = slotWords;
    this.hashWord = C.NET_HDR_HASH_VALUE >> 2;
  }

  // 5.1.6.3 Setting Up Receive Buffers: every chain gets a buffer and goes on the ring.
  fill() {
    const vq = this.vq;
    for (let k = 0; k < this.chains; k++) {
      const id = this.pool.alloc();
      if (id < 0) throw new IxyError('EINVAL', `a mempool of ${this.pool.entries} buffers is too small for a virtio RX ring of ${this.chains}`);
      this.bufferIds[k] = id;
      vq.setDescriptor(2 * k, vq.scratchPhys(k * this.headerSlot), this.headerBytes, C.DESC_F_WRITE | C.DESC_F_NEXT, 2 * k + 1);
      vq.setDescriptor(2 * k + 1, this.pool.physOf(id), this.pool.bufferSize, C.DESC_F_WRITE, 0);
      vq.avail[2 + k] = 2 * k;
    }
    this.filled = true;
    vq.publish(this.chains);
  }

  receive(batch) {
    const vq = this.vq;
    const desc = vq.desc;
    const avail = vq.avail;
    const usedRing = vq.usedRing;
    const mask = vq.mask;
    const ids = this.bufferIds;
    const pool = this.pool;
    const outIds = batch.ids;
    const outLengths = batch.lengths;
    const max = batch.capacity;
    const headerBytes = this.headerBytes;
    // One read of used.idx: everything up to it is complete (2.6.14).
    const used = Atomics.load(vq.usedHead, 1);
    let last = vq.lastUsed;
    let availIdx = vq.availIdx;
    let n = 0;
    let bytes = 0;
    while (last !== used && n < max) {
      const slot = (last & mask) << 1;
      const head = usedRing[slot];
      const length = usedRing[slot + 1] - headerBytes;
      const k = head >>> 1;
      if (length <= 0) {
        this.errors++; // nothing but a header: give the same buffer back
      } else {
        const fresh = popId(pool);
        if (fresh < 0) break; // no buffer to put in its place: later
        outIds[n] = ids[k];
        outLengths[n] = length;
        n++;
        bytes += length;
        ids[k] = fresh;
        const w = (head + 1) << 2;
        desc[w] = pool.phys[2 * fresh];
        desc[w + 1] = pool.phys[2 * fresh + 1];
      }
      avail[2 + (availIdx & mask)] = head;
      availIdx = (availIdx + 1) & 0xffff;
      last = (last + 1) & 0xffff;
    }
    batch.count = n;
    batch.pool = pool;
    if (batch.statusAt >= 0) batch.filledBy = null; // virtio reports no checksum status here
    // Before the chains go back to the device (publish), while their headers still hold
    // what it wrote: one compare per call for batches that keep no hashes.
    if (batch.hashesAt >= 0) this.copyHashes(batch, vq.lastUsed, last);
    if (last !== vq.lastUsed) {
      vq.lastUsed = last;
      if (vq.publish(availIdx)) this.notify();
      const totals = this.totals;
      totals[PACKETS] += n;
      totals[BYTES] += bytes;
    }
    return n;
  }

  // batch.hashes of the frames receive() just took, used entries [from, to): each one's
  // hash_value from its chain's header, or 0 without hash reports. The entries receive()
  // gave back without a frame (errors) have none.
  copyHashes(batch, from, to) {
    const out = batch.hashes;
    const usedRing = this.vq.usedRing;
    const mask = this.vq.mask;
    const hashWords = this.hashWords;
    let n = 0;
    for (let i = from; i !== to; i = (i + 1) & 0xffff) {
      const slot = (i & mask) << 1;
      if (usedRing[slot + 1] <= this.headerBytes) continue;
      out[n++] = hashWords === null ? 0 : hashWords[(usedRing[slot] >>> 1) * this.slotWords + this.hashWord];
    }
  }

  close() {
    if (this.filled) this.pool.freeMany(this.bufferIds, 0, this.chains);
    this.filled = false;
    this.vq.free();
  }
}

module.exports = { VirtioRxQueue };
