'use strict';

// The TX hang watchdog (TxQueue.hung(), reset()) against a NIC played in plain memory: a
// queue hangs when the NIC completes none of its pending frames over whole intervals, and
// never because TDH happens to read the same at two looks while frames keep leaving (with
// a full ring it cycles through few positions). A reset drops exactly the frames the NIC
// did not complete.
const assert = require('assert');
const R = require('../../lib/intel/ixgbe/registers');
const { TXD_STAT_DD } = require('../../lib/intel/rings');
const { TxQueue } = require('../../lib/intel/tx-queue');
const { Mempool } = require('../../lib/memory/mempool');
const { PacketBatch } = require('../../lib/memory/batch');
const { demo } = require('../../lib/apps/demo');

const RING = 64;

// A started TX queue on registers in plain memory, a pool, and a NIC that completes
// descriptors from its own head (DD written back, 7.2.3.5) and shows TDH as `head` says.
function setUp() {
  const regs = new Uint32Array(0x80000 / 4);
  const pool = new Mempool({ entries: 512 });
  const tx = new TxQueue(regs, R, 0, RING);
  tx.start();
  const batch = new PacketBatch(32, pool);
  const nic = { head: 0 };
  // Completes up to n descriptors the driver has queued.
  nic.complete = (n) => {
    for (let k = 0; k < n && nic.head !== tx.tail; k++) {
      tx.ring[(nic.head << 2) + 3] = TXD_STAT_DD;
      nic.head = (nic.head + 1) & (RING - 1);
    }
  };
  // What a forwarder does between two looks: fills the ring as far as it takes frames.
  const fill = () => {
    for (;;) {
      batch.count = pool.allocMany(batch.ids, 32);
      for (let i = 0; i < batch.count; i++) batch.lengths[i] = 60;
      const sent = tx.send(batch);
      if (sent < batch.count) {
        batch.freeFrom(sent);
        return;
      }
    }
  };
  const close = () => {
    tx.close();
    assert.strictEqual(pool.freeCount, 512, 'every buffer went home');
    pool.close();
  };
  return { regs, tx, nic, fill, close };
}

describe('TX hang watchdog', function () {
  it('a full ring whose TDH reads the same at every look while frames keep leaving is not hung', () => {
    const { regs, tx, nic, fill, close } = setUp();
    try {
      fill();
      for (let look = 0; look < 10; look++) {
        nic.complete(40); // frames leave between two looks...
        fill();
        regs[tx.headIndex] = 5; // ...and the head happens to be where it was
        assert.notStrictEqual(tx.tail, 5);
        assert.strictEqual(tx.hung(), false, `look ${look}: completions went on`);
      }
    } finally {
      close();
    }
  });

  it('hangs after two whole intervals without a completion, and a reset drops exactly the frames not completed', () => {
    const { regs, tx, nic, fill, close } = setUp();
    try {
      fill();
      nic.complete(20);
      regs[tx.headIndex] = 20;
      assert.strictEqual(tx.hung(), false, 'the first look');
      assert.strictEqual(tx.hung(), false, 'one interval without progress is not yet a hang');
      assert.strictEqual(tx.hung(), true, 'the second is');
      const sentBefore = tx.packets;
      const pending = tx.pending();
      assert.strictEqual(pending, RING - 1 - 20);
      assert.strictEqual(tx.reset(), pending);
      assert.strictEqual(tx.dropped, pending);
      assert.strictEqual(tx.packets, sentBefore - pending, 'what the NIC completed stays counted as sent');
      assert.strictEqual(tx.packets, 20);
    } finally {
      close();
    }
  });

  it('a queue with nothing pending, or whose NIC fetched every descriptor, is not hung', () => {
    const { regs, tx, nic, fill, close } = setUp();
    try {
      for (let look = 0; look < 4; look++) assert.strictEqual(tx.hung(), false, 'an empty ring');
      fill();
      nic.complete(RING);
      for (let look = 0; look < 4; look++) assert.strictEqual(tx.hung(), false, 'everything completed');
      fill();
      regs[tx.headIndex] = tx.tail; // fetched, not yet written back (WTHRESH)
      for (let look = 0; look < 4; look++) assert.strictEqual(tx.hung(), false, 'everything fetched');
    } finally {
      close();
    }
  });

  // Issue 46, 1: `ixy forward` at full load (both sources fill every free RX descriptor, so
  // both TX rings stay full) for some seconds: no reset, and what the driver says it sent
  // is what the model took from each TX ring.
  it('a full-load forward on the model: no reset, and the driver\'s TX equals the model\'s', async function () {
    this.timeout(60000);
    let text = '';
    const out = { write: (s) => { text += s; return true; } };
    const { stats, model } = await demo({ seconds: 8, out });
    assert.doesNotMatch(text, /hung/, text);
    for (const port of model) {
      const driver = stats[port.address];
      assert.ok(port.txFrames > 100000, `full load: ${port.txFrames} frames`);
      assert.strictEqual(driver.txPackets, port.txFrames, `${port.address}: the driver's TX is the model's`);
      assert.strictEqual(driver.txUnsent, 0);
    }
  });
});
