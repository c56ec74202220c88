'use strict';
// Tests of the 82599 device model (native/model) through a minimal test driver
// (test/support/model-driver.js): PCI files, reset, link, register aliases, statistics,
// device removal and bad DMA addresses.

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const d = require('../support/model-driver');

describe('device model: registers', function () {
  this.timeout(10000);

  let model, dev, mem;
  beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0)); });
  afterEach(() => d.stopPort({ model, mem }));

  // Ten frames received on a ready port, their counts published (within 0.5 ms).
  async function tenFramesCounted() {
    await d.readyRx(dev, mem);
    await model.source(0, { count: 10 });
    await model.waitFor(0, (x) => x.rxDelivered === 10);
    await d.waitReg(dev, d.R.RDH, 0xffff, 10);
    await d.sleep(5);
  }

  it('creates the PCI device files', () => {
    const cfg = fs.readFileSync(path.join(dev.dir, 'config'));
    assert.strictEqual(cfg.length, 4096);
    assert.strictEqual(cfg.readUInt16LE(0), 0x8086);
    assert.strictEqual(cfg.readUInt16LE(2), 0x10fb);
    assert.deepStrictEqual([...cfg.subarray(9, 12)], [0, 0, 2]);
    assert.strictEqual(fs.readFileSync(path.join(dev.dir, 'class'), 'utf8'), '0x020000\n');
    assert.ok(fs.existsSync(path.join(dev.dir, 'driver', 'unbind')));
    assert.strictEqual(fs.statSync(path.join(dev.dir, 'resource0')).size, 0x80000);
    assert.notStrictEqual(model.ports[0].mac, model.ports[1].mac);
  });

  it('resets to defaults: RST self-clears, EEC.ARD, DMAIDONE, MAC in RAL0/RAH0', async () => {
    dev.write(0x4240, 0);          // HLREG0 garbage
    dev.write(0x1234 * 4, 0xdeadbeef);
    await d.reset(dev);
    assert.strictEqual(dev.read(d.R.CTRL) & ((1 << 26) | (1 << 3)), 0);
    assert.ok(dev.read(d.R.EEC) & (1 << 9));
    assert.ok(dev.read(d.R.RDRXCTL) & (1 << 3));
    assert.strictEqual(dev.read(0x4240) & 2, 2, 'HLREG0.RXCRCSTRP default');
    assert.strictEqual(dev.read(0x1234 * 4), 0);
    const ral = dev.read(d.R.RAL0);
    const rah = dev.read(d.R.RAH0);
    const mac = [ral & 255, (ral >>> 8) & 255, (ral >>> 16) & 255, ral >>> 24, rah & 255, (rah >>> 8) & 255]
      .map((b) => b.toString(16).padStart(2, '0')).join(':');
    assert.strictEqual(mac, model.ports[0].mac);
    assert.ok(rah & 0x80000000, 'RAH.AV');
  });

  it('brings link up after AUTOC restart, forced down and up', async () => {
    await d.reset(dev);
    assert.strictEqual(dev.read(d.R.LINKS) & (1 << 30), 0);
    await d.linkUp(dev);
    assert.strictEqual((dev.read(d.R.LINKS) >>> 28) & 3, 3, '10 Gb/s');
    assert.strictEqual(dev.read(d.R.AUTOC) & (1 << 12), 0, 'restart self-clears');
    assert.strictEqual((await model.stats(0)).linkUp, true);
    await model.link(0, false);
    assert.strictEqual(dev.read(d.R.LINKS) & (1 << 30), 0);
    assert.strictEqual((await model.stats(0)).linkUp, false);
    await model.link(0, true);
    assert.ok(dev.read(d.R.LINKS) & (1 << 30));
  });

  it('statistics clear on read: a first read holds every count, a driver that only reads sees each frame once (clear-on-read emulation)', async () => {
    await tenFramesCounted();
    assert.strictEqual(dev.read(d.R.GPRC), 10, 'the first read holds every frame since reset');
    await d.sleep(20); // the model sees the read (a watchpoint, native/model/watch.c) and answers it 10 ms later
    await model.source(0, { count: 10 });
    await model.waitFor(0, (x) => x.rxDelivered === 20);
    await d.sleep(5);
    assert.strictEqual(dev.read(d.R.GPRC), 10, 'a read cleared it: the next read has the frames since, as on the NIC');
    assert.strictEqual(dev.read(d.R.GPTC), 0);
    // outside GPRC's group (GPRC, GPTC, GORC, GOTC, MPC(0)) reads are not seen: a register never
    // taken holds every frame since reset
    assert.strictEqual(dev.read(d.R.QPRC0), 20);
    await d.sleep(5);
    dev.write(d.R.GPRC, 0);
    dev.write(d.R.QPRC0, 0);
    dev.write(d.R.TPR, 0);
    dev.write(d.R.GORCL, 0);
    dev.write(d.R.GORCH, 0);
    await model.source(0, { count: 20 });
    await model.waitFor(0, (x) => x.rxDelivered === 40);
    // a driver that clears after reading sees each frame exactly once
    assert.strictEqual(await d.collectStat(dev, d.R.GPRC, 20), 20);
    assert.strictEqual(await d.collectStat(dev, d.R.QPRC0, 20), 20);
    assert.strictEqual(await d.collectStat(dev, d.R.TPR, 20), 20);
    // GORC (36 bits, FCS counted): the two halves are added to as one 64-bit value
    let octets = 0;
    const end = Date.now() + 1000;
    while (octets < 20 * 64 && Date.now() < end) {
      const lo = dev.read(d.R.GORCL);
      const hi = dev.read(d.R.GORCH);
      if (lo || hi) { octets += hi * 2 ** 32 + lo; dev.write(d.R.GORCL, 0); dev.write(d.R.GORCH, 0); }
      await d.sleep(1);
    }
    assert.strictEqual(octets, 20 * 64);
    await d.sleep(5);
    assert.strictEqual(d.readStat(dev, d.R.GPRC), 0, 'nothing counted twice');
  });

  it('a driver that takes its counts and stops between its first read and its write of 0 loses nothing of the others', async () => {
    await tenFramesCounted();
    assert.strictEqual(dev.read(d.R.GPRC), 10);
    // descheduled here: the model sees the GPRC read in its next publish, 0.5 ms at most
    const until = Date.now() + 2;
    while (Date.now() < until);
    dev.write(d.R.GPRC, 0);
    // GORC still holds every octet (64 a frame, FCS counted): a take, not a read-only driver's read
    assert.strictEqual(d.readStat(dev, d.R.GORCL) + d.readStat(dev, d.R.GORCH) * 2 ** 32, 10 * 64);
    await d.sleep(20);
    assert.strictEqual(d.readStat(dev, d.R.GPRC), 0, 'nothing counted twice');
    assert.strictEqual(d.readStat(dev, d.R.GORCL), 0, 'nothing counted twice');
  });

  it('RAL/RAH 0 at the 82598 offsets 0x5400/0x5404 alias 0xA200/0xA204', async () => {
    await d.reset(dev);
    assert.strictEqual(dev.read(d.R.RAL0_82598), dev.read(d.R.RAL0));
    assert.strictEqual(dev.read(d.R.RAH0_82598), dev.read(d.R.RAH0));
    assert.strictEqual(dev.read(d.R.RAL0_82598), 0x00000002);   // 02:00:00:00:ff:00
    assert.strictEqual(dev.read(d.R.RAH0_82598), (0x80000000 | 0xff) >>> 0);
    dev.write(d.R.RAL0_82598, 0x44332211);
    await d.waitReg(dev, d.R.RAL0, 0xffffffff, 0x44332211);
    dev.write(d.R.RAH0, 0x80006655);
    await d.waitReg(dev, d.R.RAH0_82598, 0xffffffff, 0x80006655);
    assert.strictEqual(dev.read(d.R.RAL0_82598), 0x44332211);
  });

  it('remove PORT: every register and config byte reads all-ones, the port is gone', async () => {
    await d.readyRx(dev, mem);
    await model.source(0, { rate: 1000 });
    await model.command('remove 0');
    for (const off of [d.R.CTRL, d.R.LINKS, d.R.RDH, d.R.GPRC, 0x7fffc]) assert.strictEqual(dev.read(off), 0xffffffff);
    const cfg = fs.readFileSync(path.join(dev.dir, 'config'));
    assert.ok(cfg.every((b) => b === 0xff));
    dev.write(d.R.CTRL, 1 << 26);                           // writes go nowhere
    await d.sleep(30);
    assert.strictEqual(dev.read(d.R.CTRL), 0xffffffff);
    assert.strictEqual(dev.read(d.R.EEC), 0xffffffff);
    const s = await model.stats(0);
    assert.strictEqual(s.removed, true);
    assert.strictEqual(s.linkUp, false);
    await assert.rejects(model.source(0, {}), /port removed/);
    // stopping the model removes every port the same way
    const dev1 = d.open(model, 1);
    assert.strictEqual(dev1.read(d.R.EEC) & (1 << 9), 1 << 9);
    await model.stop();
    assert.strictEqual(dev1.read(d.R.EEC), 0xffffffff);
    assert.strictEqual(dev1.read(d.R.RAL0), 0xffffffff);
  });

  it('reports a bad DMA address in descErrors, completes it and keeps running', async () => {
    await d.readyTx(dev, mem);
    await model.sink(0);
    d.txDesc(mem, 0, 60, 0x7ff0_0000_0000);
    d.txDesc(mem, 1, 60);
    dev.write(d.R.TDT, 2);
    const s = await model.waitFor(0, (x) => x.descErrors >= 1 && x.txFrames === 1, 3000);
    assert.ok(d.txDone(mem, 0) && d.txDone(mem, 1));
    assert.strictEqual(s.sinkFrames, 1);
    assert.strictEqual((await model.stats(1)).descErrors, 0);
  });
});
