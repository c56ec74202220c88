'use strict';

// A Device is an EventEmitter for what happens to the NIC: 'link', 'txhang' and 'lost'
// reach a listener without the program calling check() itself (the device watches while
// anyone listens), and check() still returns them as lines.
const assert = require('assert');
const { once } = require('events');
const ixy = require('../../lib');

describe('device events', function () {
  this.timeout(30000);
  let model;

  beforeEach(async function () {
    model = await ixy.Model.start({ ports: 1 });
    process.env.IXY_PCI_ROOT = model.dir;
  });

  afterEach(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
  });

  it("'link' when the link goes down and comes back, with its speed", async function () {
    const dev = await ixy.open(model.addresses[0]);
    try {
      assert.ok(dev instanceof require('events').EventEmitter);
      const down = once(dev, 'link');
      await model.link(0, false);
      const [d] = await down;
      assert.deepStrictEqual([d.up, d.speed, d.text], [false, 0, 'link down']);
      const up = once(dev, 'link');
      await model.link(0, true);
      const [u] = await up;
      assert.deepStrictEqual([u.up, u.speed, u.text], [true, 10000, 'link up at 10000 Mb/s']);
    } finally {
      dev.close();
    }
  });

  it("'txhang' when a TX queue makes no progress with frames pending, and the queue is reset", async function () {
    const dev = await ixy.open(model.addresses[0]);
    const pool = dev.pools[0];
    const batch = new ixy.PacketBatch(16, pool);
    try {
      const hang = once(dev, 'txhang');
      await model.stall(0, 10000); // the NIC takes no TX descriptors for 10 s
      batch.count = pool.allocMany(batch.ids, 16);
      for (let i = 0; i < batch.count; i++) batch.lengths[i] = 60;
      assert.strictEqual(dev.txBatch(0, batch), 16);
      const [h] = await hang;
      assert.strictEqual(h.queue, 0);
      assert.strictEqual(h.dropped, 16);
      assert.match(h.text, /TX queue 0 hung/);
    } finally {
      dev.close();
    }
  });

  it("'lost' once, with EDEVICELOST, when the NIC stops answering; the watcher then stops", async function () {
    const dev = await ixy.open(model.addresses[0]);
    let lost = 0;
    try {
      const gone = once(dev, 'lost');
      dev.on('lost', () => { lost++; });
      await model.command('remove 0');
      const [err] = await gone;
      assert.strictEqual(err.code, 'EDEVICELOST');
      assert.throws(() => dev.check(), { code: 'EDEVICELOST' });
      assert.strictEqual(lost, 1, "'lost' is told once");
    } finally {
      dev.close();
    }
  });
});
