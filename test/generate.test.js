'use strict';

// The library's generate(): stampFrames(), its per-packet work (what it writes into each
// frame), and what it leaves behind when it fails.
const assert = require('assert');
const { Mempool } = require('../lib/memory/mempool');
const { PacketBatch } = require('../lib/memory/batch');
const { stampFrames } = require('../lib/apps/generate');
const { SEQ_OFFSET } = require('../lib/packet');
const { DmaMemory } = require('../lib/memory/mempool');
const { freeHugepages, hugepageMappings, modelForSuite } = require('./support/helpers');

describe('stampFrames', function () {
  let pool;
  before(function () {
    pool = new Mempool({ entries: 64 });
  });
  after(function () {
    pool.close();
  });

  it('writes consecutive 32-bit sequence numbers big-endian, wrapping at 2^32, and sets the lengths', function () {
    const batch = new PacketBatch(4, pool);
    const got = pool.allocMany(batch.ids, 3);
    assert.strictEqual(got, 3);
    for (let i = 0; i < got; i++) pool.buffers[batch.ids[i]].fill(0xaa, 0, 128);
    const seq = 2 ** 32 - 2 + 2 ** 33; // a count of sent frames far past 2^32, as generate passes it
    stampFrames(batch, got, seq | 0, 100);
    const fields = [];
    for (let i = 0; i < got; i++) {
      const b = pool.buffers[batch.ids[i]];
      fields.push(Array.from(b.subarray(SEQ_OFFSET, SEQ_OFFSET + 4)));
      assert.strictEqual(batch.lengths[i], 100);
      assert.strictEqual(b[SEQ_OFFSET - 1], 0xaa, 'the byte before the field is untouched');
      assert.strictEqual(b[SEQ_OFFSET + 4], 0xaa, 'the byte after the field is untouched');
    }
    assert.deepStrictEqual(fields, [[0xff, 0xff, 0xff, 0xfe], [0xff, 0xff, 0xff, 0xff], [0, 0, 0, 0]]);
    stampFrames(batch, 2, 0x010203ff, 60);
    assert.deepStrictEqual(Array.from(pool.buffers[batch.ids[0]].subarray(SEQ_OFFSET, SEQ_OFFSET + 4)), [1, 2, 3, 0xff]);
    assert.deepStrictEqual(Array.from(pool.buffers[batch.ids[1]].subarray(SEQ_OFFSET, SEQ_OFFSET + 4)), [1, 2, 4, 0]);
    assert.strictEqual(batch.lengths[1], 60);
    pool.freeMany(batch.ids, 0, got);
  });
});

describe('generate() on the device model', function () {
  const { generate } = require('../lib/apps/generate');
  const model = modelForSuite(1);

  it('a pool that cannot be made (2 GiB of buffers) closes the device and returns its hugepages', async function () {
    // The largest pool (2^20 buffers of 2 KiB: 1,024 hugepages) must not fit: on a machine
    // with more free hugepages, hold all but 512 of them for the test's length.
    const hog = [];
    for (let spare = freeHugepages() - 512; spare > 0; spare -= 512) {
      hog.push(new DmaMemory(Math.min(spare, 512) * 2 * 1024 * 1024));
    }
    try {
      const before = hugepageMappings();
      await assert.rejects(generate(model().addresses[0], { poolEntries: 1 << 20, count: 1, out: { write() {} } }), { name: 'IxyError', code: 'ENOHUGEPAGES' });
      assert.strictEqual(hugepageMappings(), before, 'DMA memory still mapped');
    } finally {
      for (const memory of hog) memory.free();
    }
    // The model's truth: bus mastering off and no queue left enabled.
    await model().waitFor(0, (s) => !s.busMaster && !s.rxQueueActive && s.txQueuesActive === 0, 2000);
  });
});
