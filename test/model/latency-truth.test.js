'use strict';
// The model's latency truth (native/model/latency.c, README "Latency truth"): for each frame
// of a source, when the model wrote it into the driver's RX ring and when a driver handed it
// back on TX; a histogram per TX port. The bounds below are facts: a frame cannot leave
// before the driver saw it and waited, nor after the test saw it leave.

const assert = require('assert');
const { Model } = require('../../lib/model');
const d = require('../support/model-driver');

const HOLD_NS = 3000000n;

// Waits at least HOLD_NS on the clock the model uses (CLOCK_MONOTONIC).
function hold() {
  const until = process.hrtime.bigint() + HOLD_NS;
  while (process.hrtime.bigint() < until);
}

describe('latency truth (device model)', function () {
  this.timeout(20000);
  let model, dev0, dev1, mem0, mem1;
  before(async () => {
    model = await Model.start({ ports: 2 });
    [dev0, dev1] = [d.open(model, 0), d.open(model, 1)];
    [mem0, mem1] = [d.dmaMemory(), d.dmaMemory()];
    for (const dev of [dev0, dev1]) {
      d.busMaster(dev, true);
      await d.resetLinkUp(dev);
    }
    await d.setupRx(dev0, mem0);
    await d.setupTx(dev1, mem1);
    await model.sink(1);
  });
  after(async () => {
    for (const m of [mem0, mem1]) if (m) m.free();
    if (model) await model.stop();
  });

  // TX descriptor i of port 1 sends RX buffer j of port 0 (a forwarder that copies nothing).
  function forward(i, j, len) {
    d.txDesc(mem1, i, len, mem0.phys(d.rxBuf(j)));
  }

  it('holds a histogram of RX write-back to TX fetch for frames a driver forwards', async () => {
    await assert.rejects(model.latency(1), /latency is not recorded \(latency on\)/);
    assert.strictEqual((await model.stats(1)).latency, null);
    await model.latencyOn();
    const n = 100;
    const start = process.hrtime.bigint();
    await model.source(0, { rate: 20000, count: n, size: 60 });
    await model.waitFor(0, (s) => s.rxDelivered === n);
    hold();
    for (let k = 0; k < n; k++) forward(k, k, d.rxDesc(mem0, k).length);
    dev1.write(d.R.TDT, n);
    await model.waitFor(1, (s) => s.txFrames === n);
    const end = process.hrtime.bigint();

    const h = await model.latency(1);
    assert.strictEqual(h.count, n);
    assert.strictEqual(h.unmatched, 0);
    assert.ok(h.minNs >= Number(HOLD_NS), `min ${h.minNs} ns, but every frame waited ${HOLD_NS} ns`);
    assert.ok(h.maxNs <= Number(end - start), `max ${h.maxNs} ns, longer than the whole run`);
    assert.ok(h.minNs <= h.p50Ns && h.p50Ns <= h.p99Ns && h.p99Ns <= h.p999Ns && h.p999Ns <= h.p9999Ns && h.p9999Ns <= h.maxNs);
    assert.strictEqual(h.buckets.reduce((sum, [, , count]) => sum + count, 0), n);
    for (const [low, width] of h.buckets) assert.ok(width <= Math.max(1, low / 32), `bucket ${low}+${width} is log-linear, 1/32 wide`);
    const summary = (await model.stats(1)).latency;
    assert.deepStrictEqual([summary.count, summary.p99Ns, summary.maxNs], [n, h.p99Ns, h.maxNs]);
    assert.strictEqual((await model.latency(0)).count, 0, 'nothing left port 0');
  });

  it('knows TCP frames and sources with addresses of their own (proto=, dip=) too', async () => {
    await model.clear(0);
    await model.clear(1);
    const base = (await model.stats(0)).rxDelivered;
    await model.command('source 0 rate=20000 count=50 size=80 proto=tcp dip=192.168.7.9');
    await model.waitFor(0, (s) => s.rxDelivered === base + 50);
    const first = (await model.stats(1)).txFrames;
    for (let k = 0; k < 50; k++) forward(100 + k, (100 + k) % 256, d.rxDesc(mem0, (100 + k) % 256).length);
    dev1.write(d.R.TDT, 150);
    await model.waitFor(1, (s) => s.txFrames === first + 50);
    const h = await model.latency(1);
    assert.deepStrictEqual([h.count, h.unmatched], [50, 0]);
    assert.strictEqual(Buffer.from(d.rxDesc(mem0, 100).data).readUInt32BE(30), 0xc0a80709, 'sent to dip=');
  });

  it('counts a frame sent twice, or not from a source, as unmatched', async () => {
    const before = await model.latency(1);
    const sent = (await model.stats(1)).txFrames;
    forward(150, 100, 80); // the TCP source's first frame again
    d.buildFrame(mem1.bytes.subarray(d.txBuf(151)), { size: 60, seq: 5, port: 1 });
    d.txDesc(mem1, 151, 60);
    dev1.write(d.R.TDT, 152);
    await model.waitFor(1, (s) => s.txFrames === sent + 2);
    const h = await model.latency(1);
    assert.deepStrictEqual([h.count, h.unmatched], [before.count, before.unmatched + 2]);
    await model.clear(1);
    assert.deepStrictEqual([(await model.latency(1)).count, (await model.latency(1)).unmatched], [0, 0]);
    await model.latencyOff();
    assert.strictEqual((await model.stats(1)).latency, null);
    await assert.rejects(model.command('latency 9'), /usage: latency on\|off\|PORT/);
  });
});
