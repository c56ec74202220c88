'use strict';

// A batch of packets moving between an application and a queue: buffer ids, their
// lengths and a count, in arrays made once and reused for every call. All buffers of a
// batch belong to one mempool (`pool`), so freeing never needs a per-packet lookup.
// ids and lengths are spans of the index arena (arena.js): the queues read and write them
// at their offsets idsAt and lengthsAt.
const { IxyError } = require('./errors');
const { allocWords, offsetOf } = require('./arena');

const MAX_BATCH = 4096;

class PacketBatch {
  constructor(capacity = 32, pool = null) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_BATCH) {
      throw new IxyError('EBATCH', `batch size must be 1..${MAX_BATCH}, got ${capacity}`);
    }
    this.capacity = capacity;
    this.ids = allocWords(capacity);
    this.lengths = allocWords(capacity);
    this.idsAt = offsetOf(this.ids);
    this.lengthsAt = offsetOf(this.lengths);
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

module.exports = { PacketBatch, MAX_BATCH };
