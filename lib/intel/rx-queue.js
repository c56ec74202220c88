'use strict';

// One receive queue: a ring of advanced RX descriptors (82599 datasheet 7.1, 82576
// datasheet 7.1) and the buffer id behind each descriptor. receive() is the hot path: it
// allocates nothing. ixgbe and igb share this code, each passing its register `layout`
// (RDBAL(q), RDT(q), SRRCTL bits, ...). Sections cited are the 82599's. The ring, the ids
// and RXDCTL.ENABLE are RingQueue's (ring-queue.js). The buffer ids, like the pool's and
// the batch's arrays, are a span of the index arena: receive() indexes `words` at offsets
// named ...At (see lib/memory/arena.js for why).
const rings = require('./rings');
const { RingQueue } = require('./ring-queue');
const { IxyError } = require('../host/errors');
const { PACKETS, BYTES } = require('../device/device');
const { setField, setReg } = require('../host/register-access');
const arena = require('../memory/arena');
const { popIds } = require('../memory/mempool');

const TWO_32 = 2 ** 32;
const { RXD_STAT_DD, RXD_STAT_EOP, DESCRIPTOR_BYTES, writeTail } = rings;
const DONE_AND_WHOLE = RXD_STAT_DD | RXD_STAT_EOP;

class RxQueue extends RingQueue {
  // freeThreshold: descriptors are handed back to the NIC (one RDT write) only once at
  // least this many are ready, as DPDK's rx_free_thresh does. The NIC then refills the
  // ring in bursts instead of one batch at a time, and the tail register (whose cache
  // line the NIC reads) is written less often. The NIC never has fewer than
  // ringSize - freeThreshold descriptors, so the threshold is at most half the ring.
  // dropWhenFull: SRRCTL.DROP_EN, see configure().
  constructor(regs, layout, index, ringSize, pool, freeThreshold = 1, dropWhenFull = false) {
    super('RX', regs, layout, index, ringSize, layout.RXDCTL(index), layout.RXDCTL_ENABLE);
    this.pool = pool;
    if (pool.rings) pool.rings.add(this); // Mempool.close() asks it (ringBuffersOf)
    this.next = 0; // the next descriptor the NIC will complete
    this.tailIndex = layout.RDT(index) >> 2;
    this.freeThreshold = freeThreshold;
    this.dropWhenFull = dropWhenFull;
    this.unreturned = 0; // descriptors refilled since the last RDT write
    this.errors = 0; // frames the NIC flagged broken or split over descriptors: dropped here
    // A frame to hand out: of these status bits exactly DD and EOP are set (done, whole, no
    // MAC error). A wrong IPv4 or TCP/UDP checksum is not among them: such frames are
    // delivered (a capture tool must see them); batch.checksumOf() tells them apart.
    this.goodFrameBits = DONE_AND_WHOLE | layout.RXD_FRAME_ERRORS;
    this.filled = false; // whether the ring holds buffers of the pool
  }

  // 4.6.7: ring address and length, one-buffer advanced descriptors with the pool's buffer
  // size (SRRCTL.BSIZEPACKET, in KiB: checked by the device's options). With dropWhenFull
  // (SRRCTL.DROP_EN) a frame that finds no free descriptor is dropped at once (counted in
  // QPRDC); without it, it waits in the packet buffer, which absorbs a short stall of the
  // application, but a full queue then holds up every other queue behind it. So, as
  // Linux's ixgbe does, DROP_EN only with several RX queues.
  configure() {
    const regs = this.regs;
    const R = this.layout;
    const q = this.index;
    const bufferKiB = this.pool.bufferSize / 1024;
    setField(regs, R.SRRCTL(q), R.SRRCTL_DESCTYPE_MASK | R.SRRCTL_BSIZEPACKET_MASK,
      R.SRRCTL_DESCTYPE_ADV_ONEBUF | (this.dropWhenFull ? R.SRRCTL_DROP_EN : 0) | bufferKiB);
    const base = this.span.phys;
    setReg(regs, R.RDBAL(q), base % TWO_32);
    setReg(regs, R.RDBAH(q), Math.floor(base / TWO_32));
    setReg(regs, R.RDLEN(q), this.size * DESCRIPTOR_BYTES);
    setReg(regs, R.RDH(q), 0);
    setReg(regs, R.RDT(q), 0);
  }

  // 4.6.7.1: give every descriptor a buffer, enable the queue, then hand the ring to the NIC
  // by moving the tail. One slot stays empty: head == tail means "no descriptors".
  start() {
    for (let i = 0; i < this.size; i++) {
      const id = this.pool.alloc();
      if (id < 0) throw new IxyError('EINVAL', `a mempool of ${this.pool.entries} buffers is too small for an RX ring of ${this.size}`);
      this.bufferIds[i] = id;
      this.writeReadDescriptor(i, id);
    }
    this.filled = true;
    this.enable();
    setReg(this.regs, this.layout.RDH(this.index), 0);
    writeTail(this.regs, this.tailIndex, this.size - 1);
  }

  writeReadDescriptor(i, id) {
    const w = i << 2;
    this.ring[w] = this.pool.phys[2 * id];
    this.ring[w + 1] = this.pool.phys[2 * id + 1];
    this.ring[w + 2] = 0; // header address 0; also clears DD of the last write-back
    this.ring[w + 3] = 0;
  }

  // Moves up to batch.capacity received frames into the batch; returns how many.
  // Each completed descriptor gets a fresh buffer right away, so the ring stays full.
  receive(batch) {
    const words = arena.words; // a local, so TurboFan folds it (see lib/memory/arena.js)
    const ring = rings.words; // likewise (lib/intel/rings.js); this ring starts at ringAt
    const pool = this.pool;
    const good = this.goodFrameBits;
    const first = this.next;
    // A batch is one run of descriptors from `first`, never around the end of the ring, so
    // the loops below index it straight, without wrapping. Every frame handed out takes
    // one fresh buffer from the pool's free stack, so taking at most `free` frames means
    // the stack never runs dry in the loop (a frame that finds none stays on the ring).
    // Offsets and counts below are int32 sums (`| 0`; all below 2^24, bytes below 2^28):
    // TurboFan then adds without an overflow check.
    const free = pool.freeCount;
    const room = (this.size - first) | 0;
    let max = batch.capacity < free ? batch.capacity : free;
    if (room < max) max = room;
    const at = (this.ringAt + (first << 2)) | 0; // descriptor first + k is ring[at + 4k ...]
    // 1. Count the good frames the NIC has completed: a loop of loads only, so that the
    // lines the NIC has just written come over together, not one between each store below.
    let w = (at + 2) | 0; // the status word (7.1.6.2)
    const end = (w + (max << 2)) | 0; // w steps alone: one add per descriptor, not two
    let status = 0; // of the descriptor that stopped the count, if one did
    while (w !== end) {
      status = ring[w];
      if ((status & good) !== DONE_AND_WHOLE) break;
      w = (w + 4) | 0;
    }
    const n = (w - at - 2) >> 2;
    // 2. A batch that keeps status words or RSS hashes gets them now, before the loop below
    // overwrites them; other batches pay two compares per call.
    if (batch.statusAt >= 0 || batch.hashesAt >= 0) this.keepWriteBack(batch, at, n);
    // 3. Hand them out and put a fresh buffer on each descriptor. Frame k takes the buffer
    // k below the top of the free stack (popIds). Offsets into the arena: bufferIds[first + k]
    // is words[idsAt + k], and so on.
    const idsAt = (this.bufferIdsAt + first) | 0;
    const addresses = arena.doubles; // a local too: buffer id's address is addresses[addressesAt + id]
    const addressesAt = pool.physAt >> 1;
    const descriptors = rings.doubles; // likewise: ring[2d] and ring[2d + 1] as one 64-bit element, descriptors[d]
    const outIdsAt = batch.idsAt;
    const outLengthsAt = batch.lengthsAt;
    const topAt = popIds(pool, n);
    let bytes = 0;
    let d = at >> 1; // descriptor first + k's halves: descriptors[d], descriptors[d + 1]
    // The int32 sums (above) also keep fewer values alive for deoptimisation.
    for (let k = 0; k < n; k = (k + 1) | 0) {
      const fresh = words[(topAt - k) | 0] | 0;
      const length = ring[((d << 1) + 3) | 0] & 0xffff;
      words[(outIdsAt + k) | 0] = words[(idsAt + k) | 0];
      words[(outLengthsAt + k) | 0] = length;
      bytes = (bytes + length) | 0;
      words[(idsAt + k) | 0] = fresh;
      // Back to the read format: the fresh buffer's address (words 0-1), and no header
      // buffer with DD clear (words 2-3, 0: SRRCTL.DESCTYPE is one-buffer, 7.1.6). Each
      // half is one 64-bit store, as C's; the address is copied as the double with its
      // bits (held-frames.js says why that keeps every bit), and 0.0 is all zero bits.
      descriptors[d] = addresses[(addressesAt + fresh) | 0];
      descriptors[(d + 1) | 0] = 0;
      d = (d + 2) | 0;
    }
    // 4. If a completed descriptor stopped the count, a broken frame starts there (rare).
    let used = n;
    if (n < max && (status & RXD_STAT_DD) !== 0) used += this.dropBadFrames(first + n);
    if (used > 0) {
      const next = (first + used) & this.mask;
      this.next = next;
      this.unreturned = (this.unreturned + used) | 0;
      const totals = this.totals;
      totals[PACKETS] += n;
      totals[BYTES] += bytes;
      if (this.unreturned >= this.freeThreshold) {
        this.unreturned = 0;
        // The tail names the last descriptor we gave back; writeTail keeps the descriptor
        // stores above visible before it.
        writeTail(this.regs, this.tailIndex, (next - 1) & this.mask);
      }
    }
    // Last, after the rare calls above (TurboFan inlines neither, and after a call it knows
    // nothing of memory): the caller then reads batch.count and batch.pool as the values
    // stored here, not from memory again.
    batch.count = n;
    if (batch.pool !== pool) batch.pool = pool; // a compare costs less than a store's write barrier
    return n;
  }

  // Copies what a batch keeps of the write-back descriptors from ring word `at` on, n of
  // them (receive(), step 2): the status words (PacketBatch's `status` option), with this
  // queue to decode them (checksumFlags), and the RSS hashes (`hashes`: the write-back's
  // second dword, 7.1.6.2, with RXCSUM.PCSD).
  keepWriteBack(batch, at, n) {
    const words = arena.words;
    const ring = rings.words;
    const statusAt = batch.statusAt;
    if (statusAt >= 0) {
      batch.filledBy = this;
      for (let k = 0; k < n; k++) words[statusAt + k] = ring[at + 2 + (k << 2)];
    }
    const hashesAt = batch.hashesAt;
    if (hashesAt >= 0) {
      for (let k = 0; k < n; k++) words[hashesAt + k] = ring[at + 1 + (k << 2)];
    }
  }

  // The CHECKSUM_* flags of a frame this queue received (PacketBatch.checksumOf()).
  checksumFlags(s, frame, length) {
    return rings.checksumFlags(s, this.layout, frame, length);
  }

  // Drops the broken frames from descriptor i on and returns how many descriptors they
  // took. Broken: the NIC flagged a MAC error (RXE), or the frame did not fit one buffer
  // and spans several descriptors (7.1.6.2: DD on each, EOP only on the last). A frame is
  // dropped whole, counted once in `errors`, and only once the NIC has written all of it,
  // up to EOP: a frame still being written stays for the next call. Each descriptor keeps
  // its buffer and goes back to the NIC; the write-back format overwrote the buffer
  // address (words 0-1), so the read format is written again. Indices wrap: a frame may
  // cross the end of the ring.
  dropBadFrames(i) {
    const ring = this.ring;
    const mask = this.mask;
    let used = 0;
    for (;;) {
      // Find the end of the frame that starts at i + used.
      let end = used;
      let status = ring[(((i + end) & mask) << 2) + 2];
      if ((status & RXD_STAT_DD) === 0 || (status & this.goodFrameBits) === DONE_AND_WHOLE) break;
      while ((status & RXD_STAT_EOP) === 0) {
        end++;
        if (end >= this.size) return used; // never a whole frame: leave it
        status = ring[(((i + end) & mask) << 2) + 2];
        if ((status & RXD_STAT_DD) === 0) return used; // not written yet
      }
      for (let k = used; k <= end; k++) {
        const d = (i + k) & mask;
        this.writeReadDescriptor(d, this.bufferIds[d]);
      }
      this.errors++;
      used = end + 1;
    }
    return used;
  }

  // The ring's buffers are all its pool's, once it is filled.
  buffersOf(pool) {
    return this.filled && pool === this.pool ? this.size : 0;
  }

  // Gives every buffer on the ring back to the pool and releases the ring memory.
  close() {
    if (this.filled) this.pool.freeMany(this.bufferIds, 0, this.size);
    this.filled = false;
    super.close();
  }
}

module.exports = { RxQueue };
