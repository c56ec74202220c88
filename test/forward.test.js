'use strict';

// forwardBatch(), the step of `ixy forward`, with stand-in queues: what it does to the
// frames between receive and send, and what it does with frames the TX ring refuses.
const assert = require('assert');
const { Mempool } = require('../lib/mempool');
const { PacketBatch } = require('../lib/batch');
const { forwardBatch } = require('../lib/apps/forward');

// An RX queue that "receives" the given buffer ids, and a TX queue that takes `room` frames.
function standIns(pool, ids, room) {
  const rx = {
    receive(batch) {
      for (let i = 0; i < ids.length; i++) {
        batch.ids[i] = ids[i];
        batch.lengths[i] = 60;
      }
      batch.count = ids.length;
      batch.pool = pool;
      return ids.length;
    },
  };
  const tx = {
    sent: [],
    send(batch) {
      const n = Math.min(room, batch.count);
      for (let i = 0; i < n; i++) this.sent.push(batch.ids[i]);
      return n;
    },
  };
  return { rx, tx };
}

describe('forwardBatch', function () {
  let pool;
  before(function () {
    pool = new Mempool({ entries: 64 });
  });
  after(function () {
    pool.close();
  });

  // 1..9 frames: the four-at-a-time loop, its remainder, and both together.
  for (let n = 1; n <= 9; n++) {
    it(`adds 1 to byte 1 of each of ${n} received frames and nothing else`, function () {
      const ids = [];
      for (let i = 0; i < n; i++) ids.push(pool.alloc());
      for (const id of ids) pool.buffers[id].fill(7, 0, 64);
      const { rx, tx } = standIns(pool, ids, n);
      const dropped = forwardBatch(rx, tx, new PacketBatch(32));
      assert.strictEqual(dropped, 0);
      assert.deepStrictEqual(tx.sent, ids);
      for (const id of ids) {
        const b = pool.buffers[id];
        assert.deepStrictEqual([b[0], b[1], b[2], b[63]], [7, 8, 7, 7], `buffer ${id}`);
        pool.free(id);
      }
    });
  }

  it('frees what the TX ring did not take and says how many', function () {
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(pool.alloc());
    const before = pool.freeCount;
    const { rx, tx } = standIns(pool, ids, 4);
    assert.strictEqual(forwardBatch(rx, tx, new PacketBatch(32)), 2);
    assert.deepStrictEqual(tx.sent, ids.slice(0, 4));
    assert.strictEqual(pool.freeCount, before + 2, 'the two refused buffers are back in the pool');
    for (const id of tx.sent) pool.free(id);
  });
});
