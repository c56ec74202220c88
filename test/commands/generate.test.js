'use strict';

// The library's generate(): the generator's per-packet work (what it writes into each
// frame), and what it leaves behind when it fails.
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const { PacketBatch } = require('../../lib/memory/batch');
const { Generator } = require('../../lib/traffic/generator');
const { SEQ_OFFSET } = require('../../lib/packet');
const { hugepageMappings, modelForSuite } = require('../support/helpers');

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
  const { generate } = require('../../lib/apps/generate');
  const model = modelForSuite(1);

  it('a pool that cannot be made (2 GiB of buffers) closes the device and returns its hugepages', async function () {
    // The largest pool (2^20 buffers of 2 KiB: 1,024 hugepages) must not fit. Rather than
    // hold the machine's free hugepages (everyone's), this process's address space is capped
    // for the test's length (RLIMIT_AS) below what the pool needs: its mmap fails with
    // ENOMEM, as it does when too few hugepages are free.
    const vmBytes = Number(/VmSize:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
    const limit = (which) => execFileSync('prlimit', ['--pid', String(process.pid), '--as', '--noheadings', '--output', which], { encoding: 'utf8' }).trim();
    const [soft, hard] = [limit('SOFT'), limit('HARD')];
    execFileSync('prlimit', ['--pid', String(process.pid), `--as=${vmBytes + 1024 ** 3}:${hard === 'unlimited' ? 'unlimited' : hard}`]);
    try {
      const before = hugepageMappings();
      await assert.rejects(generate(model().addresses[0], { poolEntries: 1 << 20, count: 1, out: { write() {} } }), { name: 'IxyError', code: 'ENOHUGEPAGES' });
      assert.strictEqual(hugepageMappings(), before, 'DMA memory still mapped');
    } finally {
      execFileSync('prlimit', ['--pid', String(process.pid), `--as=${soft}:${hard}`]);
    }
    // The model's truth: bus mastering off and no queue left enabled.
    await model().waitFor(0, (s) => !s.busMaster && !s.rxQueueActive && s.txQueuesActive === 0, 2000);
  });
});

describe('TxQueue.room(): what send() would take now', function () {
  const { openPort, standInNic, closeQueues } = require('../../lib/warm-up/stand-in');
  const layout = require('../../lib/intel/ixgbe/registers');

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
      assert.strictEqual(gen.pool.freeCount, 256 - 64, 'the ring holds one buffer per slot, no more');
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

describe('Generator.send() of the default frames: they stay on the TX ring', function () {
  const { openPort, standInNic, closeQueues } = require('../../lib/warm-up/stand-in');
  const layout = require('../../lib/intel/ixgbe/registers');

  // The frame each descriptor of slots [first, first + n) points at: its bytes, in its
  // buffer (a held frame starts 2 bytes into it, held-frames.js).
  function framesOn(port, gen, first, n) {
    const tx = port.tx;
    const size = gen.pool.bufferSize;
    const byAddress = new Map();
    for (let id = 0; id < gen.pool.entries; id++) byAddress.set(gen.pool.physOf(id), id);
    const frames = [];
    for (let k = 0; k < n; k++) {
      const t = (first + k) & tx.mask;
      const d = tx.ring.subarray(t * 4, t * 4 + 4);
      const address = d[0] + d[1] * 2 ** 32;
      const at = address % size;
      const id = byAddress.get(address - at);
      assert.strictEqual(id, tx.bufferIds[t], `slot ${t} sends its own buffer`);
      assert.strictEqual(at, 2, 'the frame starts 2 bytes into the buffer');
      const length = d[2] & 0xffff;
      assert.strictEqual(d[3] >>> 14, length, 'PAYLEN');
      assert.strictEqual(d[2], tx.command | length, 'DTALEN and the command bits');
      frames.push({ id, bytes: gen.pool.buffers[id].subarray(at, at + length) });
    }
    return frames;
  }

  it('each slot sends its one buffer again with the next sequence number, big-endian, wrapping at 2^32', function () {
    const port = openPort(layout, 64, { entries: 256 });
    const gen = new Generator({ entries: 256, size: 100, vlan: 5 });
    const batch = new PacketBatch(32);
    try {
      const tx = port.tx;
      const seqAt = gen.recipe.seqAt; // 46: after the VLAN tag
      const template = new Uint8Array(gen.pool.buffers[0].subarray(0, 100));
      gen.seq = 2 ** 32 - 70 + 2 ** 33; // a count far past 2^32; the number wraps 70 frames on
      const seen = new Map(); // slot -> buffer id
      let sent = 0;
      for (let round = 0; sent < 135; round++) {
        assert.ok(round < 20, 'the ring keeps taking frames');
        const first = tx.tail;
        const n = gen.send(tx, batch, 20 + (round % 7));
        assert.ok(n > 0 && n <= 20 + (round % 7));
        for (const [k, { id, bytes }] of framesOn(port, gen, first, n).entries()) {
          const slot = (first + k) & tx.mask;
          if (seen.has(slot)) assert.strictEqual(id, seen.get(slot), `slot ${slot} kept its buffer`);
          seen.set(slot, id);
          const s = (2 ** 32 - 70 + sent + k) % 2 ** 32;
          const expected = new Uint8Array(template);
          expected.set([s >>> 24, (s >>> 16) & 0xff, (s >>> 8) & 0xff, s & 0xff], seqAt);
          assert.deepStrictEqual(bytes, expected, `frame ${sent + k}: only the sequence number differs`);
        }
        sent += n;
        standInNic(port, 60, 0);
      }
      assert.strictEqual(new Set(seen.values()).size, 64, 'one buffer per slot, each its own');
      assert.strictEqual(gen.pool.freeCount, 256 - 64);
      const other = new PacketBatch(1, port.pool);
      other.count = port.pool.allocMany(other.ids, 1);
      other.lengths[0] = 60;
      assert.throws(() => tx.send(other), { code: 'EBUSY' }, 'other buffers cannot take the held slots');
      other.freeFrom(0);
      closeQueues(port);
      assert.strictEqual(gen.pool.freeCount, 256, 'closing the queue gives every held buffer back');
      for (const id of seen.values()) {
        const bytes = gen.pool.buffers[id].subarray(0, 100);
        assert.deepStrictEqual(bytes.subarray(0, seqAt), template.subarray(0, seqAt), `buffer ${id}: its frame back at its start`);
      }
    } finally {
      closeQueues(port);
      port.pool.close();
      gen.close();
    }
  });

  it('numbers run on across 2^31 (where a 32-bit signed counter wraps)', function () {
    const port = openPort(layout, 64, { entries: 256 });
    const gen = new Generator({ entries: 256 });
    const batch = new PacketBatch(32);
    try {
      gen.seq = 2 ** 31 - 5;
      const n = gen.send(port.tx, batch, 10);
      assert.strictEqual(n, 10);
      const seqAt = gen.recipe.seqAt;
      const numbers = framesOn(port, gen, 0, n).map(({ bytes }) => bytes.subarray(seqAt, seqAt + 4).reduce((v, b) => v * 256 + b, 0));
      assert.deepStrictEqual(numbers, Array.from({ length: 10 }, (_, k) => 2 ** 31 - 5 + k));
      assert.strictEqual(gen.seq, 2 ** 31 + 5);
    } finally {
      closeQueues(port);
      port.pool.close();
      gen.close();
    }
  });

  it('two generators at once, each holding its own pool on its own queue: each frame carries its own numbers', function () {
    const ports = [openPort(layout, 64, { entries: 256 }), openPort(layout, 64, { entries: 256 })];
    const gens = [new Generator({ entries: 256 }), new Generator({ entries: 256 })];
    const batch = new PacketBatch(32);
    try {
      gens[1].seq = 1000000;
      const seqAt = gens[0].recipe.seqAt;
      for (let round = 0; round < 4; round++) {
        for (const k of [0, 1]) {
          const first = ports[k].tx.tail;
          const from = gens[k].seq;
          const n = gens[k].send(ports[k].tx, batch, 10);
          assert.strictEqual(n, 10);
          const numbers = framesOn(ports[k], gens[k], first, n).map(({ bytes }) => bytes.subarray(seqAt, seqAt + 4).reduce((v, b) => v * 256 + b, 0));
          assert.deepStrictEqual(numbers, Array.from({ length: n }, (_, j) => from + j), `generator ${k}, round ${round}`);
          standInNic(ports[k], 60, 0);
        }
      }
    } finally {
      ports.forEach(closeQueues);
      for (const port of ports) port.pool.close();
      gens.forEach((g) => g.close());
    }
  });

  it('reset() (after a hang) gives the held buffers back, and the next send() holds them again', function () {
    const port = openPort(layout, 64, { entries: 256 });
    const gen = new Generator({ entries: 256 });
    const batch = new PacketBatch(32);
    try {
      assert.strictEqual(gen.send(port.tx, batch, 32), 32);
      assert.strictEqual(port.tx.reset(), 32, 'the 32 frames the NIC never sent are dropped');
      assert.strictEqual(gen.pool.freeCount, 256);
      port.txHead = 0; // the stand-in NIC follows the reset ring
      assert.strictEqual(gen.send(port.tx, batch, 32), 32);
      assert.strictEqual(gen.pool.freeCount, 256 - 64);
      assert.strictEqual(gen.seq, 64);
    } finally {
      closeQueues(port);
      port.pool.close();
      gen.close();
    }
  });

  it('a queue holds buffers only from a pool with one free for each slot, and only while nothing is in flight', function () {
    const port = openPort(layout, 64, { entries: 256 });
    const small = new Generator({ entries: 63 });
    const gen = new Generator({ entries: 256 });
    const batch = new PacketBatch(32);
    try {
      assert.throws(() => small.send(port.tx, batch, 8), { code: 'EINVAL' });
      assert.strictEqual(small.pool.freeCount, 63, 'nothing taken');
      const free = port.pool.freeCount;
      port.pool.allocMany(batch.ids, 4);
      batch.count = 4;
      batch.pool = port.pool;
      for (let i = 0; i < 4; i++) batch.lengths[i] = 60;
      assert.strictEqual(port.tx.send(batch), 4);
      assert.throws(() => gen.send(port.tx, batch, 8), { code: 'EBUSY' });
      standInNic(port, 60, 0); // the NIC sends those 4: their buffers go home, the slots are free
      assert.strictEqual(gen.send(port.tx, batch, 8), 8);
      assert.strictEqual(port.pool.freeCount, free, 'the frames sent before went back to their pool');
    } finally {
      closeQueues(port);
      port.pool.close();
      small.close();
      gen.close();
    }
  });
});
