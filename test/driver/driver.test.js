'use strict';

// The ixgbe driver against the 82599 device model: init and link, forwarding checked
// frame by frame against the model's own truth, and the generator's output checked by
// tshark. The driver is pointed at the model only through IXY_PCI_ROOT.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ixy = require('../../lib');
const { Model } = require('../../lib/model');
const { runLoop } = require('../../lib/loop');
const { readPcap } = require('../../lib/pcap-file');
const { runIxy, tsharkFields, hugepageBytes, hugetlbfsFiles } = require('../support/helpers');

// Forwards like ixy forward, but keeps what the TX ring could not take and retries it,
// so that a model descheduled for a few ms on a busy machine costs no frames.
function forwardWithoutLoss(rxQueue, txQueue, batch) {
  if (batch.count === 0) {
    const n = rxQueue.receive(batch);
    for (let i = 0; i < n; i++) batch.data(i)[1]++;
  }
  if (batch.count === 0) return;
  const sent = txQueue.send(batch);
  batch.ids.copyWithin(0, sent, batch.count);
  batch.lengths.copyWithin(0, sent, batch.count);
  batch.count -= sent;
}

// Fills the batch with as many 60-byte UDP frames from `pool` as it holds; returns how many.
function fillBatch(batch, pool) {
  batch.pool = pool;
  batch.count = pool.allocMany(batch.ids, batch.capacity);
  for (let i = 0; i < batch.count; i++) {
    ixy.packet.writeUdpFrame(batch.data(i), { size: 60 });
    batch.lengths[i] = 60;
  }
  return batch.count;
}

describe('ixgbe driver on the device model', function () {
  let model;
  let tmp;
  let hugepagesBefore;

  before(async function () {
    hugepagesBefore = hugepageBytes(); // this process's, not the machine's
    model = await Model.start({ ports: 2 });
    process.env.IXY_PCI_ROOT = model.dir;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-test-'));
  });

  after(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('initialises the device, brings the link up and reads MAC and speed', async function () {
    const dev = await ixy.open(model.addresses[0]);
    try {
      assert.strictEqual(dev.linkSpeed, 10000);
      assert.strictEqual(dev.mac, model.ports[0].mac);
      assert.strictEqual(dev.promiscuous, true);
      dev.promiscuous = false;
      assert.strictEqual(dev.promiscuous, false);
      const s = await model.stats(0);
      assert.strictEqual(s.linkUp, true);
    } finally {
      dev.close();
    }
  });

  it('forwards every offered frame both ways, touched, with counters that agree with the model', async function () {
    const N = 20000;
    const [A, B] = model.addresses;
    const a = await ixy.open(A);
    const b = await ixy.open(B);
    const capture = path.join(tmp, 'forwarded.pcap');
    const ab = new ixy.PacketBatch(32);
    const ba = new ixy.PacketBatch(32);
    try {
      for (const port of [0, 1]) {
        await model.clear(port);
        await model.sink(port, { check: true });
      }
      await model.pcapOut(1, capture);
      // A rate the driver keeps up with easily, even on a busy machine: with RXPBSIZE(0)
      // at 512 KiB (as the driver sets it) the model's RX packet buffer holds ~6200 frames,
      // plus at least 384 free descriptors: ~165 ms at this rate. No frame may be lost.
      await model.source(0, { rate: 40000, size: 60, count: N });
      await model.source(1, { rate: 40000, size: 60, count: N });

      let done = false;
      const poll = setInterval(() => {
        model.stats().then((s) => { done = s[0].txFrames >= N && s[1].txFrames >= N; }, () => {});
      }, 20);
      const reason = await runLoop({
        devices: [a, b],
        report: false,
        seconds: 30,
        step: () => {
          forwardWithoutLoss(a.rxQueues[0], b.txQueues[0], ab);
          forwardWithoutLoss(b.rxQueues[0], a.txQueues[0], ba);
          return done;
        },
      });
      clearInterval(poll);
      if (reason !== 'done') {
        const counts = (await model.stats()).map((m) => ({ rxDelivered: m.rxDelivered, rxDropNoDesc: m.rxDropNoDesc, txFrames: m.txFrames }));
        assert.fail(`the model did not see all frames transmitted within 30 s: ${JSON.stringify(counts)}`);
      }
      a.stop();
      b.stop();
      await model.pcapOut(1, null);

      const [m0, m1] = await model.stats();
      for (const m of [m0, m1]) {
        assert.strictEqual(m.rxOffered, N);
        assert.strictEqual(m.rxDelivered, N);
        assert.strictEqual(m.rxDropNoDesc, 0);
        assert.strictEqual(m.txFrames, N);
        assert.strictEqual(m.sinkSeqErrors, 0);
        assert.strictEqual(m.sinkBadFrames, 0);
        assert.strictEqual(m.descErrors, 0);
      }
      const sa = a.stats();
      const sb = b.stats();
      assert.strictEqual(sa.rxPackets, m0.rxDelivered);
      assert.strictEqual(sa.rxBytes, m0.rxBytes);
      assert.strictEqual(sb.txPackets, m1.txFrames);
      assert.strictEqual(sb.txBytes, m1.txBytes);
      assert.strictEqual(sb.rxPackets, m1.rxDelivered);
      assert.strictEqual(sa.txPackets, m0.txFrames);

      // Port 1 sent what port 0 received: the model's frames, byte 1 incremented once.
      const frames = readPcap(capture).frames.map((f) => f.data);
      assert.strictEqual(frames.length, N);
      const mac0 = ixy.packet.parseMac(model.ports[0].mac);
      frames.forEach((f, i) => {
        assert.strictEqual(f.length, 60);
        assert.strictEqual(f[1], (mac0[1] + 1) & 0xff, `frame ${i}: touched byte`);
        assert.strictEqual(f.readUInt32BE(ixy.packet.SEQ_OFFSET), i, `frame ${i}: sequence number`);
      });
    } finally {
      a.close();
      b.close();
    }
    // After the run every buffer is back in its pool.
    for (const pool of [...a.pools, ...b.pools]) assert.strictEqual(pool.freeCount, pool.entries);
  });

  it('hands RX descriptors back to the NIC only in groups of rxFreeThreshold (one RDT write each)', async function () {
    const R = require('../../lib/intel/ixgbe/registers');
    const dev = await ixy.open(model.addresses[0], { rxFreeThreshold: 16 });
    const batch = new ixy.PacketBatch(32);
    const rdt = () => dev.regs[R.RDT(0) >> 2];
    // Receives (and frees) until `total` frames have come in since the device opened.
    const receiveUntil = async (total) => {
      const deadline = Date.now() + 5000;
      while (dev.rxQueues[0].packets < total) {
        assert.ok(Date.now() < deadline, `only ${dev.rxQueues[0].packets} of ${total} frames arrived`);
        if (dev.rxBatch(0, batch) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        batch.release();
      }
    };
    try {
      await model.clear(0);
      assert.strictEqual(rdt(), 511, 'after start the whole ring but one slot is the NIC\'s');
      await model.source(0, { size: 60, count: 10 });
      await receiveUntil(10);
      assert.strictEqual(rdt(), 511, '10 descriptors refilled: fewer than 16, RDT stays');
      await model.source(0, { size: 60, count: 10 });
      await receiveUntil(20);
      assert.strictEqual(rdt(), 19, '20 refilled: RDT names the last of them');
      assert.strictEqual(dev.rxQueues[0].packets, 20);
    } finally {
      dev.close();
    }
    for (const pool of dev.pools) assert.strictEqual(pool.freeCount, pool.entries);
    await assert.rejects(ixy.open(model.addresses[0], { rxFreeThreshold: 300 }),
      (err) => err.code === 'EINVAL' && /rxFreeThreshold must be 1\.\.256/.test(err.message));
  });

  it('receives only as many frames as the pool has buffers; the rest wait on the ring', async function () {
    const dev = await ixy.open(model.addresses[0]);
    const pool = dev.pools[0];
    const batch = new ixy.PacketBatch(32);
    const held = new ixy.PacketBatch(4096);
    try {
      await model.clear(0);
      await model.source(0, { size: 60, count: 20 });
      await model.waitFor(0, (s) => s.rxDelivered === 20, 5000);
      // Leave the pool 5 buffers: 5 frames can be exchanged for fresh buffers, no more.
      held.count = pool.allocMany(held.ids, pool.freeCount - 5);
      held.pool = pool;
      assert.strictEqual(dev.rxBatch(0, batch), 5);
      assert.strictEqual(pool.freeCount, 0);
      batch.release();
      assert.strictEqual(dev.rxBatch(0, batch), 5, 'the 5 buffers just freed let 5 more in');
      batch.release();
      held.release();
      assert.strictEqual(dev.rxBatch(0, batch), 10, 'the other 10 frames waited on the ring');
      assert.strictEqual(dev.rxQueues[0].errors, 0);
      batch.release();
    } finally {
      dev.close();
    }
    assert.strictEqual(pool.freeCount, pool.entries);
  });


  it('sizes the pool from a large RX ring, so that it never runs dry, and refuses one too small', async function () {
    await assert.rejects(ixy.open(model.addresses[0], { rxRingSize: 4096, mempoolEntries: 4096 }),
      (err) => err.code === 'EINVAL' && /mempoolEntries must be at least twice rxRingSize \(8192\)/.test(err.message));
    const dev = await ixy.open(model.addresses[0], { rxRingSize: 4096 });
    const batch = new ixy.PacketBatch(64);
    try {
      assert.strictEqual(dev.pools[0].entries, 8192);
      await model.clear(0);
      await model.source(0, { size: 60, count: 6000, rate: 100000 });
      let received = 0;
      for (const end = Date.now() + 3000; Date.now() < end && received < 6000;) {
        received += dev.rxBatch(0, batch);
        batch.release();
        if (received < 6000) await new Promise((resolve) => setImmediate(resolve));
      }
      assert.strictEqual(received, 6000, 'more than one ring of frames arrives');
    } finally {
      dev.close();
    }
  });

  it('a TX queue gives back exactly the buffers it sent, in groups of 32', async function () {
    const dev = await ixy.open(model.addresses[0]);
    const pool = new ixy.Mempool({ entries: 4096 }); // large: send() itself reclaims nothing here
    const tx = dev.txQueues[0];
    const batch = new ixy.PacketBatch(20);
    const sent = [];
    try {
      await model.clear(0);
      // 100 frames: three whole groups of 32 come back, the last 4 frames wait.
      for (let k = 0; k < 5; k++) {
        fillBatch(batch, pool);
        sent.push(...batch.ids);
        assert.strictEqual(tx.send(batch), 20);
      }
      await model.waitFor(0, (s) => s.txFrames === 100, 5000);
      tx.reclaim();
      assert.strictEqual(pool.freeCount, 4096 - 100 + 96);
      // The top of the free stack: the first 96 frames' buffers, each once.
      const back = Array.from(pool.freeIds.subarray(4096 - 100, 4096 - 4)).sort((x, y) => x - y);
      assert.deepStrictEqual(back, sent.slice(0, 96).sort((x, y) => x - y));
    } finally {
      dev.close();
    }
    assert.strictEqual(pool.freeCount, 4096);
    pool.close();
  });

  it('frames still on the TX ring when the queue stops are not counted as sent', async function () {
    const dev = await ixy.open(model.addresses[0]);
    const pool = new ixy.Mempool({ entries: 256 });
    const batch = new ixy.PacketBatch(20);
    try {
      await model.clear(0);
      fillBatch(batch, pool);
      assert.strictEqual(dev.txBatch(0, batch), 20);
      await model.waitFor(0, (s) => s.txFrames === 20, 5000);
      await model.stall(0, 2000); // the model takes no TX descriptors meanwhile
      fillBatch(batch, pool);
      assert.strictEqual(dev.txBatch(0, batch), 20);
      assert.strictEqual(dev.stats().txPackets, 40, 'a queued frame counts as sent while the queue runs');
      dev.stop(); // lets the ring drain for 100 ms, then stops the queue: 20 frames discarded
      const s = dev.stats();
      assert.deepStrictEqual([s.txPackets, s.txBytes], [20, 20 * 60]);
      await model.stall(0, 0);
      assert.strictEqual((await model.stats(0)).txFrames, 20);
    } finally {
      await model.stall(0, 0);
      dev.close();
    }
    assert.strictEqual(pool.freeCount, 256, 'the discarded frames\' buffers came back');
    pool.close();
  });

  it('send() leaves sent buffers on a roomy ring, but a pool smaller than the ring never runs dry', async function () {
    const dev = await ixy.open(model.addresses[0]); // TX ring of 512
    const big = new ixy.Mempool({ entries: 4096 });
    const small = new ixy.Mempool({ entries: 64 });
    const tx = dev.txQueues[0];
    const batch = new ixy.PacketBatch(32);
    const sendFrom = (pool) => {
      fillBatch(batch, pool);
      return tx.send(batch);
    };
    try {
      await model.clear(0);
      // 4 batches from a big pool: 128 in flight, far from 3/4 of the ring: nothing comes back.
      for (let k = 0; k < 4; k++) assert.strictEqual(sendFrom(big), 32);
      await model.waitFor(0, (s) => s.txFrames === 128, 5000);
      assert.strictEqual(sendFrom(big), 32);
      assert.strictEqual(big.freeCount, 4096 - 160);
      // 640 frames from a pool of 64 (ten times the pool): each send finds buffers again.
      for (let k = 0; k < 20; k++) {
        assert.strictEqual(sendFrom(small), 32, `batch ${k} from the small pool`);
        await model.waitFor(0, (s) => s.txFrames === 160 + 32 * (k + 1), 5000);
      }
    } finally {
      dev.close();
    }
    assert.deepStrictEqual([big.freeCount, small.freeCount], [4096, 64]);
    big.close();
    small.close();
  });

  it('a TX queue carrying buffers of two mempools gives each buffer back to its own pool', async function () {
    const dev = await ixy.open(model.addresses[0]);
    const pools = [new ixy.Mempool({ entries: 256 }), new ixy.Mempool({ entries: 256 })];
    const tx = dev.txQueues[0];
    const batch = new ixy.PacketBatch(8);
    try {
      await model.clear(0);
      // 80 frames in batches of 8, alternating pools: the reclaim groups of 32 mix both.
      for (let k = 0; k < 10; k++) {
        fillBatch(batch, pools[k % 2]);
        assert.strictEqual(tx.send(batch), 8);
      }
      await model.waitFor(0, (s) => s.txFrames === 80, 5000);
      tx.reclaim();
      // Descriptors 0..63 are two groups of 32, each 16 + 16 frames from the two pools.
      assert.deepStrictEqual(pools.map((p) => p.freeCount), [256 - 40 + 32, 256 - 40 + 32]);
    } finally {
      dev.close();
    }
    // close() gave back the 16 frames of the unfinished group, each to its own pool.
    assert.deepStrictEqual(pools.map((p) => p.freeCount), [256, 256]);
    for (const p of pools) p.close();
  });

  it('generate sends exactly --count valid IPv4/UDP frames with consecutive sequence numbers', async function () {
    const count = 1000;
    const capture = path.join(tmp, 'generated.pcap');
    await model.clear(0);
    await model.pcapOut(0, capture);
    const run = await runIxy(['generate', model.addresses[0], '--count', String(count), '--size', '128']);
    assert.strictEqual(run.code, 0, run.stderr);
    await model.waitFor(0, (s) => s.txFrames >= count, 5000);
    await model.pcapOut(0, null);
    assert.strictEqual((await model.stats(0)).txFrames, count);

    const rows = tsharkFields(capture, ['frame.len', 'ip.proto', 'ip.checksum.status', 'udp.dstport', 'udp.payload']);
    assert.strictEqual(rows.length, count);
    rows.forEach(([len, proto, checksum, dport, payload], i) => {
      assert.strictEqual(len, '128');
      assert.strictEqual(proto, '17');
      assert.ok(checksum === '2' || checksum === 'Good' || checksum === '1', `frame ${i}: IPv4 checksum status ${checksum}`);
      assert.strictEqual(dport, '5000');
      assert.strictEqual(parseInt(payload.replace(/:/g, '').slice(0, 8), 16), i, `frame ${i}: sequence number`);
    });
  });

  it('leaves no hugepages or hugetlbfs files behind once the model lets go of them', async function () {
    // The model maps the driver's hugepages for DMA until the port is reset or it stops.
    await model.stop();
    model = null;
    assert.deepStrictEqual(hugetlbfsFiles(), []);
    assert.strictEqual(hugepageBytes(), hugepagesBefore);
  });
});
