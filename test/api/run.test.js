'use strict';

// ixy.run(): the commands' loop for a tool's own per-batch function, over any devices and
// queues: it forwards what `ixy forward` would, stops on SIGINT, an AbortSignal or when the
// function says so, and checks what it is given.
const assert = require('assert');
const ixy = require('../../lib');
const { modelForSuite } = require('../support/helpers');

describe('ixy.run()', function () {
  this.timeout(60000);
  const model = modelForSuite(2);

  it('runs a hand-written forwarder (warmed up before open) until it says done: every frame arrives, in order', async function () {
    const N = 20000;
    const batches = [new ixy.PacketBatch(32), new ixy.PacketBatch(32)];
    let forwarded = 0;
    // As ixy forward does: what a full TX ring did not take goes first at the next step.
    const work = (rx, tx, i) => {
      const batch = batches[i];
      let n = batch.count;
      if (n === 0) {
        n = rx.receive(batch);
        if (n === 0) return false;
      }
      const sent = tx.send(batch);
      if (sent === n) batch.count = 0;
      else batch.keepFrom(sent);
      forwarded += sent;
      return forwarded >= N;
    };
    const warm = ixy.warmUp(work);
    forwarded = 0; // the warm-up ran it on stand-ins
    for (const batch of batches) batch.freeFrom(0); // and may have left frames held back
    // Rings that absorb long pauses of a busy test machine: the test is about the loop,
    // not about speed. `seconds` ends it should a frame be lost after all.
    const a = await ixy.open(model().addresses[0], { rxRingSize: 4096, mempoolEntries: 8192 });
    const b = await ixy.open(model().addresses[1], { rxRingSize: 4096, mempoolEntries: 8192 });
    try {
      await model().clear(0);
      await model().clear(1);
      await model().sink(1, { check: true });
      await model().source(0, { rate: 50000, size: 60, count: N });
      const reason = await ixy.run(work, { paths: [[a.rxQueues[0], b.txQueues[0]], [b.rxQueues[0], a.txQueues[0]]], devices: [a, b], warmUp: warm, seconds: 30 });
      assert.strictEqual(reason, 'done', `forwarded ${forwarded} of ${N}; RX missed ${a.stats().rxMissed}`);
      const sink = await model().waitFor(1, (s) => s.sinkFrames === N, 10000);
      assert.strictEqual(sink.sinkSeqErrors, 0);
      assert.strictEqual(a.stats().rxMissed, 0);
    } finally {
      a.close();
      b.close();
    }
  });

  it('stops on SIGINT and on an AbortSignal, with the reason, and leaves no signal listener', async function () {
    const a = await ixy.open(model().addresses[0]);
    const batch = new ixy.PacketBatch(32);
    const work = (rx) => { if (rx.receive(batch) > 0) batch.freeFrom(0); };
    const listeners = process.listenerCount('SIGINT');
    try {
      setTimeout(() => process.emit('SIGINT', 'SIGINT'), 200);
      assert.strictEqual(await ixy.run(work, { paths: [[a.rxQueues[0], null]], devices: [a], warmUp: false }), 'signal');
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      assert.strictEqual(await ixy.run(work, { paths: [[a.rxQueues[0], null]], devices: [a], signal: controller.signal }), 'aborted');
      assert.strictEqual(process.listenerCount('SIGINT'), listeners);
      // A function of no queues at all: called as work().
      let calls = 0;
      assert.strictEqual(await ixy.run(() => ++calls >= 1000, { devices: [a] }), 'done');
      assert.strictEqual(calls, 1000);
    } finally {
      a.close();
    }
  });

  it('per-second reports as JSON lines when asked', async function () {
    const a = await ixy.open(model().addresses[0]);
    let text = '';
    const out = { write: (s) => { text += s; } };
    try {
      const reason = await ixy.run(() => false, { devices: [a], seconds: 1.5, json: true, out });
      assert.strictEqual(reason, 'time');
      const lines = text.trim().split('\n').map((l) => JSON.parse(l));
      assert.ok(lines.length >= 1 && lines.every((r) => r.type === 'rates' && r.device === a.address), text);
    } finally {
      a.close();
    }
  });

  it('wrong arguments are EINVAL, a misspelt option names the nearest', async function () {
    const a = await ixy.open(model().addresses[0]);
    try {
      await assert.rejects(ixy.run(null, { devices: [a] }), { code: 'EINVAL', message: /needs a per-batch function, got null/ });
      await assert.rejects(ixy.run(() => true, { devcies: [a] }), { code: 'EINVAL', message: /run\(\) has no option 'devcies': did you mean 'devices'\?/ });
      await assert.rejects(ixy.run(() => true, {}), { code: 'EINVAL', message: /needs devices/ });
      await assert.rejects(ixy.run(() => true, { devices: [a], paths: [a.rxQueues[0]] }), { code: 'EINVAL', message: /\[rxQueue, txQueue\] pairs/ });
      await assert.rejects(ixy.run(() => true, { devices: [a], idle: 'sleep' }), { code: 'EINVAL', message: /idle must be/ });
    } finally {
      a.close();
    }
    await assert.rejects(ixy.run(() => true, { devices: [a] }), { code: 'ECLOSED' });
  });
});
