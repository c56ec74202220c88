'use strict';
// IEEE 1588 on the device model (82599 7.9, registers 8.2.3.26; native/model/ptp.c): SYSTIM
// advancing per TIMINCA, TX timestamps for descriptors that ask (MAC.1588 bit), RX timestamps
// for PTP frames the ETQF filter with the 1588 bit and TSYNCRXCTL.Type select, one latched
// value until the driver releases it. Tolerances are facts of the model's clock: a timestamp
// is SYSTIM at the frame's wire time, which moves in ticks of 6.4 ns; pcap nanoseconds are the
// wire clock rounded down.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { readPcap } = require('../../lib/pcap-file');
const d = require('../support/model-driver');

const R = {
  TSYNCRXCTL: 0x05188, RXSTMPL: 0x051E8, RXSTMPH: 0x051A4, RXMTRL: 0x05120, TSYNCTXCTL: 0x08C00,
  TXSTMPL: 0x08C04, TXSTMPH: 0x08C08, SYSTIML: 0x08C0C, SYSTIMH: 0x08C10, TIMINCA: 0x08C14,
  ETQF: (n) => 0x05128 + 4 * n,
};
const VALID = 1; // RXTT / TXTT
const EN = 1 << 4;
const TYPE_L2_V2 = 0 << 1;
const TYPE_EVENT_V2 = 5 << 1;
const ETQF_1588 = 1 << 30;
const ETQF_EN = 1 << 31;
const PTP_ETHERTYPE = 0x88f7;
// SYSTIM in tenths of a nanosecond: 64 every 6.4 ns period.
const TIMINCA = (1 << 24) | 64;
const TICK = 64;
const MAC_TSTAMP = 1 << 19; // advanced TX data descriptor, IEEE 1588 timestamp
const TX_RING = 64 * 1024;

const systim = (dev) => dev.read(R.SYSTIMH) * 2 ** 32 + dev.read(R.SYSTIML);
const rxStamp = (dev) => dev.read(R.RXSTMPH) * 2 ** 32 + dev.read(R.RXSTMPL);
const txStamp = (dev) => dev.read(R.TXSTMPH) * 2 ** 32 + dev.read(R.TXSTMPL);
// Releasing a latch: write the control register with the valid bit clear after reading the
// high register (README, "IEEE 1588"; on the NIC the read has released it already).
const releaseRx = (dev) => dev.write(R.TSYNCRXCTL, dev.read(R.TSYNCRXCTL) & ~VALID);
const releaseTx = (dev) => dev.write(R.TSYNCTXCTL, dev.read(R.TSYNCTXCTL) & ~VALID);

// A PTP V2 frame over Ethernet to port 1: messageType, versionPTP 2, sequenceId.
function ptpFrame(buf, { type = 0, seq = 0, ethertype = PTP_ETHERTYPE } = {}) {
  buf.fill(0, 0, 60);
  buf.set([2, 0, 0, 0, 0xff, 1, 2, 0, 0, 0, 0xee, 0, ethertype >> 8, ethertype & 0xff], 0);
  buf[14] = type;
  buf[15] = 2;
  buf[16] = 0; buf[17] = 44; // messageLength
  buf[44] = seq >> 8; buf[45] = seq & 0xff;
}

// Waits until SYSTIM was published `n` times more (each slow scan publishes it): the model
// has seen every register written before.
async function scans(dev, n = 2) {
  let last = dev.read(R.SYSTIML);
  const end = Date.now() + 5000;
  for (let seen = 0; seen < n;) {
    if (Date.now() > end) throw new Error(`SYSTIM was not published (SYSTIML stays ${last})`);
    await d.sleep(1);
    const now = dev.read(R.SYSTIML);
    if (now !== last) { seen++; last = now; }
  }
}

describe('IEEE 1588 timestamps (device model)', function () {
  this.timeout(20000);
  let model, dev, mem, dev1, mem1, dir, next, file;
  before(async () => {
    ({ model, dev, mem } = await d.startPort(0));
    ({ dev1, mem1 } = await d.cableToPort1(model, dev, mem));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-ptp-'));
    file = path.join(dir, 'tx.pcap');
    await model.pcapOut(0, file, { nanoseconds: true });
    next = 0;
  });
  after(async () => {
    if (mem1) mem1.free();
    await d.stopPort({ model, mem });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Sends frames (each { ptp: {type, seq} } or { udp: true }, stamp: MAC.1588 in the
  // descriptor) in one batch; returns their wire times in ns (BigInt) from the capture.
  async function send(frames) {
    const first = next;
    frames.forEach((f, k) => {
      const i = first + k;
      const buf = mem.bytes.subarray(d.txBuf(i));
      if (f.udp) d.buildFrame(buf, { size: 60, seq: i, dst: [2, 0, 0, 0, 0xff, 1] });
      else ptpFrame(buf, f.ptp);
      d.txDesc(mem, i, 60);
      if (f.stamp) mem.u32[(TX_RING + i * 16) / 4 + 2] |= MAC_TSTAMP;
    });
    next += frames.length;
    const before = (await model.stats(1)).rxDelivered;
    dev.write(d.R.TDT, next);
    await model.waitFor(1, (s) => s.rxDelivered === before + frames.length);
    await model.pcapOut(0, null); // flushed; reopened to append
    const all = readPcap(file).frames.map((f) => BigInt(f.sec) * 1000000000n + BigInt(f.nsec));
    await model.pcapOut(0, file, { nanoseconds: true });
    return all.slice(first);
  }

  it('SYSTIM stands still while TIMINCA is 0, then advances by Incvalue per Incperiod', async () => {
    await scans(dev1, 0);
    assert.strictEqual(systim(dev), 0, 'TIMINCA 0 after reset: SYSTIM stays 0 (link came up meanwhile)');
    dev.write(R.TIMINCA, TIMINCA);
    dev1.write(R.TIMINCA, TIMINCA);
    await model.waitFor(0, () => systim(dev) > 0 && systim(dev1) > 0);
    const a = systim(dev);
    await scans(dev);
    const b = systim(dev);
    assert.ok(b > a, `SYSTIM ${a} then ${b}`);
    assert.strictEqual(a % TICK, 0, 'whole increments from 0');
    assert.strictEqual(b % TICK, 0);
    // the driver sets the time: SYSTIM goes on from there (2^32 tenths of ns: 0.43 s)
    dev.write(R.SYSTIML, 0);
    dev.write(R.SYSTIMH, 7);
    await scans(dev);
    assert.ok(systim(dev) >= 7 * 2 ** 32, `SYSTIM ${systim(dev)} after setting 7 << 32`);
  });

  // Two NICs' clocks are live: read one after the other, they differ by their offset, which
  // is what ixy latency measures (timesync.js clockOffset()). The model refreshes the
  // registers at its scans, every port's from one instant in a row (native/model/ptp.c,
  // ptp_publish()), so a read of port 1 comes from port 0's scan unless it fell inside
  // that row.
  it('two ports\' SYSTIM, read one after the other, show one instant of the model', async () => {
    dev.write(R.TIMINCA, TIMINCA);
    dev1.write(R.TIMINCA, TIMINCA);
    await model.waitFor(0, () => systim(dev) > 0 && systim(dev1) > 0);
    await scans(dev);
    const gaps = [];
    const end = performance.now() + 300;
    while (performance.now() < end) {
      for (let k = 0; k < 1000; k++) {
        const a1 = systim(dev);
        const b = systim(dev1);
        if (systim(dev) === a1) gaps.push(b - a1); // no refresh of port 0 in between
      }
    }
    const median = gaps.slice().sort((x, y) => x - y)[gaps.length >> 1];
    const apart = gaps.filter((g) => Math.abs(g - median) > 10000 * 10).length; // over 10 us
    assert.ok(gaps.length > 100000, `${gaps.length} reads`);
    // The row takes a few stores; only a preemption of the model inside it leaves reads
    // between two scans.
    assert.ok(apart / gaps.length < 0.0005, `${apart} of ${gaps.length} reads of port 1 from another scan than port 0's`);
  });

  it('TX: a descriptor with the 1588 bit latches TXSTMP at the frame\'s wire time; RX: a PTP event frame latches RXSTMP', async () => {
    dev.write(R.TSYNCTXCTL, EN);
    dev1.write(R.ETQF(3), (ETQF_EN | ETQF_1588 | PTP_ETHERTYPE) >>> 0);
    dev1.write(R.TSYNCRXCTL, EN | TYPE_EVENT_V2);
    await scans(dev);
    await scans(dev1);

    // neither a frame without the 1588 bit nor a frame that is not PTP is stamped
    await send([{ udp: true }, { ptp: { type: 0, seq: 1 } }]);
    assert.strictEqual(dev.read(R.TSYNCTXCTL) & VALID, 0, 'no TX timestamp without the descriptor bit');
    await send([{ udp: true, stamp: true }]);
    assert.strictEqual(dev.read(R.TSYNCTXCTL) & VALID, VALID, 'TX timestamps what the descriptor asks for');
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, VALID, 'the PTP Sync frame before was stamped');
    releaseTx(dev);
    releaseRx(dev1);
    await send([{ udp: true }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, 0, 'a UDP frame is not stamped on RX');

    // two Sync frames sent apart: the stamps differ as the wire times do, within a tick
    const [ta] = await send([{ ptp: { type: 0, seq: 2 }, stamp: true }]);
    const txA = txStamp(dev);
    const rxA = rxStamp(dev1);
    assert.strictEqual(dev.read(R.TSYNCTXCTL) & VALID, VALID);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, VALID);
    releaseTx(dev);
    releaseRx(dev1);
    await scans(dev, 1);
    const [tb] = await send([{ ptp: { type: 1, seq: 3 }, stamp: true }]);
    const txB = txStamp(dev);
    const rxB = rxStamp(dev1);
    const wire = Number(tb - ta) * 10; // tenths of ns
    assert.ok(Math.abs(txB - txA - wire) <= TICK + 10, `TX stamps ${txB - txA}, wire ${wire} (0.1 ns)`);
    assert.ok(Math.abs(rxB - rxA - wire) <= TICK + 10, `RX stamps ${rxB - rxA}, wire ${wire} (0.1 ns)`);
    // a cable of no length: RX minus TX is the difference of the two ports' clocks only
    assert.ok(Math.abs((rxB - txB) - (rxA - txA)) <= TICK, `${rxA - txA} then ${rxB - txB}`);

    // The latch holds: of two stamped frames in a row (67.2 ns apart) the first one's time
    // stays, and a third frame while still valid changes nothing.
    releaseTx(dev);
    releaseRx(dev1);
    const stamped = (await model.stats(0)).ptpTxStamped;
    const [tc, td] = await send([{ ptp: { type: 0, seq: 4 }, stamp: true }, { ptp: { type: 0, seq: 5 }, stamp: true }]);
    assert.ok(Math.abs(Number(td - tc) - 67.2) < 1, `${td - tc} ns apart`);
    const expectC = txA + Number(tc - ta) * 10;
    assert.ok(Math.abs(txStamp(dev) - expectC) <= TICK + 10, `TX latch ${txStamp(dev)}, frame C at ${expectC}`);
    assert.ok(Math.abs(rxStamp(dev1) - (rxA + Number(tc - ta) * 10)) <= TICK + 10, 'RX latch holds frame C');
    assert.strictEqual((await model.stats(0)).ptpTxStamped, stamped + 1);
    const held = rxStamp(dev1);
    await send([{ ptp: { type: 0, seq: 6 }, stamp: true }]);
    assert.strictEqual(rxStamp(dev1), held, 'RXSTMP is kept while RXTT is set');
  });

  it('RX: only the message type TSYNCRXCTL.Type selects, only through an ETQF filter with the 1588 bit', async () => {
    releaseRx(dev1);
    // Type 000b (L2 V2): MessageType = RXMTRL.MSGT (bits 15:8), here Delay_Req (1)
    dev1.write(R.RXMTRL, 1 << 8);
    dev1.write(R.TSYNCRXCTL, EN | TYPE_L2_V2);
    await scans(dev1);
    await send([{ ptp: { type: 0, seq: 7 } }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, 0, 'Sync is not MSGT');
    await send([{ ptp: { type: 1, seq: 8 } }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, VALID, 'Delay_Req is');
    releaseRx(dev1);
    // Type 101b: every event message (MessageType bit 3 zero), no general ones (Follow_Up, 8)
    dev1.write(R.TSYNCRXCTL, EN | TYPE_EVENT_V2);
    await scans(dev1);
    await send([{ ptp: { type: 8, seq: 9 } }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, 0, 'Follow_Up is not an event message');
    // the filter without its 1588 bit: nothing; another EType: nothing
    dev1.write(R.ETQF(3), (ETQF_EN | PTP_ETHERTYPE) >>> 0);
    await scans(dev1);
    await send([{ ptp: { type: 0, seq: 10 } }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, 0, 'ETQF without the 1588 bit');
    dev1.write(R.ETQF(3), (ETQF_EN | ETQF_1588 | PTP_ETHERTYPE) >>> 0);
    await scans(dev1);
    await send([{ ptp: { type: 0, seq: 11, ethertype: 0x88f8 } }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, 0, 'another EType');
    // En clear: nothing
    dev1.write(R.TSYNCRXCTL, TYPE_EVENT_V2);
    await scans(dev1);
    await send([{ ptp: { type: 0, seq: 12 } }]);
    assert.strictEqual(dev1.read(R.TSYNCRXCTL) & VALID, 0, 'TSYNCRXCTL.En clear');
  });
});
