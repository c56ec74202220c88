'use strict';

// The model's interrupts (native/model/intr.c; 82599 datasheet 7.3 and 8.2.3.5), driven by
// writing the registers directly as a driver would. The model counts, per vector, those it
// sends (stats().interrupts); test/commands/idle.test.js has them delivered through an eventfd.
const assert = require('assert');
const d = require('../support/model-driver');

const EICR = 0x00800;
const EICS = 0x00808;
const EIAC = 0x00810;
const EITR = (v) => 0x00820 + 4 * v;
const EIMS = 0x00880;
const EIMC = 0x00888;
const EIAM = 0x00890;
const GPIE = 0x00898;
const IVAR = (n) => 0x00900 + 4 * n;
const GPIE_MULTIPLE_MSIX = 1 << 4;
const GPIE_EIAME = 1 << 30;
const VALID = 0x80; // IVAR entry: INT_Alloc_val
const SCAN_MS = 5; // the model takes register writes at its scan, about every 0.5 ms

// EITR value for an interval of `us` microseconds: ITR_INTERVAL (bits 11:3) in 2 us units,
// so at most 1022 us.
const itr = (us) => ((us / 2) << 3) >>> 0;

describe('model interrupts (82599 7.3)', function () {
  this.timeout(20000);
  let model;
  let dev;
  let mem;

  beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0, { link: true })); });
  afterEach(() => d.stopPort({ model, mem }));

  const interrupts = async () => (await model.stats(0)).interrupts;
  // `count` frames from the model's source into RX queue 0, and until they are written back.
  async function frames(count, rate = 0) {
    const before = (await model.stats(0)).rxDelivered;
    await model.source(0, { count, rate });
    await model.waitFor(0, (s) => s.rxDelivered >= before + count, 5000);
    await d.sleep(SCAN_MS);
  }
  // MSI-X mode with RX queue 0 on vector `vec` (IVAR(0) bits 7:0).
  async function msix(vec, { eiac = 0, eiam = 0, eitr = 0, eims = 1 << vec } = {}) {
    dev.write(GPIE, GPIE_MULTIPLE_MSIX | GPIE_EIAME);
    dev.write(IVAR(0), VALID | vec);
    dev.write(EIAC, eiac);
    dev.write(EIAM, eiam);
    dev.write(EITR(vec), eitr);
    dev.write(EIMS, eims);
    await d.sleep(SCAN_MS);
    await d.setupRx(dev, mem);
  }

  it('counts nothing and sets no cause when no IVAR entry is valid', async () => {
    dev.write(GPIE, GPIE_MULTIPLE_MSIX);
    dev.write(EIMS, 0xffff);
    await d.setupRx(dev, mem);
    await frames(10);
    assert.strictEqual(dev.read(EICR), 0);
    assert.deepStrictEqual(await interrupts(), new Array(16).fill(0));
  });

  it('MSI-X: an RX write-back sets its vector\'s EICR bit and sends it once; EIAC clears the cause, EIAM masks the vector', async () => {
    await msix(3, { eiac: 1 << 3, eiam: 1 << 3 });
    await frames(1);
    let irq = await interrupts();
    assert.strictEqual(irq[3], 1, `per vector: ${irq}`);
    assert.strictEqual(irq.reduce((a, b) => a + b), 1);
    assert.strictEqual(dev.read(EICR) & (1 << 3), 0, 'EIAC: cleared when sent');
    assert.strictEqual(dev.read(EIMS) & (1 << 3), 0, 'EIAM with GPIE.EIAME: masked when sent');

    // Masked: frames set the cause but send nothing, until EIMS enables the vector again.
    await frames(5);
    assert.strictEqual((await interrupts())[3], 1);
    assert.strictEqual(dev.read(EICR) & (1 << 3), 1 << 3, 'the cause waits in EICR');
    dev.write(EIMS, 1 << 3);
    await d.sleep(SCAN_MS);
    irq = await interrupts();
    assert.strictEqual(irq[3], 2, 're-enabling a vector with a cause pending sends it');
    assert.strictEqual(dev.read(EICR) & (1 << 3), 0);
  });

  it('MSI-X: a masked vector (EIMS clear) keeps its cause in EICR and sends nothing', async () => {
    await msix(2, { eims: 0 });
    await frames(10);
    assert.strictEqual(dev.read(EICR), 1 << 2);
    assert.strictEqual((await interrupts())[2], 0);
  });

  it('EICS sets causes, EIMC clears mask bits, EICR clears by writing ones', async () => {
    dev.write(GPIE, GPIE_MULTIPLE_MSIX);
    dev.write(EIMS, 0x3);
    await d.sleep(SCAN_MS);
    dev.write(EICS, 0x2);
    await d.sleep(SCAN_MS);
    assert.deepStrictEqual((await interrupts()).slice(0, 3), [0, 1, 0]);
    assert.strictEqual(dev.read(EICR), 0x2, 'no EIAC: the cause stays');
    assert.strictEqual(dev.read(EICS), 0, 'EICS is write-only in the model (README)');

    dev.write(EIMC, 0x2);
    await d.sleep(SCAN_MS);
    assert.strictEqual(dev.read(EIMS), 0x1);
    dev.write(EICS, 0x2);
    await d.sleep(SCAN_MS);
    assert.strictEqual((await interrupts())[1], 1, 'masked: not sent');

    dev.write(EIMS, 0x4); // sets bit 2, leaves bit 0
    await d.sleep(SCAN_MS);
    assert.strictEqual(dev.read(EIMS), 0x5);
    dev.write(EICR, 0xffffffff);
    await d.sleep(SCAN_MS);
    assert.strictEqual(dev.read(EICR), 0);
  });

  it('a TX descriptor with RS written back is its queue\'s cause (IVAR bits 15:8)', async () => {
    dev.write(GPIE, GPIE_MULTIPLE_MSIX);
    dev.write(IVAR(0), (VALID | 5) << 8);
    dev.write(EIMS, 1 << 5);
    await d.sleep(SCAN_MS);
    await d.setupTx(dev, mem);
    await model.sink(0);
    d.queueTxFrames(mem, 4, 60);
    dev.write(d.R.TDT, 4);
    await model.waitFor(0, (s) => s.txFrames === 4, 2000);
    await d.sleep(SCAN_MS);
    const irq = await interrupts();
    assert.ok(irq[5] >= 1, `per vector: ${irq}`);
    assert.strictEqual(irq.reduce((a, b) => a + b), irq[5]);
    assert.strictEqual(dev.read(EICR), 1 << 5);
  });

  it('EITR: a vector sends at most once per ITR interval; without it, more often', async () => {
    // Frames at 20 kpps for `ms`, the ring refilled as a driver would: every write-back
    // is a cause. Returns the interrupts sent meanwhile and the time it took.
    const stream = async (eitr, ms) => {
      await msix(1, { eiac: 1 << 1, eitr });
      let next = 0;
      const refill = setInterval(() => {
        while (d.rxDesc(mem, next).dd) {
          d.refillRx(mem, next);
          dev.write(d.R.RDT, next);
          next = (next + 1) % 256;
        }
      }, 1);
      const before = (await interrupts())[1];
      const t0 = performance.now();
      await model.source(0, { rate: 20000 });
      await d.sleep(ms);
      await model.sourceOff(0);
      const sent = (await interrupts())[1] - before;
      const took = performance.now() - t0;
      clearInterval(refill);
      return { sent, ms: took, delivered: (await model.stats(0)).rxDelivered };
    };
    const moderated = await stream(itr(1000), 400); // 1 ms: ITR_INTERVAL 500 (at most 511)
    assert.ok(moderated.delivered > 1000, `${moderated.delivered} frames`);
    assert.ok(moderated.sent >= 1);
    assert.ok(moderated.sent <= moderated.ms + 1, `${moderated.sent} interrupts in ${moderated.ms.toFixed(0)} ms: more than 1 per ms`);
    await d.resetLinkUp(dev);
    const free = await stream(0, 400);
    assert.ok(free.sent > 2 * (free.ms + 1), `without moderation ${free.sent} interrupts in ${free.ms.toFixed(0)} ms`);
  });

  it('legacy/MSI mode (no GPIE.Multiple_MSIX): IVAR picks the EICR bit, one interrupt counted as vector 0', async () => {
    dev.write(GPIE, 0);
    dev.write(IVAR(0), VALID | 2);
    dev.write(EIAC, 1 << 2); // no auto-clear outside MSI-X
    dev.write(EIMS, 1 << 2);
    await d.sleep(SCAN_MS);
    await d.setupRx(dev, mem);
    await frames(1);
    const irq = await interrupts();
    assert.strictEqual(irq[0], 1, `per vector: ${irq}`);
    assert.strictEqual(irq.reduce((a, b) => a + b), 1);
    assert.strictEqual(dev.read(EICR), 1 << 2);
  });

  it('a reset clears causes, masks and the mapping', async () => {
    await msix(4);
    await frames(1);
    await d.reset(dev);
    for (const off of [EICR, EIMS, GPIE, IVAR(0)]) assert.strictEqual(dev.read(off), 0, `0x${off.toString(16)}`);
    const before = (await interrupts())[4];
    await d.linkUp(dev);
    await d.setupRx(dev, mem);
    await frames(5);
    assert.strictEqual((await interrupts())[4], before);
    assert.strictEqual(dev.read(EICR), 0);
  });
});

// The ixgbe driver's side (setupInterrupts in lib/intel/nic.js, MSI-X as 7.3 sets it
// up), checked against the model's interrupts: every RX queue's cause on vector 0, which clears its cause and masks
// itself when sent; armInterrupt() unmasks it, disarmInterrupt() masks it. (Delivery, the
// model's eventfd or VFIO's, is in test/commands/idle.test.js and the VM's tests.)
describe('ixgbe interrupt programming, on the model', function () {
  this.timeout(20000);
  const ixy = require('../../lib/index');
  const { PacketBatch } = require('../../lib/memory/batch');
  const { modelForSuite } = require('../support/helpers');
  const model = modelForSuite(1);

  it('maps RX queue 0 to vector 0 with auto-clear and auto-mask; armInterrupt() lets one interrupt through', async function () {
    const dev = await ixy.open(model().addresses[0]);
    const read = (off) => dev.regs[off >> 2] >>> 0;
    try {
      // Device.interrupts() calls it when a loop first sleeps on interrupts.
      dev.setupInterrupts();
      await d.sleep(SCAN_MS);
      assert.strictEqual(read(GPIE) & (GPIE_MULTIPLE_MSIX | GPIE_EIAME), (GPIE_MULTIPLE_MSIX | GPIE_EIAME) >>> 0, 'GPIE');
      assert.strictEqual(read(IVAR(0)) & 0xff, VALID, 'IVAR(0): RX queue 0 on vector 0');
      assert.strictEqual(read(EIAC) & 1, 1, 'EIAC');
      assert.strictEqual(read(EIAM) & 1, 1, 'EIAM');
      const sent = async () => (await model().stats(0)).interrupts[0];
      const batch = new PacketBatch(32);
      const frame = async () => {
        const before = (await model().stats(0)).rxDelivered;
        await model().source(0, { count: 1 });
        await model().waitFor(0, (s) => s.rxDelivered > before, 2000);
        await d.sleep(SCAN_MS);
      };

      await frame(); // masked: no interrupt, the cause waits
      assert.strictEqual(await sent(), 0);
      assert.strictEqual(read(EICR) & 1, 1);
      assert.strictEqual(dev.rxBatch(0, batch), 1);
      batch.release();

      // Unmasking with a cause waiting sends it at once (one early wake-up of a loop that
      // has polled that frame already); sending clears the cause and masks the vector.
      dev.armInterrupt();
      await d.sleep(SCAN_MS);
      assert.strictEqual(await sent(), 1);
      assert.strictEqual(read(EIMS) & 1, 0, 'the vector masked itself (EIAM)');
      assert.strictEqual(read(EICR) & 1, 0, 'its cause cleared itself (EIAC)');

      dev.armInterrupt();
      await d.sleep(SCAN_MS);
      assert.strictEqual(await sent(), 1, 'armed, no cause: nothing');
      await frame();
      assert.strictEqual(await sent(), 2, 'armed: the next frame interrupts');
      assert.strictEqual(read(EIMS) & 1, 0);
      await frame();
      assert.strictEqual(await sent(), 2, 'masked until armed again');
      assert.strictEqual(dev.rxBatch(0, batch), 2);
      batch.release();

      dev.armInterrupt(); // sends the waiting cause of the last frame
      await d.sleep(SCAN_MS);
      assert.strictEqual(await sent(), 3);
      dev.armInterrupt();
      await d.sleep(SCAN_MS);
      dev.disarmInterrupt();
      await d.sleep(SCAN_MS);
      await frame();
      assert.strictEqual(await sent(), 3, 'disarmed: no interrupt');
    } finally {
      dev.close();
    }
  });

  it('maps every RX queue to vector 0 in its own IVAR entry and leaves the TX entries invalid', async function () {
    const dev = await ixy.open(model().addresses[0], { rxQueues: 3 });
    const read = (off) => dev.regs[off >> 2] >>> 0;
    try {
      dev.setupInterrupts();
      // RX queue 2n in bits 7:0 of IVAR(n), 2n + 1 in bits 23:16; TX entries (15:8, 31:24) untouched.
      assert.strictEqual(read(IVAR(0)), ((VALID << 16) | VALID) >>> 0, 'IVAR(0): RX queues 0 and 1');
      assert.strictEqual(read(IVAR(1)) & 0xffff, VALID, 'IVAR(1): RX queue 2, TX queue 2 invalid');
    } finally {
      dev.close();
    }
  });
});
