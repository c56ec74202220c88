'use strict';

// Held frames: a TX queue mode for a packet generator whose frames differ only in a 32-bit
// big-endian sequence number. Each slot t of the ring keeps one buffer for good
// (bufferIds[t]) and sends it again and again: sendHeld() writes the next number into the
// buffers of the next free slots and hands those slots to the NIC. No buffer id moves
// between pool and ring, and reclaim() frees nothing (TxQueue.reclaim()): a slot is free
// again once the NIC reports its descriptor done, as for any frame. The queue takes the
// buffers with holdBuffers() and gives them back when it is closed or reset (freeHeld()).
// Sections cited are the 82599's.
const rings = require('./rings');
const arena = require('../memory/arena');
const { IxyError } = require('../host/errors');
const { PACKETS, BYTES } = require('../device/device');

const TWO_32 = 2 ** 32;
const { TXD_PAYLEN_SHIFT, writeTail } = rings;

// The sequence number is written as two aligned 32-bit words, two stores instead of four
// byte stores: it sits at a byte offset seqAt that is 2 mod 4 (behind the 14-byte Ethernet
// header and whole 4-byte IPv4 and UDP or TCP words), so bytes seqAt - 2 .. seqAt + 5 are
// two words of the buffer. The two bytes either side of the number are the frame's own
// and never change (`before`, `after`, as they sit in those words). Typed arrays use the
// host's byte order: little-endian here (x64, arm64), checked by holdBuffers().
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

// A descriptor is written as two 64-bit halves, two stores instead of four, as C does:
// each half is made as two 32-bit words and copied as the double with those bits
// (Float64Array views of the same memory: arena.doubles, rings.doubles). A copy keeps
// every bit; none of these patterns is a NaN (bits 62..52, a double's exponent, are
// never all ones: an address is below 2^52, and PAYLEN, a frame length below 2^16, sits
// at bit 46).
const HALF = new Float64Array(1);
const HALF_WORDS = new Uint32Array(HALF.buffer);

// Gives each slot t of queue's ring a buffer of pool to keep, bufferIds[t]; each holds the
// same frame, with its sequence number at byte seqAt. Only on a queue with nothing in
// flight; until it is closed or reset, TxQueue.send() refuses other buffers (tagOf()).
function holdBuffers(queue, pool, seqAt) {
  if (!LITTLE_ENDIAN) throw new IxyError('EUNSUPPORTED', 'held frames need a little-endian host');
  if (seqAt % 4 !== 2 || seqAt + 6 > pool.bufferSize) throw new IxyError('EINVAL', `a held frame's sequence number must sit at a byte offset 2 mod 4 inside the buffer, got ${seqAt}`);
  queue.reclaim();
  if (queue.tail !== queue.clean && !queue.drained()) throw new IxyError('EBUSY', 'a TX queue can hold buffers only while it has nothing in flight');
  if (pool.freeCount < queue.size) throw new IxyError('EINVAL', `holding a buffer in each of ${queue.size} TX descriptors needs that many free in the pool, it has ${pool.freeCount}`);
  queue.freeRing(); // buffers of frames the NIC has sent
  queue.pools.fill(null);
  queue.poolCount = 0;
  queue.lastPool = null;
  const numbers = arena.allocWords(queue.size);
  const addresses = arena.allocWords(2 * queue.size + 1);
  const skip = arena.offsetOf(addresses) % 2; // so that the table starts at an even word
  for (let t = 0; t < queue.size; t++) {
    const id = pool.alloc();
    const address = pool.physOf(id);
    queue.bufferIds[t] = id;
    numbers[t] = (id * pool.bufferSize + seqAt - 2) / 4;
    addresses[skip + 2 * t] = address % TWO_32;
    addresses[skip + 2 * t + 1] = Math.floor(address / TWO_32);
  }
  const frame = pool.buffers[queue.bufferIds[0]];
  const memory = pool.memory.buffer;
  if (pool.rings) pool.rings.add(queue); // Mempool.close() asks it (ringBuffersOf)
  queue.held = {
    pool,
    addresses, // slot t's buffer address: arena.doubles[addressesAt + t]
    addressesAt: (arena.offsetOf(addresses) + skip) / 2,
    words32: new Uint32Array(memory, 0, memory.byteLength / 4), // the pool's buffers
    numbers, // slot t's number is in words32[m] and words32[m + 1], m = words[numbersAt + t]
    numbersAt: arena.offsetOf(numbers),
    before: frame[seqAt - 2] | (frame[seqAt - 1] << 8),
    after: (frame[seqAt + 4] << 16) | (frame[seqAt + 5] << 24),
  };
}

// Sends the buffers of the next `want` slots again, or of as many as are free (reclaiming
// first, as TxQueue.send() does), each a frame of `length` bytes, the k-th with sequence
// number seq + k (mod 2^32). Returns how many it sent.
function sendHeld(queue, want, length, seq) {
  const mask = queue.mask;
  if (((queue.tail - queue.clean) & mask) >= queue.reclaimAt) queue.reclaim();
  const room = mask - ((queue.tail - queue.clean) & mask); // one slot stays empty
  const n = want < room ? want : room;
  const words = arena.words; // locals, so TurboFan folds them (lib/memory/arena.js)
  const doubles = arena.doubles;
  const ring = rings.doubles; // descriptor t is ring[ringAt + 2t], ring[ringAt + 2t + 1]
  const { words32, numbersAt, before, after, addressesAt } = queue.held;
  const ringAt = queue.ringAt / 2;
  HALF_WORDS[0] = queue.command | length; // 7.2.3.2.4: length and command, then PAYLEN
  HALF_WORDS[1] = length << TXD_PAYLEN_SHIFT;
  const lengthHalf = HALF[0];
  let t = queue.tail;
  const end = (seq + n) | 0;
  for (let s = seq; s !== end; s = (s + 1) | 0) { // s: the frame's number, an int32
    const at = words[numbersAt + t];
    words32[at] = before | ((s >>> 24) << 16) | ((s >>> 16) << 24);
    words32[at + 1] = ((s >>> 8) & 0xff) | ((s & 0xff) << 8) | after;
    const d = ringAt + (t << 1);
    ring[d] = doubles[addressesAt + t]; // the buffer's address
    ring[d + 1] = lengthHalf;
    t = (t + 1) & mask;
  }
  if (n > 0) {
    queue.tail = t;
    writeTail(queue.regs, queue.tailIndex, t); // after the descriptors and frames, seen after them
    const totals = queue.totals;
    totals[PACKETS] += n;
    totals[BYTES] += n * length;
  }
  return n;
}

// Gives every held buffer back to its pool (the queue stopped or never started).
function freeHeld(queue) {
  const pool = queue.held.pool;
  for (let t = 0; t < queue.size; t++) pool.free(queue.bufferIds[t]);
  queue.held = null;
  queue.clean = queue.tail;
}

module.exports = { holdBuffers, sendHeld, freeHeld };
