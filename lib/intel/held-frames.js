'use strict';

// Held frames: a TX queue mode for a packet generator whose frames differ only in a 32-bit
// big-endian sequence number. Each slot t of the ring keeps one buffer for good
// and sends it again and again: sendHeld() writes the next number into the
// buffers of the next free slots and hands those slots to the NIC. No buffer id moves
// between pool and ring, and reclaim() frees nothing (TxQueue.reclaim()): a slot is free
// again once the NIC reports its descriptor done, as for any frame. The queue takes the
// buffers with holdBuffers() and gives them back when it is closed or reset (free()).
// Sections cited are the 82599's.
const rings = require('./rings');
const arena = require('../memory/arena');
const { IxyError } = require('../host/errors');

const TWO_32 = 2 ** 32;
const { TXD_PAYLEN_SHIFT } = rings;

// The sequence number is written as two aligned 32-bit words, two stores instead of four
// byte stores: it sits at a byte offset seqAt that is 2 mod 4 (behind the 14-byte Ethernet
// header and whole 4-byte IPv4 and UDP or TCP words), so bytes seqAt - 2 .. seqAt + 5 are
// two words of the buffer. The two bytes either side of the number are the frame's own
// and never change (`before`, `after`, as they sit in those words). Typed arrays use the
// host's byte order: little-endian here (x64, arm64), checked when buffers are held.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// A descriptor is written as two 64-bit halves, two stores instead of four, as C does:
// each half is made as two 32-bit words and copied as the double with those bits
// (Float64Array views of the same memory: arena.doubles, rings.doubles). A copy keeps
// every bit; none of these patterns is a NaN (bits 62..52, a double's exponent, are
// never all ones: an address is below 2^52, and PAYLEN, a frame length below 2^16, sits
// at bit 46).
const HALF = new Float64Array(1);
const HALF_WORDS = new Uint32Array(HALF.buffer);

// What a TX queue in held mode keeps (TxQueue.holdBuffers() makes it, TxQueue.sendHeld()
// and freeRing() use it): slot t's buffer of `pool`, each holding the same frame with its
// sequence number at byte seqAt. Only the queue writes its own fields; this writes
// descriptors and the frames' numbers.
class HeldFrames {
  constructor(pool, seqAt, size) {
    if (!LITTLE_ENDIAN) throw new IxyError('EUNSUPPORTED', 'held frames need a little-endian host');
    if (seqAt % 4 !== 2 || seqAt + 6 > pool.bufferSize) throw new IxyError('EINVAL', `a held frame's sequence number must sit at a byte offset 2 mod 4 inside the buffer, got ${seqAt}`);
    if (pool.freeCount < size) throw new IxyError('EINVAL', `holding a buffer in each of ${size} TX descriptors needs that many free in the pool, it has ${pool.freeCount}`);
    this.pool = pool;
    this.ids = new Uint32Array(size); // slot t's buffer, for free()
    const numbers = arena.allocWords(size);
    const addresses = arena.allocWords(2 * size + 1);
    const skip = arena.offsetOf(addresses) % 2; // so that the table starts at an even word
    for (let t = 0; t < size; t++) {
      const id = pool.alloc();
      const address = pool.physOf(id);
      this.ids[t] = id;
      numbers[t] = (id * pool.bufferSize + seqAt - 2) / 4;
      addresses[skip + 2 * t] = address % TWO_32;
      addresses[skip + 2 * t + 1] = Math.floor(address / TWO_32);
    }
    const frame = pool.buffers[this.ids[0]];
    const memory = pool.memory.buffer;
    this.addresses = addresses; // slot t's buffer address: arena.doubles[addressesAt + t]
    this.addressesAt = (arena.offsetOf(addresses) + skip) / 2;
    this.words32 = new Uint32Array(memory, 0, memory.byteLength / 4); // the pool's buffers
    this.numbers = numbers; // slot t's number is in words32[m] and words32[m + 1], m = words[numbersAt + t]
    this.numbersAt = arena.offsetOf(numbers);
    this.before = frame[seqAt - 2] | (frame[seqAt - 1] << 8);
    this.after = (frame[seqAt + 4] << 16) | (frame[seqAt + 5] << 24);
  }

  // Writes the descriptors of n slots from `tail` on (ring: rings.doubles from descriptor
  // 0 of the queue's ring at ringAt, in doubles; `mask`: the ring's), each sending its held
  // buffer as a frame of `length` bytes with command bits `command`, the k-th numbered
  // seq + k (mod 2^32). Returns the slot after the last: the queue's new tail.
  write(ringAt, tail, mask, n, command, length, seq) {
    const words = arena.words; // locals, so TurboFan folds them (lib/memory/arena.js)
    const doubles = arena.doubles;
    const ring = rings.doubles; // descriptor t is ring[ringAt + 2t], ring[ringAt + 2t + 1]
    const { words32, numbersAt, before, after, addressesAt } = this;
    HALF_WORDS[0] = command | length; // 7.2.3.2.4: length and command, then PAYLEN
    HALF_WORDS[1] = length << TXD_PAYLEN_SHIFT;
    const lengthHalf = HALF[0];
    let t = tail;
    const end = (seq + n) | 0;
    // s: the frame's number; s and the offsets are int32s (`| 0`): no overflow checks.
    for (let s = seq; s !== end; s = (s + 1) | 0) {
      const at = words[(numbersAt + t) | 0] | 0;
      words32[at] = before | ((s >>> 24) << 16) | ((s >>> 16) << 24);
      words32[(at + 1) | 0] = ((s >>> 8) & 0xff) | ((s & 0xff) << 8) | after;
      const d = (ringAt + (t << 1)) | 0;
      ring[d] = doubles[(addressesAt + t) | 0]; // the buffer's address
      ring[(d + 1) | 0] = lengthHalf;
      t = (t + 1) & mask;
    }
    return t;
  }

  // Gives every held buffer back to its pool (the queue stopped or never started).
  free() {
    for (const id of this.ids) this.pool.free(id);
  }
}

module.exports = { HeldFrames };
