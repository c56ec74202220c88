'use strict';
// Tests of the 82599 device model's transmit path (native/model/tx.c) and of a cable
// between two ports, through a minimal test driver (test/support/model-driver.js).

const assert = require('assert');
const d = require('../support/model-driver');

describe('device model: transmit and cable', function () {
  this.timeout(10000);

  let model, dev, mem;
  beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0)); });
  afterEach(() => d.stopPort({ model, mem }));

  it('transmits: DD written back for RS, sink checks sequence and checksum', async () => {
    await d.readyTx(dev, mem);
    await model.sink(0, { check: true });
    for (let i = 0; i < 20; i++) {
      d.buildFrame(mem.bytes.subarray(d.txBuf(i)), { size: 100, seq: i });
      d.txDesc(mem, i, 100);
    }
    dev.write(d.R.TDT, 20);
    const s = await model.waitFor(0, (x) => x.txFrames === 20);
    assert.strictEqual(s.sinkFrames, 20);
    assert.strictEqual(s.sinkSeqErrors, 0);
    assert.strictEqual(s.sinkBadFrames, 0);
    assert.strictEqual(s.txBytes, 2000);
    for (let i = 0; i < 20; i++) assert.ok(d.txDone(mem, i), `DD ${i}`);
    await d.waitReg(dev, d.R.TDH, 0xffff, 20);
    assert.strictEqual(dev.read(d.R.GPTC), 20);
  });

  it('a TX queue turned off and on between two scans starts again from the TDH software wrote', async () => {
    await d.readyTx(dev, mem);
    for (let i = 0; i < 5; i++) d.txDesc(mem, i, 100);
    dev.write(d.R.TDT, 5);
    await d.waitReg(dev, d.R.TDH, 0xffff, 5); // sent, and TDH published
    await model.stall(0, 300);
    for (let i = 5; i < 8; i++) d.txDesc(mem, i, 100);
    dev.write(d.R.TDT, 8);
    await d.sleep(20);
    const before = (await model.stats(0)).txFrames;
    // Off, rewound and on again at once, as a driver recovering from a hang does: far
    // quicker than the model's scan, so only the rewritten TDH tells it.
    dev.write(d.R.TXDCTL, dev.read(d.R.TXDCTL) & ~(1 << 25));
    mem.u32.fill(0, (64 * 1024) / 4, (64 * 1024 + 256 * 16) / 4);
    dev.write(d.R.TDH, 0);
    dev.write(d.R.TDT, 0);
    dev.write(d.R.TXDCTL, dev.read(d.R.TXDCTL) | (1 << 25));
    for (let i = 0; i < 2; i++) d.txDesc(mem, i, 100);
    dev.write(d.R.TDT, 2);
    const s = await model.waitFor(0, (x) => x.txFrames >= before + 2, 2000);
    await d.sleep(50);
    assert.strictEqual((await model.stats(0)).txFrames, before + 2, 'exactly the two new frames, from descriptor 0');
    assert.strictEqual(s.descErrors, 0);
    assert.ok(d.txDone(mem, 0) && d.txDone(mem, 1));
    await d.waitReg(dev, d.R.TDH, 0xffff, 2);
  });

  it('does not send frames shorter than 17 or longer than 1514 bytes, but completes them', async () => {
    await d.readyTx(dev, mem);
    await model.sink(0);
    const lens = [16, 60, 1515, 17, 1514];
    lens.forEach((len, i) => d.txDesc(mem, i, len));
    d.txDesc(mem, 5, 10, undefined, false);       // 10 + 6 bytes over two descriptors
    d.txDesc(mem, 6, 6);
    d.txDesc(mem, 7, 1000, undefined, false);     // 1000 + 515 bytes
    d.txDesc(mem, 8, 515);
    dev.write(d.R.TDT, 9);
    const s = await model.waitFor(0, (x) => x.txFrames + x.txDropBadLength === 7);
    assert.strictEqual(s.txFrames, 3);
    assert.strictEqual(s.txBytes, 60 + 60 + 1514); // the 17-byte frame leaves padded (HLREG0.TXPADEN)
    assert.strictEqual(s.txDropBadLength, 4);
    for (let i = 0; i < 9; i++) assert.ok(d.txDone(mem, i), `DD ${i}`);
    assert.strictEqual(await d.collectStat(dev, d.R.GPTC, 3), 3);
    // with jumbo frames the limit is MFS - 4
    dev.write(d.R.HLREG0, dev.read(d.R.HLREG0) | 4);
    dev.write(d.R.MAXFRS, 3000 << 16);
    // The model takes MAXFRS in its slow scan, where it also answers commands: after two
    // answers a whole scan has passed since the write.
    await model.stats(0);
    await model.stats(0);
    d.txDesc(mem, 9, 2996);
    d.txDesc(mem, 10, 2997);
    dev.write(d.R.TDT, 11);
    const t = await model.waitFor(0, (x) => x.txFrames + x.txDropBadLength === 9);
    assert.strictEqual(t.txFrames, 4);
    assert.strictEqual(t.txDropBadLength, 5);
  });

  it('cable: TX of port 0 arrives in RX of port 1', async () => {
    const { mem1 } = await d.cableToPort1(model, dev, mem);
    try {
      d.buildFrame(mem.bytes.subarray(d.txBuf(0)), { size: 64, seq: 7, dst: [2, 0, 0, 0, 0xff, 1] });
      d.txDesc(mem, 0, 64);
      dev.write(d.R.TDT, 1);
      await model.waitFor(1, (x) => x.rxDelivered === 1);
      const r = d.rxDesc(mem1, 0);
      assert.strictEqual(r.length, 64);
      assert.strictEqual(Buffer.from(r.data).readUInt32BE(42), 7);
    } finally {
      mem1.free();
    }
  });
});
