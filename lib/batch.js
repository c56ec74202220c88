'use strict';

// A batch of packets moving between an application and a queue: buffer ids, their
// lengths and a count, in arrays made once and reused for every call. All buffers of a
// batch belong to one mempool (`pool`), so freeing never needs a per-packet lookup.
const { IxyError } = require('./errors');

const MAX_BATCH = 4096;

class PacketBatch {
  constructor(capacity = 32, pool = null) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_BATCH) {
      throw new IxyError('EBATCH', `batch size must be 1..${MAX_BATCH}, got ${capacity}`);
    }
    this.capacity = capacity;
    this.ids = new Uint32Array(capacity);
    this.lengths = new Uint32Array(capacity);
    this.count = 0;
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
}

module.exports = { PacketBatch, MAX_BATCH };
