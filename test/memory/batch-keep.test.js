'use strict';

// PacketBatch's in-place edits (keepIf, keepFrom) keep every per-frame array in step: a
// frame's id, length, status word and RSS hash stay at the same index after the edit.
const assert = require('assert');
const ixy = require('../../lib');

describe('PacketBatch edits keep per-frame arrays together', function () {
  let pool;
  let batch;

  beforeEach(function () {
    pool = new ixy.Mempool({ entries: 8 });
    batch = new ixy.PacketBatch(6, pool, { status: true, hashes: true });
    // Frame i: length 60 + i, status 0x100 + i, hash 0x1000 + i.
    batch.count = pool.allocMany(batch.ids, 6);
    for (let i = 0; i < batch.count; i++) {
      batch.lengths[i] = 60 + i;
      batch.status[i] = 0x100 + i;
      batch.hashes[i] = 0x1000 + i;
    }
  });

  afterEach(function () {
    batch.release();
    assert.strictEqual(pool.freeCount, pool.entries, 'every buffer came home');
    pool.close();
  });

  function frames() {
    const out = [];
    for (let i = 0; i < batch.count; i++) out.push([batch.lengths[i] - 60, batch.status[i] - 0x100, batch.hashes[i] - 0x1000]);
    return out;
  }

  it('keepIf() moves each kept frame\'s status word and hash with it', function () {
    assert.strictEqual(batch.keepIf((bytes, length) => length % 2 === 1), 3);
    assert.deepStrictEqual(frames(), [[1, 1, 1], [3, 3, 3], [5, 5, 5]]);
  });

  it('keepFrom() moves each kept frame\'s status word and hash with it', function () {
    pool.freeMany(batch.ids, 0, 4); // what keepFrom() drops is no longer the batch's
    batch.keepFrom(4);
    assert.deepStrictEqual(frames(), [[4, 4, 4], [5, 5, 5]]);
  });
});
