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

// The sequence number is written as one aligned 32-bit word, one store instead of four
// byte stores: it sits at a byte offset seqAt that is 2 mod 4 in the frame (behind the
// 14-byte Ethernet header and whole 4-byte IPv4 and UDP or TCP words), so a held frame
// starts FRAME_AT = 2 bytes into its buffer (the descriptor gets that address; the NIC
// reads a TX buffer from any byte, 82599 7.2.3.2.4), which puts the number at a multiple
// of 4. Typed arrays use the host's byte order: little-endian here (x64, arm64), checked
// when buffers are held; the number is swapped to big-endian as it is written.
const FRAME_AT = 2;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// A descriptor is written as two 64-bit halves, two stores instead of four, as C does:
// each half is made as two 32-bit words and copied as the double with those bits
// (Float64Array views of the same memory: arena.doubles, rings.doubles). A copy keeps
// every bit; none of these patterns is a NaN (bits 62..52, a double's exponent, are
// never all ones: an address is below 2^52, and PAYLEN, a frame length below 2^16, sits
// at bit 46).
const HALF = new Float64Array(1);
const HALF_WORDS = new Uint32Array(HALF.buffer);

// The held buffers' memory as 32-bit words, a property set once on this module's object:
// TurboFan then compiles write()'s view as a constant, with no map check or length and
// data-pointer loads per frame (rings.js says the same of `rings.words`). Held frames of
// another pool's memory set it to their own view as they write; it is then an ordinary
// property (slower, still correct).
const memory = {}; // memory.words32: the view of the last held frames that wrote

// Each slot's entry in the table of SLOT_WORDS words: its frame's address in words 0-1
// (one double of arena.doubles), the word offset of its number in `memory.words32` in word 2.
const SLOT_WORDS = 4;
const SLOT_DOUBLES = SLOT_WORDS / 2;

// The 32-bit word whose bytes in memory (little-endian) are s big-endian.
function bigEndian(s) {
  return (s >>> 24) | ((s >>> 8) & 0xff00) | ((s & 0xff00) << 8) | (s << 24);
}

// What a TX queue in held mode keeps (TxQueue.holdBuffers() makes it, TxQueue.sendHeld()
// and freeRing() use it): slot t's buffer of `pool`, each holding the same frame with its
// sequence number at byte seqAt. Only the queue writes its own fields; this writes
// descriptors and the frames' numbers.
class HeldFrames {
  constructor(pool, seqAt, size) {
    if (!LITTLE_ENDIAN) throw new IxyError('EUNSUPPORTED', 'held frames need a little-endian host');
    if (seqAt % 4 !== 2 || FRAME_AT + seqAt + 4 > pool.bufferSize) throw new IxyError('EINVAL', `a held frame's sequence number must sit at a byte offset 2 mod 4 inside the buffer, got ${seqAt}`);
    if (pool.freeCount < size) throw new IxyError('EINVAL', `holding a buffer in each of ${size} TX descriptors needs that many free in the pool, it has ${pool.freeCount}`);
    this.pool = pool;
    this.size = size;
    this.maxLength = pool.bufferSize - FRAME_AT; // the longest frame a held buffer takes
    this.ids = new Uint32Array(size); // slot t's buffer, for free()
    const table = arena.allocWords(SLOT_WORDS * size + 1);
    const skip = arena.offsetOf(table) % 2; // so that the addresses sit at even words
    for (let t = 0; t < size; t++) {
      const id = pool.alloc();
      const address = pool.physOf(id) + FRAME_AT;
      const e = skip + SLOT_WORDS * t;
      this.ids[t] = id;
      pool.buffers[id].copyWithin(FRAME_AT, 0, this.maxLength); // the frame moves to FRAME_AT (free() moves it back)
      table[e] = address % TWO_32;
      table[e + 1] = Math.floor(address / TWO_32);
      table[e + 2] = (id * pool.bufferSize + FRAME_AT + seqAt) / 4;
    }
    const buffer = pool.memory.buffer;
    const view = memory.words32;
    this.words32 = view !== undefined && view.buffer === buffer ? view : new Uint32Array(buffer, 0, buffer.byteLength / 4);
    if (view === undefined) memory.words32 = this.words32;
    this.table = table; // slot t's entry starts at arena.words[tableAt + SLOT_WORDS * t]
    this.tableAt = arena.offsetOf(table) + skip;
  }

  // Writes the descriptors of n slots from `tail` on (n at most the ring's size; the
  // queue's ring starts at ringAt, in doubles of rings.doubles), each sending its held
  // buffer as a frame of `length` bytes with command bits `command`, the k-th numbered
  // seq + k (mod 2^32). Returns the slot after the last: the queue's new tail.
  write(ringAt, tail, n, command, length, seq) {
    if (length > this.maxLength) throw new IxyError('EINVAL', `a held frame takes at most ${this.maxLength} bytes, got ${length}`);
    HALF_WORDS[0] = command | length; // 7.2.3.2.4: length and command, then PAYLEN
    HALF_WORDS[1] = length << TXD_PAYLEN_SHIFT;
    const lengthHalf = HALF[0];
    if (memory.words32 !== this.words32) memory.words32 = this.words32; // another pool's held frames wrote last
    // Two runs of slots that do not wrap: to the end of the ring, then from slot 0.
    const toEnd = this.size - tail;
    if (n < toEnd) {
      this.writeRun(ringAt, tail, n, lengthHalf, seq);
      return tail + n;
    }
    this.writeRun(ringAt, tail, toEnd, lengthHalf, seq);
    this.writeRun(ringAt, 0, n - toEnd, lengthHalf, (seq + toEnd) | 0);
    return n - toEnd;
  }

  // write() of slots t .. t + n - 1, none past the end of the ring.
  writeRun(ringAt, t, n, lengthHalf, seq) {
    const words = arena.words; // locals, so TurboFan folds them (lib/memory/arena.js)
    const doubles = arena.doubles;
    const ring = rings.doubles; // descriptor t is ring[ringAt + 2t], ring[ringAt + 2t + 1]
    const words32 = memory.words32;
    // Slot t's entry, counted in doubles (its address is doubles[e], its number's offset
    // words[2e + 2]): the address then needs no shift to reach it.
    let e = ((this.tableAt >> 1) + SLOT_DOUBLES * t) | 0; // tableAt is even
    let d = (ringAt + (t << 1)) | 0; // and its descriptor
    const end = (e + SLOT_DOUBLES * n) | 0;
    // be: the word that holds the frame's number big-endian, made from the last one by
    // adding 2^24 (the number's low byte is be's high byte) unless that byte carries (is
    // 0xff), once in 256 frames: a byte swap is one instruction in C and a dozen here. be
    // and the offsets are int32s (`| 0`): no overflow checks.
    let be = bigEndian(seq);
    for (; e !== end; e = (e + SLOT_DOUBLES) | 0) {
      words32[words[((e << 1) + 2) | 0]] = be;
      ring[d] = doubles[e]; // the frame's address
      ring[(d + 1) | 0] = lengthHalf;
      d = (d + 2) | 0;
      be = (be >>> 0) >= 0xff000000 ? bigEndian((bigEndian(be) + 1) | 0) : (be + 0x1000000) | 0;
    }
  }

  // Gives every held buffer back to its pool (the queue stopped or never started).
  free() {
    for (const id of this.ids) {
      this.pool.buffers[id].copyWithin(0, FRAME_AT); // the frame back at the buffer's start
      this.pool.free(id);
    }
  }
}

module.exports = { HeldFrames };
