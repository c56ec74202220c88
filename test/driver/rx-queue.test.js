'use strict';

// The RX queue against a stand-in NIC in plain memory, for what the device model never
// does: frames with errors, and an application that holds batches of any size while it
// receives more. Checked: no buffer is lost or owned twice, and the NIC is never given a
// descriptor without a buffer.
const assert = require('assert');
const R = require('../../lib/intel/ixgbe/registers');
const D = require('../../lib/intel/rings');
const { RxQueue } = require('../../lib/intel/rx-queue');
const { Mempool } = require('../../lib/memory/mempool');
const {
  PacketBatch, CHECKSUM_IP_GOOD, CHECKSUM_IP_BAD, CHECKSUM_L4_GOOD, CHECKSUM_L4_BAD,
} = require('../../lib/memory/batch');
const { writeSeq, readSeq } = require('../../lib/packet');

const GOOD = D.RXD_STAT_DD | D.RXD_STAT_EOP;
const RX_ERROR = R.RXD_ERR_RXE; // a MAC error (7.1.6.2)

// An RX queue of `size` descriptors on registers in plain memory, and a NIC that completes
// descriptors from its head up to RDT, as the 82599 does (7.1.6): it reads the buffer
// address of the read format, writes a frame (a sequence number) into that buffer, then
// the write-back format over the whole descriptor.
function setUp(size, entries, freeThreshold = 1) {
  const regs = new Uint32Array(0x20000);
  const pool = new Mempool({ entries });
  const rx = new RxQueue(regs, R, 0, size, pool, freeThreshold);
  rx.start(() => {});
  const idOfPhys = new Map();
  for (let id = 0; id < entries; id++) idOfPhys.set(pool.physOf(id), id);
  const nic = { head: 0, seq: 0 };
  // Completes up to `count` descriptors with `status`; returns how many it could.
  nic.deliver = (count, status = GOOD) => {
    let done = 0;
    while (done < count && nic.head !== regs[rx.tailIndex]) {
      const w = nic.head * 4;
      const id = idOfPhys.get(rx.ring[w] + rx.ring[w + 1] * 2 ** 32);
      assert.ok(id !== undefined, `descriptor ${nic.head} given to the NIC without a buffer of the pool`);
      writeSeq(pool.buffers[id], nic.seq++);
      rx.ring[w] = 0; // packet type and RSS hash: none
      rx.ring[w + 1] = 0;
      rx.ring[w + 3] = 60;
      rx.ring[w + 2] = status;
      nic.head = (nic.head + 1) % size;
      done++;
    }
    return done;
  };
  return { regs, pool, rx, nic };
}

// Runs fn({ pool, rx, nic }) on a ring of 64 descriptors and a pool of 256 buffers, then
// closes both: by then every buffer must be back in the pool (fn gives back what it holds).
function onQueue(freeThreshold, fn) {
  const { pool, rx, nic } = setUp(64, 256, freeThreshold);
  try {
    fn({ pool, rx, nic });
  } finally {
    rx.close();
    pool.close(); // the counts stay readable (lib/memory/mempool.js)
  }
  assert.strictEqual(pool.freeCount, pool.entries, 'a buffer did not come back');
}

// Every buffer is in exactly one place: the pool's free stack, a descriptor of the ring
// or one of the caller's batches.
function assertEachBufferOnce(pool, rx, batches) {
  const seen = new Array(pool.entries).fill(0);
  for (let k = 0; k < pool.freeCount; k++) seen[pool.freeIds[k]]++;
  for (let i = 0; i < rx.size; i++) seen[rx.bufferIds[i]]++;
  for (const b of batches) for (let k = 0; k < b.count; k++) seen[b.ids[k]]++;
  const wrong = seen.findIndex((c) => c !== 1);
  assert.strictEqual(wrong, -1, `buffer ${wrong} is in ${seen[wrong]} places`);
}

describe('RX queue against a stand-in NIC', function () {
  it('hands out every frame once and in order while the caller holds batches of any size', function () {
    onQueue(8, ({ pool, rx, nic }) => {
      let random = 12345; // a fixed pseudo-random sequence, so a failure can be replayed
      const next = (n) => {
        random = (random * 1103515245 + 12345) & 0x7fffffff;
        return random % n;
      };
      const held = [];
      let expected = 0;
      for (let step = 0; step < 3000; step++) {
        nic.deliver(next(40));
        const batch = new PacketBatch(1 + next(80));
        const n = rx.receive(batch);
        for (let k = 0; k < n; k++) {
          assert.strictEqual(readSeq(batch.data(k)), expected, `step ${step}: frame ${k} of ${n}`);
          expected++;
        }
        held.push(batch);
        // The caller keeps up to four batches and gives back a random one.
        if (held.length > 4 || next(2) === 0) held.splice(next(held.length), 1)[0].release();
        assertEachBufferOnce(pool, rx, held);
      }
      for (const b of held) b.release();
      assert.strictEqual(rx.packets, expected);
      assert.ok(expected > 10000, `only ${expected} frames in 3000 steps`);
      assert.strictEqual(rx.errors, 0);
    });
  });

  it('drops broken frames whole, each counted once, and gives their descriptors back with their buffers', function () {
    onQueue(1, ({ pool, rx, nic }) => {
      const batch = new PacketBatch(32);
      nic.deliver(3);
      nic.deliver(2, GOOD | RX_ERROR); // two frames the MAC flagged broken
      nic.deliver(2, D.RXD_STAT_DD); // a frame over three buffers: DD, DD, then DD|EOP
      nic.deliver(1);
      nic.deliver(3);
      const seqs = () => Array.from({ length: batch.count }, (_, k) => readSeq(batch.data(k)));
      assert.strictEqual(rx.receive(batch), 3, 'the good frames before the broken ones');
      assert.deepStrictEqual(seqs(), [0, 1, 2]);
      assert.strictEqual(rx.errors, 3, 'two flagged frames and one frame over three descriptors');
      assertEachBufferOnce(pool, rx, [batch]);
      batch.release();
      assert.strictEqual(rx.receive(batch), 3, 'the good frames after the broken ones');
      assert.deepStrictEqual(seqs(), [8, 9, 10], 'no piece of the split frame is delivered');
      batch.release();
      // Around the ring twice: every descriptor the NIC gets back has a buffer again.
      let delivered = 0;
      for (let k = 0; k < 100 && rx.packets < 6 + 128; k++) {
        delivered += nic.deliver(Math.min(16, 128 - delivered));
        rx.receive(batch);
        batch.release();
      }
      assert.strictEqual(delivered, 128);
      assert.strictEqual(rx.packets, 6 + 128);
      assert.strictEqual(rx.errors, 3);
      assertEachBufferOnce(pool, rx, []);
    });
  });

  it('waits for the rest of a split frame, also across the end of the ring, then drops it whole', function () {
    onQueue(1, ({ rx, nic }) => {
      const batch = new PacketBatch(32);
      assert.strictEqual(nic.deliver(62), 62);
      for (let k = 0; k < 2; k++) {
        rx.receive(batch);
        batch.release();
      }
      assert.strictEqual(rx.packets, 62);
      nic.deliver(2, D.RXD_STAT_DD); // descriptors 62 and 63: the frame's first two pieces
      assert.strictEqual(rx.receive(batch), 0);
      assert.strictEqual(rx.errors, 0, 'not dropped before its last piece is written');
      assert.strictEqual(rx.next, 62);
      nic.deliver(1); // descriptor 0: its last piece, with EOP
      nic.deliver(1);
      assert.strictEqual(rx.receive(batch), 0, 'the split frame is dropped, nothing handed out');
      assert.strictEqual(rx.errors, 1);
      assert.strictEqual(rx.next, 1);
      assert.strictEqual(rx.receive(batch), 1);
      assert.strictEqual(readSeq(batch.data(0)), 65);
      batch.release();
    });
  });

  it('delivers frames with wrong checksums and tells them apart with checksumOf()', function () {
    onQueue(1, ({ rx, nic }) => {
      const batch = new PacketBatch(32, null, { status: true });
      const checked = D.RXD_STAT_IPCS | D.RXD_STAT_L4CS;
      nic.deliver(1, GOOD | checked);
      nic.deliver(1, GOOD | checked | R.RXD_ERR_IPE);
      nic.deliver(1, GOOD | checked | R.RXD_ERR_L4E);
      nic.deliver(1, GOOD);
      assert.strictEqual(rx.receive(batch), 4);
      assert.strictEqual(rx.errors, 0);
      const flags = Array.from({ length: 4 }, (_, k) => batch.checksumOf(k));
      assert.deepStrictEqual(flags, [
        CHECKSUM_IP_GOOD | CHECKSUM_L4_GOOD,
        CHECKSUM_IP_BAD | CHECKSUM_L4_GOOD,
        CHECKSUM_IP_GOOD | CHECKSUM_L4_BAD,
        0,
      ]);
      batch.release();
    });
  });

  it('checksumOf() does not call a UDP frame without a checksum bad (82599 erratum)', function () {
    onQueue(1, ({ rx, nic }) => {
      const batch = new PacketBatch(32, null, { status: true });
      const status = GOOD | D.RXD_STAT_IPCS | D.RXD_STAT_L4CS | D.RXD_STAT_UDPCS | R.RXD_ERR_L4E;
      nic.deliver(2, status);
      assert.strictEqual(rx.receive(batch), 2);
      // Frame 0: UDP checksum field 0 ("none"); frame 1: a non-zero, wrong checksum.
      for (let k = 0; k < 2; k++) {
        const b = batch.data(k);
        b[14] = 0x45;
        b[40] = 0;
        b[41] = k;
      }
      assert.strictEqual(batch.checksumOf(0), CHECKSUM_IP_GOOD, 'L4E on a UDP checksum of 0 is the erratum');
      assert.strictEqual(batch.checksumOf(1), CHECKSUM_IP_GOOD | CHECKSUM_L4_BAD);
      batch.release();
      const plain = new PacketBatch(32);
      nic.deliver(1, status);
      assert.strictEqual(rx.receive(plain), 1);
      assert.throws(() => plain.checksumOf(0), (err) => err.code === 'EINVAL' && /\{ status: true \}/.test(err.message));
      plain.release();
    });
  });

  it('never hands out frames past the end of the ring in one call', function () {
    onQueue(1, ({ rx, nic }) => {
      const batch = new PacketBatch(32);
      const receive = () => {
        const n = rx.receive(batch);
        const seqs = [readSeq(batch.data(0)), readSeq(batch.data(n - 1))];
        batch.release();
        return seqs;
      };
      assert.strictEqual(nic.deliver(50), 50);
      assert.deepStrictEqual(receive(), [0, 31]);
      assert.deepStrictEqual(receive(), [32, 49]);
      assert.strictEqual(nic.deliver(30), 30); // descriptors 50..63 and 0..15
      assert.deepStrictEqual(receive(), [50, 63], 'up to the end of the ring');
      assert.deepStrictEqual(receive(), [64, 79], 'then from its start');
    });
  });

  it('close() gives the ring\'s buffers back but not those of a batch the caller holds', function () {
    const { pool, rx, nic } = setUp(64, 256);
    const batch = new PacketBatch(32);
    nic.deliver(10);
    assert.strictEqual(rx.receive(batch), 10);
    rx.close();
    assert.strictEqual(pool.freeCount, pool.entries - 10);
    batch.release();
    assert.strictEqual(pool.freeCount, pool.entries);
    pool.close();
  });
});
