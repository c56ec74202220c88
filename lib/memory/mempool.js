'use strict';

// Memory the NIC reads and writes: DMA memory on hugepages, and the mempool of packet
// buffers carved from it.
//
// DmaMemory: the addon allocates (a hugetlbfs file, mapped shared, unlinked) and translates
// (/proc/self/pagemap); the class keeps the result and answers "where is byte N" for the
// device. That address is the physical one when this process can read it (root); otherwise
// an I/O virtual address that only the IOMMU knows (lib/host/vfio.js), which only a device bound
// to vfio-pci can use.
//
// A mempool: fixed-size packet buffers in DMA memory. A packet is a buffer id (a small
// integer), never an object; everything about buffer i is made once, here:
//   buffers[i]   a Uint8Array view of its bytes
//   phys[2i], phys[2i + 1]  its physical address as low and high 32-bit halves, ready for
//                descriptors (side by side, 8-byte aligned: the RX and TX loops copy the
//                pair as one 64-bit element)
// Free buffers sit on a stack of ids (one array access per alloc or free), pushed and
// popped only here: by Mempool's methods, and by popIds, pushIds, popId and pushId below
// for the drivers' rings. phys and the free stack are spans of the index arena (arena.js).
const { IxyError, fromNative, shown } = require('../host/errors');
const { checkOptionNames } = require('../host/option-names');
const { native } = require('../host/native');
const vfio = require('../host/vfio');
const { words, allocWords, offsetOf } = require('./arena');
const { withOwnershipChecks, envDebug } = require('./ownership-checks');

class DmaMemory {
  // size: bytes wanted, rounded up to whole 2 MiB hugepages by the addon.
  constructor(size) {
    const addon = native();
    let result;
    try {
      result = addon.allocDma(size);
    } catch (err) {
      throw fromNative(err, 'cannot allocate hugepage DMA memory');
    }
    this.buffer = result.buffer;
    this.size = result.buffer.byteLength;
    this.pageSize = addon.HUGE_PAGE_SIZE;
    // Device address of each hugepage.
    this.pagePhys = result.phys || vfio.iovasFor(this.size, this.pageSize);
    this.iommuMapped = false;
    try {
      vfio.track(this);
    } catch (err) {
      this.free();
      throw err;
    }
  }

  // Device address of byte `offset`. Bytes are physically contiguous only within a
  // hugepage, so a ring or buffer must never straddle a page boundary.
  physOf(offset) {
    const page = Math.floor(offset / this.pageSize);
    return this.pagePhys[page] + (offset % this.pageSize);
  }

  free() {
    if (this.buffer !== null) {
      vfio.untrack(this);
      native().free(this.buffer);
      this.buffer = null;
    }
  }
}

const HUGE_PAGE = 2 * 1024 * 1024;
// Buffer ids fit in ID_BITS bits; a TX ring keeps a pool number in the bits above them.
const ID_BITS = 20;
const MAX_ENTRIES = 1 << ID_BITS;
const TWO_32 = 2 ** 32;

class Mempool {
  // debug: check buffer ownership (double free, use after free; see ownership-checks.js):
  // `new Mempool({ debug: true })` is a CheckedMempool. The default comes from the
  // environment: IXY_DEBUG_BUFFERS=1.
  constructor(options = {}) {
    // memory: for the AF_XDP backend (lib/xdp/umem.js), memory made elsewhere with
    // DmaMemory's buffer, physOf() and free(); otherwise hugepage DMA memory.
    const { entries = 4096, bufferSize = 2048, debug = envDebug(), memory = null } = checkOptionNames('new Mempool()', options, ['entries', 'bufferSize', 'debug', 'memory']);
    if (debug && new.target === Mempool) return new CheckedMempool({ entries, bufferSize });
    if (!Number.isInteger(entries) || entries < 1 || entries > MAX_ENTRIES) {
      throw new IxyError('EINVAL', `mempool entries must be 1..${MAX_ENTRIES}, got ${shown(entries)}`);
    }
    // A power of two that divides the hugepage, so no buffer straddles two pages.
    if (!Number.isInteger(bufferSize) || bufferSize < 64 || bufferSize > HUGE_PAGE || (bufferSize & (bufferSize - 1)) !== 0) {
      throw new IxyError('EINVAL', `mempool buffer size must be a power of two from 64 to 2 MiB, got ${bufferSize}`);
    }
    this.entries = entries;
    this.bufferSize = bufferSize;
    this.memory = memory || new DmaMemory(entries * bufferSize);
    // One view over every buffer: byte k of buffer id is bytes[(id << bufferShift) + k].
    // A loop touching many packets reads one object instead of one view per packet.
    this.bytes = new Uint8Array(this.memory.buffer, 0, entries * bufferSize);
    this.bufferShift = Math.log2(bufferSize);

    this.buffers = new Array(entries);
    // phys starts at an even word, so that buffer id's address is also one 64-bit element,
    // arena.doubles[physAt / 2 + id], which the rings copy into a descriptor with one load
    // and one store. physSpan is the span itself (whoever keeps an offset keeps its view).
    this.physSpan = allocWords(2 * entries + 1);
    const skip = offsetOf(this.physSpan) % 2;
    this.phys = this.physSpan.subarray(skip, skip + 2 * entries);
    this.freeIds = allocWords(entries);
    this.physAt = offsetOf(this.phys);
    this.freeAt = offsetOf(this.freeIds);
    for (let i = 0; i < entries; i++) {
      const offset = i * bufferSize;
      const phys = this.memory.physOf(offset);
      this.buffers[i] = new Uint8Array(this.memory.buffer, offset, bufferSize);
      this.phys[2 * i] = phys % TWO_32;
      this.phys[2 * i + 1] = Math.floor(phys / TWO_32);
      // Stack order: alloc hands out low ids first, which keeps a small working set warm.
      this.freeIds[i] = entries - 1 - i;
    }
    this.freeCount = entries;
    // The rings (RX and TX queues) its buffers have gone onto; close() asks them whether
    // they hold any still (ringBuffersOf(pool)).
    this.rings = new Set();
  }

  // The physical address of buffer id, as a number (for set-up code; the hot loops copy
  // the two halves from phys).
  physOf(id) {
    return this.phys[2 * id] + this.phys[2 * id + 1] * TWO_32;
  }

  // One buffer id, or -1 when the pool is empty.
  alloc() {
    if (this.freeCount === 0) return -1;
    return this.freeIds[--this.freeCount];
  }

  // An id outside the pool would go onto the free stack and be handed out later as a
  // buffer that does not exist: EINVAL instead (a compare per call; whether the caller
  // owns the buffer is for debug mode, lib/memory/ownership-checks.js).
  free(id) {
    if (typeof id !== 'number' || !(id >= 0 && id < this.entries) || id % 1 !== 0) {
      throw new IxyError('EINVAL', `free() takes a buffer id of this pool (0..${this.entries - 1}), got ${shown(id)}`);
    }
    this.freeIds[this.freeCount++] = id;
  }

  // Fills ids[0..n) with up to n buffers (no more than ids holds); returns how many it got.
  allocMany(ids, n) {
    if (!(ids instanceof Uint32Array) || typeof n !== 'number') {
      throw new IxyError('EINVAL', `allocMany(ids, n) takes a Uint32Array and a count, got ${shown(ids)} and ${shown(n)}`);
    }
    let got = n < ids.length ? n : ids.length;
    if (this.freeCount < got) got = this.freeCount;
    let top = this.freeCount;
    for (let i = 0; i < got; i++) ids[i] = this.freeIds[--top];
    this.freeCount = top;
    return got;
  }

  // Frees ids[from..to).
  freeMany(ids, from, to) {
    let top = this.freeCount;
    for (let i = from; i < to; i++) this.freeIds[top++] = ids[i];
    this.freeCount = top;
  }

  get inUse() {
    return this.entries - this.freeCount;
  }

  // Releases the DMA memory. The counts stay readable, so that a caller can still check
  // that every buffer came home (freeCount === entries). Refused (EBUSY) while a running
  // queue's ring holds buffers of the pool: the NIC would read or write memory that is no
  // longer this process's. Stop or close the device first.
  close() {
    let held = 0;
    for (const queue of this.rings) held += queue.ringBuffersOf(this);
    if (held > 0) {
      throw new IxyError('EBUSY', `cannot close a mempool while ${held} of its buffers are on a running queue's ring: stop or close the device first (dev.stop(), dev.close())`);
    }
    this.unmap();
  }

  // close() without asking the rings: for a device's own pools, which it closes once it has
  // stopped its queues (or, should one not stop, turned Bus Master off).
  unmap() {
    this.rings.clear();
    this.memory.free();
    this.buffers.fill(null);
  }
}

// A Mempool whose buffers are tracked: who holds each (lib/memory/ownership-checks.js).
const CheckedMempool = withOwnershipChecks(Mempool);

// For the drivers' rings, which move buffers between pool and ring without the ownership
// checks. popIds pops n ids (n <= pool.freeCount): words[topAt - k] for k in [0, n), where
// topAt is what it returns, the top of the stack first.
function popIds(pool, n) {
  const top = pool.freeCount;
  pool.freeCount = (top - n) | 0; // int32 sums: no overflow checks
  return (pool.freeAt + top - 1) | 0;
}

// Pushes the n ids words[fromAt..fromAt + n).
function pushIds(pool, fromAt, n) {
  const toAt = pool.freeAt + pool.freeCount;
  // Four ids per trip: one loop test and stack check per four copies. Int32 sums: no
  // overflow checks.
  let j = 0;
  for (; ((j + 4) | 0) <= n; j = (j + 4) | 0) {
    const from = (fromAt + j) | 0;
    const to = (toAt + j) | 0;
    words[to] = words[from];
    words[(to + 1) | 0] = words[(from + 1) | 0];
    words[(to + 2) | 0] = words[(from + 2) | 0];
    words[(to + 3) | 0] = words[(from + 3) | 0];
  }
  for (; j < n; j = (j + 1) | 0) words[(toAt + j) | 0] = words[(fromAt + j) | 0];
  pool.freeCount += n;
}

// One id, or -1 when the pool is empty.
function popId(pool) {
  return pool.freeCount === 0 ? -1 : words[pool.freeAt + --pool.freeCount];
}

function pushId(pool, id) {
  words[pool.freeAt + pool.freeCount++] = id;
}

module.exports = { DmaMemory, Mempool, CheckedMempool, ID_BITS, popIds, pushIds, popId, pushId };
