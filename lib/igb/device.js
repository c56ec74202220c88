'use strict';

// The Intel 82576 (igb) driver: reset and initialisation following the 82576 datasheet's
// section 4.5, one method per step; RX/TX rings are the advanced-descriptor queues shared
// with ixgbe (lib/advanced), given this NIC's register layout.
// Datasheet: Intel 82576EB GbE Controller Datasheet. The I350 keeps these registers and bits.
// Tested against QEMU's igb model (test/vm), not on hardware.
const R = require('./registers');
const { AdvancedNic } = require('../advanced/nic');
const { IxyError } = require('../errors');
const { sleepSync, pollRegister } = require('../wait');

const MAX_QUEUES = 16; // 82576: 16 RX and 16 TX queues (I350: 8)

const DEFAULTS = {
  rxQueues: 1,
  txQueues: 1,
  rxRingSize: 512,
  rxFreeThreshold: null, // descriptors per RDT write; null: a quarter of the RX ring
  txRingSize: 512,
  mempoolEntries: null, // per RX queue; null: 4096, or twice the RX ring if that is more
  bufferSize: 2048,
  promiscuous: true,
  linkTimeout: 10000, // ms
};

class IgbDevice extends AdvancedNic {
  // Resets and initialises the device (the constructor runs resetAndInit); use
  // IgbDevice.open() to also wait for link.
  constructor(address, options = {}) {
    // RDLEN/TDLEN: a multiple of 128 bytes (8.10, 8.12), at most 4096 descriptors here.
    super(address, 'igb', { layout: R, defaults: DEFAULTS, options, maxQueues: MAX_QUEUES, maxRingSize: 4096 });
  }

  // 4.5.3 Initialization sequence.
  resetAndInit() {
    this.disableInterrupts();
    this.globalReset();
    this.disableInterrupts();
    this.waitForEeprom();
    this.setupLink();
    this.resetStatistics();
    this.initRx();
    this.initTx();
    for (const q of this.rxQueues) q.start(this.waitSet);
    for (const q of this.txQueues) q.start(this.waitSet);
    this.promiscuous = this.options.promiscuous;
  }

  // 4.5.4: mask every interrupt cause (legacy IMC and extended EIMC); ixy polls.
  disableInterrupts() {
    this.regs[R.IMC >> 2] = R.IMC_ALL;
    this.regs[R.EIMC >> 2] = R.EIMC_ALL;
  }

  // 4.5.5 (and 4.3.1 software reset): CTRL.RST resets the MAC and clears itself; the
  // datasheet asks for a wait of at least 1 ms before the device is accessed again.
  globalReset() {
    this.regs[R.CTRL >> 2] |= R.CTRL_RST;
    sleepSync(1);
    this.waitClear(R.CTRL, R.CTRL_RST, 'the device reset to finish (CTRL.RST)');
    sleepSync(10);
  }

  // 4.5.3: after reset the NIC reloads its configuration from the EEPROM (EEC.AUTO_RD).
  // QEMU's igb model never sets AUTO_RD (it has no EEPROM timing); what ixy needs from the
  // auto-read is the MAC address, valid in RAH0 (AV). Accept that when AUTO_RD stays clear.
  waitForEeprom() {
    const start = Date.now();
    while ((this.regs[R.EEC >> 2] & R.EEC_AUTO_RD) === 0) {
      const waited = Date.now() - start;
      if (waited > 20 && (this.regs[R.RAH(0) >> 2] & R.RAH_AV) !== 0) return;
      if (waited > 2000) throw new IxyError('ETIMEDOUT', 'timed out after 2000 ms waiting for the EEPROM auto-read (EEC.AUTO_RD)');
      sleepSync(1);
    }
  }

  // 4.5.7.2 MAC/PHY link setup for the internal copper PHY: no forced speed or duplex;
  // CTRL.SLU lets the MAC take the link the PHY reports, and the PHY (reset with the MAC)
  // is told to autonegotiate again. open() waits for STATUS.LU.
  setupLink() {
    this.regs[R.CTRL >> 2] |= R.CTRL_SLU;
    const control = this.phyRead(R.PHY_CTRL);
    this.phyWrite(R.PHY_CTRL, control | R.PHY_CTRL_AN_ENABLE | R.PHY_CTRL_RESTART_AN);
  }

  // 8.2.4 MDIC: one PHY register access; the NIC sets READY when done, ERROR if it failed.
  mdic(command, what) {
    const regs = this.regs;
    regs[R.MDIC >> 2] = command;
    pollRegister(regs, R.MDIC, R.MDIC_READY, true, `the PHY to answer (MDIC.READY, ${what})`);
    const value = regs[R.MDIC >> 2];
    if ((value & R.MDIC_ERROR) !== 0) throw new IxyError('EIO', `the PHY of ${this.address} refused ${what}`);
    return value & 0xffff;
  }

  phyRead(reg) {
    return this.mdic(R.MDIC_OP_READ | (R.MDIC_PHY_INTERNAL << R.MDIC_PHYADD_SHIFT) | (reg << R.MDIC_REGADD_SHIFT), `a read of PHY register ${reg}`);
  }

  phyWrite(reg, value) {
    this.mdic(R.MDIC_OP_WRITE | (R.MDIC_PHY_INTERNAL << R.MDIC_PHYADD_SHIFT) | (reg << R.MDIC_REGADD_SHIFT) | value, `a write of PHY register ${reg}`);
  }

  // 4.5.8: statistics clear when read; read them once to start from zero.
  resetStatistics() {
    for (const reg of [R.GPRC, R.GPTC, R.GORCL, R.GORCH, R.GOTCL, R.GOTCH]) void this.regs[reg >> 2];
    this.counters = null;
    this.clearCounters();
  }

  // 4.5.9 Receive initialization: receive off while the rings are programmed, then on with
  // broadcast accepted and the CRC stripped (buffers hold the frame as sent).
  initRx() {
    const regs = this.regs;
    const o = this.options;
    regs[R.RCTL >> 2] &= ~R.RCTL_EN;
    // SRRCTL per queue: advanced one-buffer descriptors, buffer size, drop when full.
    for (let q = 0; q < o.rxQueues; q++) this.addRxQueue(q);
    regs[R.RCTL >> 2] |= R.RCTL_EN | R.RCTL_BAM | R.RCTL_SECRC;
  }

  // 4.5.10 Transmit initialization: pad short frames, transmit on, then the rings.
  initTx() {
    const regs = this.regs;
    const o = this.options;
    regs[R.TCTL >> 2] |= R.TCTL_EN | R.TCTL_PSP;
    for (let q = 0; q < o.txQueues; q++) this.addTxQueue(q);
  }

  // 8.2.2 STATUS: LU and SPEED. Mb/s, 0 when the link is down.
  get linkSpeed() {
    this.checkOpen('linkSpeed');
    const status = this.regs[R.STATUS >> 2];
    if ((status & R.STATUS_LU) === 0) return 0;
    switch (status & R.STATUS_SPEED_MASK) {
      case R.STATUS_SPEED_10: return 10;
      case R.STATUS_SPEED_100: return 100;
      default: return 1000;
    }
  }

  // RCTL (8.10): unicast and multicast promiscuous.
  get promiscuous() {
    this.checkOpen('promiscuous');
    const mask = R.RCTL_UPE | R.RCTL_MPE;
    return (this.regs[R.RCTL >> 2] & mask) === mask;
  }

  set promiscuous(on) {
    this.checkOpen('promiscuous');
    const mask = R.RCTL_UPE | R.RCTL_MPE;
    if (on) this.regs[R.RCTL >> 2] |= mask;
    else this.regs[R.RCTL >> 2] &= ~mask;
  }

  // The NIC's own good-packet and -octet counters (GPRC, GPTC, GORC, GOTC; 8.19), summed
  // since open: an independent check on the counts the queues keep.
  hardwareCounters() {
    this.checkOpen('hardwareCounters()');
    const regs = this.regs;
    const c = this.counters || (this.counters = { rxPackets: 0, txPackets: 0, rxBytes: 0, txBytes: 0 });
    c.rxPackets += regs[R.GPRC >> 2];
    c.txPackets += regs[R.GPTC >> 2];
    c.rxBytes += regs[R.GORCL >> 2] + regs[R.GORCH >> 2] * 2 ** 32; // low first: reading high clears both
    c.txBytes += regs[R.GOTCL >> 2] + regs[R.GOTCH >> 2] * 2 ** 32;
    return { ...c };
  }

  // Frames dropped for lack of room (MPC, statistics 8.19, clear on read).
  readMissed() {
    this.missed += this.readClear(R.MPC);
    return this.missed;
  }

  // Frames dropped with a bad FCS (CRCERRS, 8.19).
  readErrors() {
    this.hardwareErrors += this.readClear(R.CRCERRS);
    return this.hardwareErrors;
  }
}

module.exports = { IgbDevice, DEFAULTS };
