'use strict';

// A batch of packets moving between an application and a queue: buffer ids, their
// lengths and a count, in arrays made once and reused for every call. All buffers of a
// batch belong to one mempool (`pool`), so freeing never needs a per-packet lookup.
// ids, lengths and status are spans of the index arena (arena.js): the queues read and
// write them at their offsets idsAt, lengthsAt and statusAt.
const { IxyError, shown } = require('../host/errors');
const { checkOptionNames } = require('../host/option-names');
const arena = require('./arena');
const { Mempool } = require('./mempool');

// What checksumOf(i) reports, bit by bit. Neither bit of a pair: not checked (not IPv4,
// not TCP/UDP, a UDP frame sent without a checksum, or a NIC that does not check).
const CHECKSUM_IP_GOOD = 1;
const CHECKSUM_IP_BAD = 2;
const CHECKSUM_L4_GOOD = 4;
const CHECKSUM_L4_BAD = 8;

const MAX_BATCH = 4096;

class PacketBatch {
  // status: keep each received frame's descriptor status word, for checksumOf(). Off by
  // default: it costs a pass over the frames in every receive.
  // hashes: keep each received frame's RSS hash (see `hashes` below).
  constructor(capacity = 32, pool = null, options = {}) {
    checkBatchSize(capacity);
    if (pool !== null && !(pool instanceof Mempool)) {
      throw new IxyError('EINVAL', `a batch's pool must be a Mempool or null, got ${shown(pool)}`);
    }
    checkOptionNames('new PacketBatch()', options, ['status', 'hashes']);
    const status = Boolean(options && options.status);
    const hashes = Boolean(options && options.hashes);
    this.capacity = capacity;
    this.ids = arena.allocWords(capacity);
    this.lengths = arena.allocWords(capacity);
    // With `status`: per received frame, the status word of its RX descriptor (extended
    // status and errors, as the NIC wrote it), decoded by the queue that filled the batch
    // (filledBy). Read it with checksumOf(). Without: null, and statusAt -1.
    this.status = status ? arena.allocWords(capacity) : null;
    this.idsAt = arena.offsetOf(this.ids);
    this.lengthsAt = arena.offsetOf(this.lengths);
    this.statusAt = status ? arena.offsetOf(this.status) : -1;
    // With `hashes`: per received frame, the RSS hash the NIC computed (82599 7.1.2.8:
    // Toeplitz over the IPv4 addresses and TCP/UDP ports), 0 for frames it does not hash
    // and on a device opened with one RX queue (no RSS). Without: null, and hashesAt -1.
    this.hashes = hashes ? arena.allocWords(capacity) : null;
    this.hashesAt = hashes ? arena.offsetOf(this.hashes) : -1;
    this.filledBy = null; // the RX queue whose status words `status` holds, if it has any
    this.count = 0;
    // How many of the first packets the last Device.txBatch() handed to the NIC: those are
    // the driver's now, ids[sent..count) are still the caller's (see release()).
    this.sent = 0;
    this.pool = pool;
  }

  // The bytes of packet i (a view over the whole buffer; the frame is the first lengths[i]).
  data(i) {
    return this.pool.buffers[this.ids[i]];
  }

  // Where packet i starts in its pool's one view over every buffer: its bytes are
  // pool.bytes[frameAt(i) ...]. For loops over many packets, which then read one view.
  frameAt(i) {
    return arena.words[this.idsAt + i] << this.pool.bufferShift;
  }

  // Reads byte `at` of each of the first n frames and writes it back (`|= 0`): its first
  // cache line comes to this core, dirty, as when an application edits a header. Four
  // frames per trip: the pool's view is checked (map, length, data pointer) once per trip.
  // pool: the batch's; a caller that has it from a constant passes it (forward.js: its RX
  // queue's), and TurboFan then folds the view's length and data pointer.
  touchFrames(n, at, pool = this.pool) {
    const words = arena.words; // a local, so TurboFan folds it (see arena.js)
    const idsAt = this.idsAt; // ids[i] is words[idsAt + i]
    const bytes = pool.bytes; // the whole pool: buffer id k starts at k * size
    const size = 1 << pool.bufferShift; // not bufferSize: a UMEM's is its chunk less the headroom
    // Offsets as int32 sums (`| 0`; all below 2^31): no overflow checks; Math.imul: one
    // multiply, where a shift by a variable count needs its count moved to a register first.
    let i = 0;
    for (; ((i + 4) | 0) <= n; i = (i + 4) | 0) {
      const j = (idsAt + i) | 0;
      const a = (Math.imul(words[j], size) + at) | 0;
      const b = (Math.imul(words[(j + 1) | 0], size) + at) | 0;
      const c = (Math.imul(words[(j + 2) | 0], size) + at) | 0;
      const d = (Math.imul(words[(j + 3) | 0], size) + at) | 0;
      bytes[a] |= 0;
      bytes[b] |= 0;
      bytes[c] |= 0;
      bytes[d] |= 0;
    }
    for (; i < n; i = (i + 1) | 0) bytes[(Math.imul(words[(idsAt + i) | 0], size) + at) | 0] |= 0;
  }

  // Keeps packets [from, count), moved to the front with their status words and hashes;
  // those before are no longer the batch's.
  keepFrom(from) {
    const count = this.count;
    if (from > 0 && from < count) {
      const words = arena.words;
      words.copyWithin(this.idsAt, this.idsAt + from, this.idsAt + count);
      words.copyWithin(this.lengthsAt, this.lengthsAt + from, this.lengthsAt + count);
      if (this.statusAt >= 0) words.copyWithin(this.statusAt, this.statusAt + from, this.statusAt + count);
      if (this.hashesAt >= 0) words.copyWithin(this.hashesAt, this.hashesAt + from, this.hashesAt + count);
    }
    this.count = from < count ? count - from : 0;
  }

  // The NIC's verdict on received frame i's checksums: CHECKSUM_* bits (0: nothing
  // checked). Frames with wrong checksums are delivered like any other: this is how to
  // tell them apart. Per frame and cold: nothing in receive() decodes it.
  checksumOf(i) {
    if (this.status === null) {
      throw new IxyError('EINVAL', 'checksumOf() needs a batch that keeps status words: new PacketBatch(n, null, { status: true })');
    }
    const queue = this.filledBy;
    if (queue === null || !Number.isInteger(i) || i < 0 || i >= this.count) return 0;
    return queue.checksumFlags(this.status[i], this.data(i), this.lengths[i]);
  }

  // Throws EINVAL, before anything is sent, unless every frame of the batch is one the NIC
  // may be given: count within the capacity, each id a buffer of the batch's pool (any
  // other id makes the NIC read memory outside it) and each length within [minLength,
  // the buffer size] (the NIC would read past the buffer, or refuse the frame).
  checkForSend(minLength) {
    const count = this.count;
    if (count > this.capacity) throw unsendable(`batch count ${count} is above its capacity ${this.capacity}`);
    const pool = this.pool;
    // A batch that never held frames (rxBatch() sets the pool, even when it takes none).
    if (pool === null) throw unsendable(`the batch has no pool: fill it with rxBatch(), or from a Mempool (pool.allocMany(batch.ids, n), then batch.pool = pool and its lengths)`);
    if (count === 0) return;
    // The arena at the spans' offsets, as the queues read them; one unsigned compare
    // covers both ends of the length range.
    const words = arena.words;
    const idsAt = this.idsAt;
    const lengthsAt = this.lengthsAt;
    const entries = pool.entries;
    const span = pool.bufferSize - minLength;
    for (let k = 0; k < count; k++) {
      if (words[idsAt + k] >= entries || ((words[lengthsAt + k] - minLength) | 0) >>> 0 > span) {
        const id = words[idsAt + k];
        if (id >= entries) {
          throw unsendable(`frame ${k} of the batch is buffer ${id}, which is not in the batch's pool (0..${entries - 1})`);
        }
        throw unsendable(`frame ${k} of the batch is ${words[lengthsAt + k]} bytes; a frame must be ${minLength}..${pool.bufferSize} bytes (the buffer size)`);
      }
    }
  }

  // Keeps, in order, the frames keep(bytes, length) accepts (a compileFilter() predicate)
  // and gives the others back to the pool at once; returns how many are left. For a batch
  // just received: nothing of it has been sent.
  keepIf(keep) {
    const { ids, lengths, status, hashes } = this;
    const pool = this.pool;
    const buffers = pool.buffers;
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      const id = ids[i];
      if (!keep(buffers[id], lengths[i])) {
        pool.free(id);
      } else {
        if (kept !== i) {
          ids[kept] = id;
          lengths[kept] = lengths[i];
          if (status !== null) status[kept] = status[i];
          if (hashes !== null) hashes[kept] = hashes[i];
        }
        kept++;
      }
    }
    this.count = kept;
    return kept;
  }

  // Gives packets [from, count) back to their pool and empties the batch.
  freeFrom(from = 0) {
    if (from < this.count) this.pool.freeMany(this.ids, from, this.count);
    this.count = 0;
  }

  // Gives back every buffer the batch still owns, ids[sent..count), and empties it: what
  // to call when done with a received batch, whether or not part of it was sent.
  release() {
    this.freeFrom(this.sent);
    this.sent = 0;
  }
}

// EBATCH unless `capacity` is a batch size PacketBatch takes; for code that checks one
// before it makes the batch (elsewhere: a worker thread's).
function checkBatchSize(capacity) {
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_BATCH) {
    throw new IxyError('EBATCH', `batch size must be 1..${MAX_BATCH}, got ${shown(capacity)}`);
  }
}

function unsendable(text) {
  return new IxyError('EINVAL', `${text}: nothing was sent`);
}

module.exports = { PacketBatch, checkBatchSize, CHECKSUM_IP_GOOD, CHECKSUM_IP_BAD, CHECKSUM_L4_GOOD, CHECKSUM_L4_BAD };
