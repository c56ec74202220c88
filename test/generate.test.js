'use strict';

// The library's generate(): the generator's per-packet work (what it writes into each
// frame), and what it leaves behind when it fails.
const assert = require('assert');
const { PacketBatch } = require('../lib/memory/batch');
const { Generator } = require('../lib/traffic/generator');
const { SEQ_OFFSET } = require('../lib/packet');
const { DmaMemory } = require('../lib/memory/mempool');
const { freeHugepages, hugepageMappings, modelForSuite } = require('./support/helpers');

describe('Generator.fill (default frames: only the sequence number changes)', function () {
  let gen;
  before(function () {
    gen = new Generator({ entries: 64, size: 100 });
  });
  after(function () {
    gen.close();
  });

  it('writes consecutive 32-bit sequence numbers big-endian, wrapping at 2^32, and sets the lengths', function () {
    const pool = gen.pool;
    const batch = new PacketBatch(4);
    gen.seq = 2 ** 32 - 2 + 2 ** 33; // a count of sent frames far past 2^32
    const got = gen.fill(batch, 3);
    assert.strictEqual(got, 3);
    const fields = [];
    for (let i = 0; i < got; i++) {
      const b = pool.buffers[batch.ids[i]];
      fields.push(Array.from(b.subarray(SEQ_OFFSET, SEQ_OFFSET + 4)));
      assert.strictEqual(batch.lengths[i], 100);
      assert.strictEqual(b[SEQ_OFFSET - 1], 0, 'the byte before the field (UDP checksum) is untouched');
      assert.strictEqual(b[SEQ_OFFSET + 4], (SEQ_OFFSET + 4) & 0xff, 'the byte after the field is untouched');
    }
    assert.deepStrictEqual(fields, [[0xff, 0xff, 0xff, 0xfe], [0xff, 0xff, 0xff, 0xff], [0, 0, 0, 0]]);
    batch.freeFrom(0);
    gen.seq = 0x010203ff;
    gen.fill(batch, 2);
    assert.deepStrictEqual(Array.from(pool.buffers[batch.ids[0]].subarray(SEQ_OFFSET, SEQ_OFFSET + 4)), [1, 2, 3, 0xff]);
    assert.deepStrictEqual(Array.from(pool.buffers[batch.ids[1]].subarray(SEQ_OFFSET, SEQ_OFFSET + 4)), [1, 2, 4, 0]);
    batch.freeFrom(0);
    assert.strictEqual(pool.freeCount, 64);
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

describe('TxQueue.room(): what send() would take now', function () {
  const { openPort, standInNic, closeQueues } = require('../lib/warm-up/stand-in');
  const layout = require('../lib/intel/ixgbe/registers');

  it('is the ring less one on an empty ring, 0 on a full one, and counts what the NIC completed (reclaiming first)', function () {
    const port = openPort(layout, 64, { entries: 256 });
    const gen = new Generator({ entries: 256 });
    const batch = new PacketBatch(32);
    try {
      const tx = port.tx;
      assert.strictEqual(tx.room(), 63);
      assert.strictEqual(gen.send(tx, batch, 32), 32);
      assert.strictEqual(gen.send(tx, batch, 32), 31, 'one slot stays empty');
      assert.strictEqual(tx.room(), 0);
      assert.strictEqual(gen.send(tx, batch, 32), 0);
      assert.strictEqual(gen.pool.freeCount, 256 - 63, 'nothing stamped for a full ring stays taken');
      standInNic(port, 60, 0); // the NIC sends all 63
      assert.strictEqual(tx.room(), 32, 'one group of 32 reclaimed (the rest waits for its group)');
      assert.strictEqual(gen.seq, 63);
    } finally {
      closeQueues(port);
      port.pool.close();
      gen.close();
    }
  });
});
