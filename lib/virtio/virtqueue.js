'use strict';

// A split virtqueue (virtio 1.1, 2.6) in DMA memory, laid out as legacy devices require
// (2.6.2: descriptor table, available ring, then the used ring on the next 4 KiB boundary);
// modern devices take the same block through three addresses. After the rings sits a small
// area for per-chain virtio-net headers and control commands.
//   desc   Uint32Array, 4 words per descriptor: address low, high, length, flags | next << 16
//   avail  Uint16Array: [0] flags, [1] idx, [2 + i] ring[i]                       (2.6.6)
//   usedHead Uint16Array: [0] flags, [1] idx; usedRing Uint32Array: [2i] id, [2i+1] len (2.6.8)
const C = require('./constants');
const { DmaMemory } = require('../memory/mempool');
const { IxyError } = require('../host/errors');

const TWO_32 = 2 ** 32;
const SCRATCH_BYTES = 64 * 1024;

class Virtqueue {
  constructor(size) {
    // 2.6: a split ring's size is a power of two up to 32768.
    if (!Number.isInteger(size) || size < 2 || size > 32768 || (size & (size - 1)) !== 0) {
      throw new IxyError('EUNSUPPORTED', `virtqueue size ${size} is not a power of two from 2 to 32768`);
    }
    this.size = size;
    this.mask = size - 1;
    const availOffset = 16 * size;
    const usedOffset = align(availOffset + 6 + 2 * size, C.LEGACY_QUEUE_ALIGN);
    const scratchOffset = align(usedOffset + 6 + 8 * size, C.LEGACY_QUEUE_ALIGN);
    this.memory = new DmaMemory(scratchOffset + SCRATCH_BYTES);
    const buf = this.memory.buffer;
    this.desc = new Uint32Array(buf, 0, 4 * size);
    this.avail = new Uint16Array(buf, availOffset, 3 + size);
    this.usedHead = new Uint16Array(buf, usedOffset, 2);
    this.usedRing = new Uint32Array(buf, usedOffset + 4, 2 * size);
    this.descPhys = this.memory.physOf(0);
    this.availPhys = this.memory.physOf(availOffset);
    this.usedPhys = this.memory.physOf(usedOffset);
    this.scratch = new Uint8Array(buf, scratchOffset, SCRATCH_BYTES);
    this.scratchOffset = scratchOffset;
    this.availIdx = 0; // our copy of avail.idx (free-running, 16 bits)
    this.lastUsed = 0; // the next used.idx entry we have not consumed
    // We poll: ask the device not to interrupt (a hint, 2.6.7).
    this.avail[0] = C.AVAIL_F_NO_INTERRUPT;
  }

  // Physical address of byte `offset` of the scratch area.
  scratchPhys(offset) {
    return this.memory.physOf(this.scratchOffset + offset);
  }

  setDescriptor(i, phys, length, flags, next) {
    const w = i << 2;
    this.desc[w] = phys % TWO_32;
    this.desc[w + 1] = Math.floor(phys / TWO_32);
    this.desc[w + 2] = length;
    this.desc[w + 3] = flags | (next << 16);
  }

  // Hands the avail ring entries up to `availIdx` to the device: the index is written after
  // the entries (2.6.13.3). Atomics.store is a full barrier, which the read of
  // USED_F_NO_NOTIFY right after needs too (a store, then a load). Returns whether the
  // device asked to be notified.
  publish(availIdx) {
    this.availIdx = availIdx;
    Atomics.store(this.avail, 1, availIdx);
    return this.wantsNotify;
  }

  // Whether the device wants a notification for new buffers (2.6.10: USED_F_NO_NOTIFY).
  get wantsNotify() {
    return (this.usedHead[0] & C.USED_F_NO_NOTIFY) === 0;
  }

  free() {
    this.memory.free();
  }
}

function align(n, to) {
  return Math.ceil(n / to) * to;
}

module.exports = { Virtqueue };
