'use strict';

// The ixgbe/igb base (lib/intel/nic.js) reads link speed, promiscuous mode and the
// statistics counters through each driver's register table, and lib/intel/rss.js programs
// RSS through it. Checked for both tables on a register file in plain memory, with the
// offsets and values each datasheet gives.
const assert = require('assert');
const { IntelNic } = require('../../lib/intel/nic');
const IXGBE = require('../../lib/intel/ixgbe/registers');
const IGB = require('../../lib/intel/igb/registers');
const { setupRss, queueOfHash } = require('../../lib/intel/rss');

// The base's methods on `layout`'s registers, without a device behind them.
function nicOn(layout) {
  const nic = Object.create(IntelNic.prototype);
  Object.assign(nic, { layout, regs: new Uint32Array(layout.MIN_BAR_BYTES / 4), closed: false, missedCounters: layout.MISSED_COUNTERS, missed: 0, hardwareErrors: 0 });
  return nic;
}

const set = (nic, offset, value) => { nic.regs[offset >> 2] = value; };
const get = (nic, offset) => nic.regs[offset >> 2];

describe('the register tables the ixgbe/igb base reads', function () {
  it('give the link speed from LINKS (82599 8.2.3.22.20) and STATUS (82576 8.2.2), 0 when down', function () {
    const ixgbe = nicOn(IXGBE);
    for (const [field, mbps] of [[1, 100], [2, 1000], [3, 10000]]) {
      set(ixgbe, IXGBE.LINKS, IXGBE.LINKS_UP | (field << 28));
      assert.strictEqual(ixgbe.linkSpeed, mbps, `LINKS speed field ${field}`);
      set(ixgbe, IXGBE.LINKS, field << 28);
      assert.strictEqual(ixgbe.linkSpeed, 0, 'link down');
    }
    const igb = nicOn(IGB);
    for (const [field, mbps] of [[0, 10], [1, 100], [2, 1000], [3, 1000]]) {
      set(igb, IGB.STATUS, IGB.STATUS_LU | (field << 6));
      assert.strictEqual(igb.linkSpeed, mbps, `STATUS speed field ${field}`);
      set(igb, IGB.STATUS, field << 6);
      assert.strictEqual(igb.linkSpeed, 0, 'link down');
    }
  });

  it('switch unicast and multicast promiscuous in FCTRL (82599) and RCTL (82576), other bits kept', function () {
    for (const [layout, reg, bits, other] of [
      [IXGBE, IXGBE.FCTRL, IXGBE.FCTRL_UPE | IXGBE.FCTRL_MPE, IXGBE.FCTRL_BAM],
      [IGB, IGB.RCTL, IGB.RCTL_UPE | IGB.RCTL_MPE, IGB.RCTL_EN | IGB.RCTL_BAM],
    ]) {
      const nic = nicOn(layout);
      set(nic, reg, other);
      assert.strictEqual(nic.promiscuous, false);
      nic.promiscuous = true;
      assert.strictEqual(get(nic, reg), (other | bits) >>> 0);
      assert.strictEqual(nic.promiscuous, true);
      nic.promiscuous = false;
      assert.strictEqual(get(nic, reg), other >>> 0);
    }
  });

  it('count each dropped and each broken frame once, from every counter the datasheet has for it', function () {
    const ixgbe = nicOn(IXGBE);
    for (let i = 0; i < 8; i++) set(ixgbe, IXGBE.MPC(i), 1); // 8 packet buffers
    for (let q = 0; q < 16; q++) set(ixgbe, IXGBE.QPRDC(q), 2); // 16 queues with DROP_EN
    for (const reg of [IXGBE.CRCERRS, IXGBE.RLEC, IXGBE.RUC, IXGBE.RFC, IXGBE.ROC, IXGBE.RJC]) set(ixgbe, reg, 3);
    assert.strictEqual(ixgbe.readMissed(), 8 + 32);
    assert.strictEqual(ixgbe.readErrors(), 18);
    assert.strictEqual(ixgbe.readMissed(), 40, 'a counter that was read is not counted again');
    assert.strictEqual(ixgbe.readErrors(), 18);

    const igb = nicOn(IGB);
    set(igb, IGB.MPC, 5);
    for (let q = 0; q < 16; q++) set(igb, 0x0c030 + 0x40 * q, 2); // RQDPC: 16 queues with DROP_EN
    set(igb, IGB.CRCERRS, 7);
    assert.strictEqual(igb.readMissed(), 5 + 32);
    assert.strictEqual(igb.readErrors(), 7);
  });

  it('list every counter as clear-on-read, and resetStatistics() starts each from zero', function () {
    for (const layout of [IXGBE, IGB]) {
      for (const reg of [...layout.MISSED_COUNTERS, ...layout.ERROR_COUNTERS, layout.GPRC, layout.GPTC, layout.GORCL, layout.GORCH]) {
        assert.ok(layout.CLEAR_ON_READ.includes(reg), `0x${reg.toString(16)} is not listed as clear-on-read`);
      }
      const nic = nicOn(layout);
      for (const reg of layout.CLEAR_ON_READ) set(nic, reg, 9);
      nic.resetStatistics();
      for (const reg of layout.CLEAR_ON_READ) assert.strictEqual(get(nic, reg), 0);
      assert.strictEqual(nic.readMissed(), 0);
      assert.strictEqual(nic.readErrors(), 0);
    }
  });

  it('program RSS where each datasheet has it: key in RSSRK, queues in RETA, RXCSUM.PCSD, MRQC', function () {
    // [layout, RSSRK(0), RETA(0), RXCSUM, MRQC, MRQC with RSS on and IPv4, TCP/IPv4, UDP/IPv4 hashed]
    for (const [layout, rssrk, reta, rxcsum, mrqc, on] of [
      [IXGBE, 0x0eb80, 0x0eb00, 0x05000, 0x0ec80, 0x00430001], // 82599 8.2.3.7: MRQE 0001b
      [IGB, 0x05c80, 0x05c00, 0x05000, 0x05818, 0x00430002], // 82576 8.10: enable 010b, RSS only
    ]) {
      const nic = nicOn(layout);
      set(nic, rxcsum, 0x300); // IPOFLD, TUOFLD: kept
      setupRss(nic.regs, layout, 3);
      // The published verification key, byte 4i+j in byte j of RSSRK(i).
      assert.strictEqual(get(nic, rssrk), 0xda565a6d);
      assert.strictEqual(get(nic, rssrk + 36), 0xfa01acbe);
      // Entry 4i+j in byte j of RETA(i): queues 0, 1, 2 in turn over all 128 entries.
      assert.strictEqual(get(nic, reta), 0x00020100);
      assert.strictEqual(get(nic, reta + 4), 0x01000201);
      for (let e = 0; e < 128; e++) {
        const entry = (get(nic, reta + 4 * (e >> 2)) >>> (8 * (e & 3))) & 0xff;
        assert.strictEqual(entry, queueOfHash(e, 3), `RETA entry ${e}`);
      }
      assert.strictEqual(get(nic, rxcsum), 0x2300, 'RXCSUM.PCSD (bit 13): the hash in the write-back');
      assert.strictEqual(get(nic, mrqc), on, 'MRQC');
    }
  });
});
