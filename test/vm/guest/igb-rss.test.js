'use strict';

// RSS on igb, checked by QEMU's own igb (82576) model, which hashes and steers every frame
// itself: port 1, opened with 4 RX queues, receives many UDP and then TCP flows that port 0
// (on the same QEMU hub) sends. For every frame this test computes the Toeplitz hash of its
// tuple on its own (test/support/rss.js, with the published verification key the driver
// uses) and checks that
//   - the hash in the write-back (batch.hashes) is that hash;
//   - its queue is the one RETA, as QEMU holds it, names for the hash: RETA[hash & 127];
//   - every flow stays on one queue, its frames in order, and the flows spread over all
//     four queues exactly as the test's hashes of the tuples it sent predict;
//   - stats() counts per queue what each queue delivered, and no drop.
// With RSS not programmed (one queue's worth of setup), every frame lands on queue 0.
const assert = require('assert');
const ixy = require('../../../lib');
const { PacketBatch } = require('../../../lib/memory/batch');
const { Generator } = require('../../../lib/traffic/generator');
const topology = require('./topology');
const { MS_KEY, hashOf, frameTuple } = require('../../support/rss');

const ports = topology.nics(['igb']);
const QUEUES = 4;
const FLOWS = 64;
const PER_FLOW = 6;
const FRAMES = FLOWS * PER_FLOW;
// Frames in flight at most, well below one RX ring (see nic-tests.js: QEMU queues a frame
// that finds no buffer, and a later one may overtake it).
const WINDOW = 64;
const TIMEOUT_MS = 120000;
// The redirection table: 32 registers from 0x5c00, entry 4i+j in byte j of register i
// (82576 datasheet 8.10; QEMU's E1000_RETA).
const RETA = 0x05c00;

// Flow k of the generator's recipe below: every field counts up with k (the destination
// port over 32 values only), as FrameRecipe documents its ranges. UDP and TCP flows start
// at different source ports, so that their tuples, and hashes, differ.
const SPORT = { udp: 1024, tcp: 30000 };
function flowTuple(protocol, k) {
  return { src: `10.0.0.${1 + k}`, dst: '10.1.0.1', sport: SPORT[protocol] + k, dport: 5000 + (k % 32) };
}

function readReta(dev) {
  const entries = [];
  for (let i = 0; i < 128; i++) entries.push((dev.regs[(RETA >> 2) + (i >> 2)] >>> (8 * (i & 3))) & 0xff);
  return entries;
}

const tick = () => new Promise((r) => setImmediate(r));

describe(`igb RSS against QEMU's igb: ${QUEUES} RX queues, ${FLOWS} flows`, function () {
  let sender;
  let receiver;
  const generators = []; // closed after the devices: the sender's TX ring holds their buffers
  before(async function () {
    sender = await ixy.open(ports[0].address);
    receiver = await ixy.open(ports[1].address, { rxQueues: QUEUES });
  });
  after(function () {
    if (sender) sender.close();
    if (receiver) receiver.close();
    for (const gen of generators) gen.close();
  });

  it('programs RETA with queues 0..3 in turn', function () {
    assert.deepStrictEqual(readReta(receiver), Array.from({ length: 128 }, (_, i) => i % QUEUES));
  });

  for (const protocol of ['udp', 'tcp']) {
    it(`steers ${FRAMES} ${protocol.toUpperCase()} frames of ${FLOWS} flows by the Toeplitz hash of each tuple, as RETA says`, async function () {
      const gen = new Generator({
        protocol, entries: 1024, srcMac: ports[0].mac, dstMac: ports[1].mac, flows: FLOWS,
        srcIp: `10.0.0.1-10.0.0.${FLOWS}`, dstIp: '10.1.0.1', srcPort: `${SPORT[protocol]}-${SPORT[protocol] + FLOWS - 1}`, dstPort: '5000-5031',
      });
      generators.push(gen);
      const seqAt = gen.recipe.seqAt;
      const txBatch = new PacketBatch(32);
      const rxBatch = new PacketBatch(64, null, { hashes: true });
      const before = receiver.stats().rxQueues.map((q) => q.packets);
      const frames = [];
      const poll = () => {
        let n = 0;
        for (let q = 0; q < QUEUES; q++) {
          n += receiver.rxBatch(q, rxBatch);
          for (let i = 0; i < rxBatch.count; i++) {
            const b = rxBatch.data(i);
            const seq = ((b[seqAt] << 24) | (b[seqAt + 1] << 16) | (b[seqAt + 2] << 8) | b[seqAt + 3]) >>> 0;
            frames.push({ queue: q, ...frameTuple(b), hash: rxBatch.hashes[i], seq });
          }
          rxBatch.release();
        }
        return n;
      };
      const deadline = Date.now() + TIMEOUT_MS;
      while (frames.length < FRAMES && Date.now() < deadline) {
        const room = Math.min(FRAMES - gen.seq, WINDOW - (gen.seq - frames.length));
        if (room > 0) gen.send(sender.txQueues[0], txBatch, room);
        if (poll() === 0) await tick();
      }
      const until = Date.now() + 300; // anything more that arrives is counted too
      while (Date.now() < until) {
        poll();
        await new Promise((r) => setTimeout(r, 10));
      }
      const received = new Array(QUEUES).fill(0);
      for (const f of frames) received[f.queue]++;
      console.log(`      ${protocol}: frames per queue ${received.join(' / ')}`);
      assert.strictEqual(frames.length, FRAMES, 'frames received');

      const reta = readReta(receiver);
      const queueOfFlow = new Map();
      const lastSeq = new Map();
      const perQueue = new Array(QUEUES).fill(0);
      for (const f of frames) {
        assert.strictEqual(f.proto, protocol === 'udp' ? 17 : 6, 'IP protocol');
        const hash = hashOf(MS_KEY, f.src, f.dst, f.sport, f.dport);
        const flow = `${f.src}:${f.sport} -> ${f.dst}:${f.dport}`;
        assert.strictEqual(f.hash, hash, `the write-back's hash of ${flow}`);
        assert.strictEqual(f.queue, reta[hash & 127], `queue of ${flow} (hash 0x${hash.toString(16)})`);
        assert.strictEqual(queueOfFlow.get(flow) ?? f.queue, f.queue, `${flow} stays on one queue`);
        queueOfFlow.set(flow, f.queue);
        assert.ok(!lastSeq.has(flow) || lastSeq.get(flow) < f.seq, `${flow} in order`);
        lastSeq.set(flow, f.seq);
        perQueue[f.queue]++;
      }
      assert.strictEqual(queueOfFlow.size, FLOWS, 'flows seen');
      // The spread the test predicts from the tuples it sent, without looking at the frames.
      const predicted = new Array(QUEUES).fill(0);
      for (let k = 0; k < FLOWS; k++) {
        const t = flowTuple(protocol, k);
        predicted[(hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport) & 127) % QUEUES] += PER_FLOW;
      }
      assert.deepStrictEqual(perQueue, predicted, 'frames per queue');
      assert.ok(perQueue.every((n) => n > 0), `every queue gets flows: ${perQueue}`);
      const stats = receiver.stats();
      const counted = stats.rxQueues.map((q, i) => q.packets - before[i]);
      assert.deepStrictEqual(counted, perQueue, 'stats().rxQueues');
      assert.strictEqual(stats.rxMissed, 0, 'frames dropped (MPC, RQDPC): none within the window');
    });
  }
});
