'use strict';

// The Intel 82599 driver: reset and initialisation as the datasheet's section 4.6 lays
// them out, one method per step. What it shares with igb (queues, link speed, MAC,
// promiscuous mode, counters, stop and close) is in lib/intel/nic.js, read through
// this NIC's register table.
// Datasheet: Intel 82599 10 GbE Controller Datasheet, revision 3.3.
const R = require('./registers');
const { IntelNic } = require('../nic');
const { sleepSync, setBits, clearBits, setField, waitSet, waitClear, setReg } = require('../../host/register-access');
const { isSfp } = require('./ids');
const { setupRss, RSS_MAX_QUEUES } = require('../rss');

const MAX_QUEUES = 64;
// 64 TX queues, but RSS, the only way frames reach an RX queue here, spreads them over 16.
const RX_QUEUE_LIMIT = {
  max: RSS_MAX_QUEUES,
  why: " (RSS's redirection table, RETA, names only queues 0..15 on the 82599: more would never receive a frame)",
};

class IxgbeDevice extends IntelNic {
  // Takes the device; IxgbeDevice.open() also initialises it and waits for link.
  constructor(device, options = {}) {
    // RDLEN/TDLEN allow up to 8192 descriptors here (8.2.3.8.3, 8.2.3.9.7).
    super(device, 'ixgbe', { layout: R, options, maxQueues: MAX_QUEUES, maxRingSize: 8192, rxQueueLimit: RX_QUEUE_LIMIT });
  }

  // 4.6.3 Initialization sequence.
  resetAndInit() {
    this.disableInterrupts();
    this.globalReset();
    this.disableInterrupts();
    this.waitForEepromAndDma();
    this.setupLink();
    this.resetStatistics(); // 4.6.5
    this.initRx();
    this.initTx();
    for (const q of this.rxQueues) q.start(); // 4.6.7.1
    for (const q of this.txQueues) q.start(); // 4.6.8.1
    this.promiscuous = this.options.promiscuous;
  }

  // 4.6.3.1: mask every interrupt cause; ixy polls and never takes interrupts.
  disableInterrupts() {
    setReg(this.regs, R.EIMC, R.EIMC_ALL);
  }

  // 4.6.3.2: device reset (CTRL.RST) together with link reset; both bits clear themselves
  // when done, and the datasheet asks for 10 ms more before touching the device.
  globalReset() {
    setReg(this.regs, R.CTRL, R.CTRL_RST | R.CTRL_LNK_RST);
    waitClear(this.regs, R.CTRL, R.CTRL_RST | R.CTRL_LNK_RST, 'the device reset to finish (CTRL.RST)');
    sleepSync(10);
  }

  // 4.6.3: the NIC loads its EEPROM (EEC.ARD) and initialises its DMA (RDRXCTL.DMAIDONE).
  waitForEepromAndDma() {
    waitSet(this.regs, R.EEC, R.EEC_ARD, 'the EEPROM auto-read (EEC.ARD)');
    waitSet(this.regs, R.RDRXCTL, R.RDRXCTL_DMAIDONE, 'DMA initialisation (RDRXCTL.DMAIDONE)');
  }

  // 4.6.4: the link mode, then restart autonegotiation. An SFP+ port takes a 10 Gb/s serial
  // link; every other 82599 keeps the mode its NVM loaded into AUTOC, which matches its
  // media (forcing serial there leaves the link down). Link comes up later; open() waits.
  setupLink() {
    const sfp = isSfp(this.handle.id.device);
    const mask = sfp ? R.AUTOC_LMS_MASK | R.AUTOC_10G_PMA_PMD_MASK : 0;
    const mode = sfp ? R.AUTOC_LMS_10G_SERIAL | R.AUTOC_10G_XAUI : 0;
    setField(this.regs, R.AUTOC, mask, mode | R.AUTOC_AN_RESTART);
  }

  // 4.6.7 Receive initialization.
  initRx() {
    const regs = this.regs;
    // Receive off while the rings are set up.
    clearBits(regs, R.RXCTRL, R.RXCTRL_RXEN);
    // 4.6.11.3.4 (no DCB, no virtualisation): one packet buffer, the rest 0. It gets the whole
    // 512 KiB (its reset value; Linux's ixgbe does the same): frames wait there while the
    // ring is full, so the bigger it is, the longer a pause it absorbs (a loop asleep in
    // idle 'backoff', lib/device/idle-bound.js).
    setReg(regs, R.RXPBSIZE(0), R.RXPBSIZE_512KB);
    this.rxPacketBufferBytes = R.RXPBSIZE_512KB;
    for (let i = 1; i < 8; i++) setReg(regs, R.RXPBSIZE(i), 0);
    // Strip the Ethernet CRC: buffers then hold the frame as sent (8.2.3.22.8, 8.2.3.8.8).
    setBits(regs, R.HLREG0, R.HLREG0_RXCRCSTRP);
    setBits(regs, R.RDRXCTL, R.RDRXCTL_CRCSTRIP);
    // Accept broadcast frames.
    setBits(regs, R.FCTRL, R.FCTRL_BAM);
    for (let q = 0; q < this.options.rxQueues; q++) {
      this.addRxQueue(q);
      // 8.2.3.11.1: bit 12 of DCA_RXCTRL is reserved, reads as 1 and must be written 0.
      clearBits(regs, R.DCA_RXCTRL(q), R.DCA_RXCTRL_RESERVED_BIT12);
    }
    // 7.1.2.8: with several RX queues, RSS spreads the flows over them (lib/intel/rss.js).
    if (this.options.rxQueues > 1) setupRss(regs, R, this.options.rxQueues, this.options.rssKey);
    // 8.2.3.23: RQSMR maps RX queue q to statistics counter q, so that QPRDC(q) counts the
    // drops of queue q alone (a worker's QueuePair reads its own).
    for (let q = 0; q < this.options.rxQueues; q += 4) {
      let map = 0;
      for (let k = 0; k < 4 && q + k < this.options.rxQueues; k++) map |= (q + k) << (8 * k);
      setReg(regs, R.RQSMR(q / 4), map);
    }
    // 4.6.7: set CTRL_EXT.NS_DIS (no-snoop disable) as the sequence requires.
    setBits(regs, R.CTRL_EXT, R.CTRL_EXT_NS_DIS);
    setBits(regs, R.RXCTRL, R.RXCTRL_RXEN);
  }

  // 4.6.8 Transmit initialization.
  initTx() {
    const regs = this.regs;
    // Append the CRC and pad short frames to 64 bytes (8.2.3.22.8).
    setBits(regs, R.HLREG0, R.HLREG0_TXCRCEN | R.HLREG0_TXPADEN);
    // 4.6.11.3.4: one TX packet buffer of 40 KiB.
    setReg(regs, R.TXPBSIZE(0), R.TXPBSIZE_40KB);
    for (let i = 1; i < 8; i++) setReg(regs, R.TXPBSIZE(i), 0);
    // 4.6.11.3.4: without DCB, DTXMXSZRQ at its maximum and descriptor arbitration on.
    setReg(regs, R.DTXMXSZRQ, 0xffff);
    clearBits(regs, R.RTTDCS, R.RTTDCS_ARBDIS);
    for (let q = 0; q < this.options.txQueues; q++) this.addTxQueue(q);
    // 8.2.3.9.1: transmit DMA on.
    setBits(regs, R.DMATXCTL, R.DMATXCTL_TE);
  }
}

module.exports = { IxgbeDevice };
