'use strict';

// ixgbe with several RX queues on the device model: RSS as the driver programs it (key,
// RETA, MRQC; lib/intel/rss.js) spreads flows over the queues, and each frame's hash, read
// from batch.hashes, equals this test's own Toeplitz (test/support/rss.js).
const assert = require('assert');
const ixy = require('../../lib');
const { Model } = require('../../lib/model');
const { PacketBatch } = require('../../lib/memory/batch');
const { assertIxyError, modelForSuite } = require('../support/helpers');
const { MS_KEY, MS_VECTORS, hashOf, sourceFlow, frameTuple } = require('../support/rss');

const seqOf = (b) => ((b[42] << 24) | (b[43] << 16) | (b[44] << 8) | b[45]) >>> 0;
const { sleep } = require('../../lib/host/register-access');

// Receives from every RX queue until `want` frames came; per frame its queue, tuple, hash
// and sequence number.
async function drain(dev, want, timeoutMs = 10000) {
  const batch = new PacketBatch(64, null, { hashes: true });
  const frames = [];
  const end = Date.now() + timeoutMs;
  while (frames.length < want) {
    let n = 0;
    for (let q = 0; q < dev.rxQueues.length; q++) {
      n += dev.rxBatch(q, batch);
      for (let i = 0; i < batch.count; i++) {
        const b = batch.data(i);
        frames.push({ queue: q, ...frameTuple(b), hash: batch.hashes[i], seq: seqOf(b) });
      }
      batch.release();
    }
    if (n === 0) {
      if (Date.now() > end) throw new Error(`received ${frames.length} of ${want} frames`);
      await sleep(1);
    }
  }
  return frames;
}

describe('ixgbe RSS on the device model (82599 7.1.2.8)', function () {
  this.timeout(30000);
  const model = modelForSuite(1);
  let dev;
  afterEach(async () => {
    if (dev) dev.close();
    dev = null;
    await model().sourceOff(0);
    await model().clear(0);
  });

  it('spreads N flows over N queues as RETA says, one queue per flow, each hash the Toeplitz of its tuple', async () => {
    dev = await ixy.open(model().addresses[0], { rxQueues: 4 });
    const flows = 64;
    for (const proto of ['udp', 'tcp']) {
      await model().clear(0);
      const count = 10 * flows;
      const sport = proto === 'udp' ? 1024 : 30000;
      await model().source(0, { count, flows, proto, sport, vary: ['sip', 'sport', 'dport'] });
      const frames = await drain(dev, count);
      const want = [0, 0, 0, 0];
      const queueOf = new Map();
      const lastSeq = new Map();
      for (const f of frames) {
        assert.strictEqual(f.proto, proto === 'udp' ? 17 : 6);
        const hash = hashOf(MS_KEY, f.src, f.dst, f.sport, f.dport);
        assert.strictEqual(f.hash, hash, `hash of ${f.src}:${f.sport} -> ${f.dst}:${f.dport}`);
        assert.strictEqual(f.queue, (hash & 127) % 4, 'RETA names queue (hash & 127) % 4');
        const key = `${f.src}:${f.sport}`;
        assert.strictEqual(queueOf.get(key) ?? f.queue, f.queue, `flow ${key} stays on one queue`);
        queueOf.set(key, f.queue);
        assert.ok(!lastSeq.has(key) || lastSeq.get(key) < f.seq, `flow ${key} in order`);
        lastSeq.set(key, f.seq);
        want[f.queue]++;
      }
      assert.strictEqual(queueOf.size, flows);
      // The spread the test computes on its own for the source's tuples.
      const expected = [0, 0, 0, 0];
      for (let f = 0; f < flows; f++) {
        const t = sourceFlow(f, { sport, vary: ['sip', 'sport', 'dport'] });
        expected[(hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport) & 127) % 4] += 10;
      }
      assert.deepStrictEqual(want, expected);
      assert.ok(expected.every((n) => n > 0), 'every queue has flows');
      assert.deepStrictEqual((await model().stats(0)).rxQueues.slice(0, 4), expected, "the model's truth per queue");
    }
    const s = dev.stats();
    assert.strictEqual(s.rxQueues.length, 4);
    assert.strictEqual(s.rxQueues.reduce((a, q) => a + q.packets, 0), s.rxPackets);
  });

  it('one flow always lands on one queue, in order', async () => {
    dev = await ixy.open(model().addresses[0], { rxQueues: 4 });
    const tuple = { src: '198.51.100.7', dst: '203.0.113.9', sport: 443, dport: 51000 };
    const queue = (hashOf(MS_KEY, tuple.src, tuple.dst, tuple.sport, tuple.dport) & 127) % 4;
    await model().source(0, { count: 1000, proto: 'tcp', sip: tuple.src, dip: tuple.dst, sport: tuple.sport, dport: tuple.dport });
    const frames = await drain(dev, 1000);
    assert.ok(frames.every((f) => f.queue === queue), `all on queue ${queue}`);
    assert.ok(frames.every((f, i) => i === 0 || f.seq > frames[i - 1].seq), 'in order');
    assert.deepStrictEqual(dev.stats().rxQueues.map((q) => q.packets), [0, 1, 2, 3].map((q) => (q === queue ? 1000 : 0)));
  });

  it('reports the published hashes of the RSS verification suite for frames with its tuples', async () => {
    dev = await ixy.open(model().addresses[0], { rxQueues: 2 });
    for (const v of MS_VECTORS) {
      await model().clear(0);
      await model().source(0, { count: 1, proto: 'tcp', sip: v.src, dip: v.dst, sport: v.sport, dport: v.dport });
      const [f] = await drain(dev, 1);
      assert.strictEqual(f.hash, v.tcp, `${v.src}:${v.sport} -> ${v.dst}:${v.dport}`);
      assert.strictEqual(f.queue, (v.tcp & 127) % 2);
    }
  });

  it('forwards RX queue i to TX queue i of another port: every frame arrives, each flow in order (sink per flow)', async () => {
    const two = await Model.start({ ports: 2 });
    process.env.IXY_PCI_ROOT = two.dir;
    const devs = [];
    try {
      devs.push(await ixy.open(two.addresses[0], { rxQueues: 4, txQueues: 1 }));
      devs.push(await ixy.open(two.addresses[1], { rxQueues: 1, txQueues: 4 }));
      const [rx, tx] = devs;
      await two.sink(1, { check: true });
      const count = 20000;
      await two.source(0, { count, flows: 64, proto: 'mixed' });
      const batches = [0, 1, 2, 3].map(() => new PacketBatch(64));
      const end = Date.now() + 20000;
      let moved = 0;
      while (moved < count && Date.now() < end) {
        let busy = 0;
        for (let q = 0; q < 4; q++) {
          const b = batches[q];
          if (b.count === 0) rx.rxBatch(q, b);
          if (b.count === 0) continue;
          const sent = tx.txBatch(q, b);
          // keep what the TX ring did not take, in order, for the next turn
          b.ids.copyWithin(0, sent, b.count);
          b.lengths.copyWithin(0, sent, b.count);
          b.count -= sent;
          moved += sent;
          busy += sent;
        }
        if (busy === 0) await new Promise(setImmediate);
      }
      assert.strictEqual((await two.stats(0)).rxDropNoDesc, 0);
      const s = await two.waitFor(1, (x) => x.sinkFrames === count, 5000);
      assert.strictEqual(s.sinkBadFrames, 0);
      assert.strictEqual(s.sinkFlows, 64);
      assert.strictEqual(s.sinkFlowErrors, 0, 'no flow out of order');
      const perQueue = tx.stats().txQueues.map((q) => q.packets);
      assert.deepStrictEqual(perQueue, rx.stats().rxQueues.map((q) => q.packets));
      assert.ok(perQueue.every((n) => n > 0), `every queue pair carried flows: ${perQueue}`);
    } finally {
      for (const dev of devs) dev.close();
      process.env.IXY_PCI_ROOT = model().dir;
      await two.stop();
    }
  });

  it('rssKey: the NIC hashes with the key open() was given, and RETA places each flow by that hash', async () => {
    const key = Buffer.from(Array.from({ length: 40 }, (_, i) => (i * 37 + 11) & 0xff));
    const given = Buffer.from(key);
    dev = await ixy.open(model().addresses[0], { rxQueues: 4, rssKey: given });
    given.fill(0); // open() took a copy
    const flows = 64;
    await model().source(0, { count: 4 * flows, flows, proto: 'mixed', vary: ['sip', 'sport', 'dport'] });
    const frames = await drain(dev, 4 * flows);
    let differ = 0;
    for (const f of frames) {
      const hash = hashOf(key, f.src, f.dst, f.sport, f.dport);
      assert.strictEqual(f.hash, hash, `hash of ${f.src}:${f.sport} -> ${f.dst}:${f.dport} under the given key`);
      assert.strictEqual(f.queue, (hash & 127) % 4);
      if (hash !== hashOf(MS_KEY, f.src, f.dst, f.sport, f.dport)) differ++;
    }
    assert.strictEqual(differ, frames.length, 'no frame hashed as under the default key');
    const queues = new Set(frames.map((f) => f.queue));
    assert.strictEqual(queues.size, 4, 'the flows spread over every queue');
  });

  it('rssKey must be 40 bytes, and rxQueues at most 16 (RETA names 16 queues): one line each, the port left free', async () => {
    const address = model().addresses[0];
    for (const rssKey of [Buffer.alloc(39), new Uint8Array(41), 'k'.repeat(40), [1, 2, 3]]) {
      await assert.rejects(ixy.open(address, { rxQueues: 2, rssKey }), (err) => assertIxyError(err, 'EINVAL', /^rssKey must be a Buffer or Uint8Array of 40 bytes \(the NIC's Toeplitz key\), got /));
    }
    await assert.rejects(ixy.open(address, { rxQueues: 17 }),
      (err) => assertIxyError(err, 'EINVAL', /^rxQueues must be 0\.\.16 \(RSS's redirection table, RETA, names only queues 0\.\.15 on the 82599: more would never receive a frame\), got 17$/));
    // 16 queues: each receives the flows RETA names for it.
    dev = await ixy.open(address, { rxQueues: 16, rxRingSize: 64, mempoolEntries: 128 });
    const flows = 128;
    await model().source(0, { count: flows, flows, vary: ['sip', 'sport', 'dport'] });
    const frames = await drain(dev, flows);
    const expected = new Array(16).fill(0);
    for (let f = 0; f < flows; f++) {
      const t = sourceFlow(f, { vary: ['sip', 'sport', 'dport'] });
      expected[(hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport) & 127) % 16]++;
    }
    const got = new Array(16).fill(0);
    for (const f of frames) got[f.queue]++;
    assert.deepStrictEqual(got, expected);
    assert.ok(expected.filter((n) => n > 0).length > 8, `flows on most of the 16 queues: ${expected}`);
  });

  it('with one RX queue RSS stays off: every frame on queue 0, hash 0', async () => {
    dev = await ixy.open(model().addresses[0]);
    await model().source(0, { count: 100, flows: 16 });
    const frames = await drain(dev, 100);
    assert.ok(frames.every((f) => f.queue === 0 && f.hash === 0));
    assert.strictEqual((await model().stats(0)).rss, false);
  });
});
