'use strict';

// The Intel 82576 (igb) driver: reset and initialisation following the 82576 datasheet's
// section 4.5, one method per step. What it shares with ixgbe (queues, link speed, MAC,
// promiscuous mode, counters, stop and close) is in lib/intel/nic.js, read through
// this NIC's register table.
// Datasheet: Intel 82576EB GbE Controller Datasheet. The I350 keeps these registers and bits.
// Tested against QEMU's igb model (test/vm), not on hardware.
const R = require('./registers');
const { IntelNic } = require('../nic');
const { IxyError } = require('../../host/errors');
const { setupRss } = require('../rss');
const { sleepSync, setBits, clearBits, waitSet, waitClear, getReg, setReg } = require('../../host/register-access');

const MAX_QUEUES = 16; // 82576: 16 RX and 16 TX queues (I350: 8)

class IgbDevice extends IntelNic {
  // Takes the device; IgbDevice.open() also initialises it and waits for link.
  constructor(device, options = {}) {
    // RDLEN/TDLEN: a multiple of 128 bytes (8.10, 8.12), at most 4096 descriptors here.
    super(device, 'igb', { layout: R, options, maxQueues: MAX_QUEUES, maxRingSize: 4096 });
    this.counters = null; // hardwareCounters()' sums
  }

  // 4.5.3 Initialization sequence.
  resetAndInit() {
    this.disableInterrupts();
    this.globalReset();
    this.disableInterrupts();
    this.waitForEeprom();
    this.setupLink();
    this.resetStatistics(); // 4.5.8
    this.initRx();
    this.initTx();
    for (const q of this.rxQueues) q.start(); // 4.5.9
    for (const q of this.txQueues) q.start(); // 4.5.10
    this.promiscuous = this.options.promiscuous;
  }

  // 4.5.4: mask every interrupt cause (legacy IMC and extended EIMC); ixy polls.
  disableInterrupts() {
    setReg(this.regs, R.IMC, R.IMC_ALL);
    setReg(this.regs, R.EIMC, R.EIMC_ALL);
  }

  // 4.5.5 (and 4.3.1 software reset): CTRL.RST resets the MAC and clears itself; the
  // datasheet asks for a wait of at least 1 ms before the device is accessed again.
  globalReset() {
    setBits(this.regs, R.CTRL, R.CTRL_RST);
    sleepSync(1);
    waitClear(this.regs, R.CTRL, R.CTRL_RST, 'the device reset to finish (CTRL.RST)');
    sleepSync(10);
  }

  // 4.5.3: after reset the NIC reloads its configuration from the EEPROM (EEC.AUTO_RD).
  // QEMU's igb model never sets AUTO_RD (it has no EEPROM timing); what ixy needs from the
  // auto-read is the MAC address, valid in RAH0 (AV). Accept that when AUTO_RD stays clear.
  waitForEeprom() {
    const start = Date.now();
    while ((getReg(this.regs, R.EEC) & R.EEC_AUTO_RD) === 0) {
      const waited = Date.now() - start;
      if (waited > 20 && (getReg(this.regs, R.RAH(0)) & R.RAH_AV) !== 0) return;
      if (waited > 2000) throw new IxyError('ETIMEDOUT', 'timed out after 2000 ms waiting for the EEPROM auto-read (EEC.AUTO_RD)');
      sleepSync(1);
    }
  }

  // 4.5.7.2 MAC/PHY link setup for the internal copper PHY: no forced speed or duplex;
  // CTRL.SLU lets the MAC take the link the PHY reports, and the PHY (reset with the MAC)
  // is told to autonegotiate again. open() waits for STATUS.LU.
  setupLink() {
    setBits(this.regs, R.CTRL, R.CTRL_SLU);
    const control = this.phyRead(R.PHY_CTRL);
    this.phyWrite(R.PHY_CTRL, control | R.PHY_CTRL_AN_ENABLE | R.PHY_CTRL_RESTART_AN);
  }

  // 8.2.4 MDIC: one PHY register access; the NIC sets READY when done, ERROR if it failed.
  mdic(command, what) {
    const regs = this.regs;
    setReg(regs, R.MDIC, command);
    waitSet(regs, R.MDIC, R.MDIC_READY, `the PHY to answer (MDIC.READY, ${what})`);
    const value = getReg(regs, R.MDIC);
    if ((value & R.MDIC_ERROR) !== 0) throw new IxyError('EIO', `the PHY of ${this.address} refused ${what}`);
    return value & 0xffff;
  }

  phyRead(reg) {
    return this.mdic(R.MDIC_OP_READ | (R.MDIC_PHY_INTERNAL << R.MDIC_PHYADD_SHIFT) | (reg << R.MDIC_REGADD_SHIFT), `a read of PHY register ${reg}`);
  }

  phyWrite(reg, value) {
    this.mdic(R.MDIC_OP_WRITE | (R.MDIC_PHY_INTERNAL << R.MDIC_PHYADD_SHIFT) | (reg << R.MDIC_REGADD_SHIFT) | value, `a write of PHY register ${reg}`);
  }

  // 4.5.9 Receive initialization: receive off while the rings are programmed, then on with
  // broadcast accepted and the CRC stripped (buffers hold the frame as sent).
  initRx() {
    clearBits(this.regs, R.RCTL, R.RCTL_EN);
    // Per queue SRRCTL (advanced one-buffer descriptors, buffer size, drop when full with
    // several queues), RDBAL/RDBAH/RDLEN, RDH/RDT; RXDCTL.ENABLE comes with start().
    for (let q = 0; q < this.options.rxQueues; q++) this.addRxQueue(q);
    // 7.1.2: with several RX queues, RSS spreads the flows over them (lib/intel/rss.js).
    if (this.options.rxQueues > 1) setupRss(this.regs, R, this.options.rxQueues, this.options.rssKey);
    setBits(this.regs, R.RCTL, R.RCTL_EN | R.RCTL_BAM | R.RCTL_SECRC);
  }

  // 4.5.10 Transmit initialization: pad short frames, transmit on, then the rings.
  initTx() {
    setBits(this.regs, R.TCTL, R.TCTL_EN | R.TCTL_PSP);
    for (let q = 0; q < this.options.txQueues; q++) this.addTxQueue(q);
  }

  // The NIC's own good-packet and -octet counters (GPRC, GPTC, GORC, GOTC; 8.19), summed
  // since open: an independent check on the counts the queues keep.
  hardwareCounters() {
    this.checkOpen('hardwareCounters()');
    const regs = this.regs;
    const c = this.counters || (this.counters = { rxPackets: 0, txPackets: 0, rxBytes: 0, txBytes: 0 });
    c.rxPackets += getReg(regs, R.GPRC);
    c.txPackets += getReg(regs, R.GPTC);
    c.rxBytes += getReg(regs, R.GORCL) + getReg(regs, R.GORCH) * 2 ** 32; // low first: reading high clears both
    c.txBytes += getReg(regs, R.GOTCL) + getReg(regs, R.GOTCH) * 2 ** 32;
    return { ...c };
  }
}

module.exports = { IgbDevice };
