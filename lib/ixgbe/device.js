'use strict';

// The Intel 82599 driver: reset and initialisation as the datasheet's section 4.6 lays
// them out, one method per step, plus link, MAC, promiscuous mode and counters.
// Datasheet: Intel 82599 10 GbE Controller Datasheet, revision 3.3.
const R = require('./registers');
const { AdvancedNic } = require('../advanced/nic');
const { sleepSync } = require('../wait');
const pci = require('../pci');
const { isSfp } = require('../drivers');

const MAX_QUEUES = 64;
const ERROR_COUNTERS = [R.CRCERRS, R.RLEC, R.RUC, R.RFC, R.ROC, R.RJC];

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

class IxgbeDevice extends AdvancedNic {
  // Resets and initialises the device (the constructor runs resetAndInit); use
  // IxgbeDevice.open() to also wait for link.
  constructor(address, options = {}) {
    // RDLEN/TDLEN allow up to 8192 descriptors here (8.2.3.8.3, 8.2.3.9.7).
    super(address, 'ixgbe', { layout: R, defaults: DEFAULTS, options, maxQueues: MAX_QUEUES, maxRingSize: 8192 });
  }

  // 4.6.3 Initialization sequence.
  resetAndInit() {
    this.disableInterrupts();
    this.globalReset();
    this.disableInterrupts();
    this.waitForEepromAndDma();
    this.setupLink();
    this.resetStatistics();
    this.initRx();
    this.initTx();
    for (const q of this.rxQueues) q.start(this.waitSet);
    for (const q of this.txQueues) q.start(this.waitSet);
    this.promiscuous = this.options.promiscuous;
  }

  // 4.6.3.1: mask every interrupt cause; ixy polls and never takes interrupts.
  disableInterrupts() {
    this.regs[R.EIMC >> 2] = R.EIMC_ALL;
  }

  // 4.6.3.2: device reset (CTRL.RST) together with link reset; both bits clear themselves
  // when done, and the datasheet asks for 10 ms more before touching the device.
  globalReset() {
    this.regs[R.CTRL >> 2] = R.CTRL_RST | R.CTRL_LNK_RST;
    this.waitClear(R.CTRL, R.CTRL_RST | R.CTRL_LNK_RST, 'the device reset to finish (CTRL.RST)');
    sleepSync(10);
  }

  // 4.6.3: the NIC loads its EEPROM (EEC.ARD) and initialises its DMA (RDRXCTL.DMAIDONE).
  waitForEepromAndDma() {
    this.waitSet(R.EEC, R.EEC_ARD, 'the EEPROM auto-read (EEC.ARD)');
    this.waitSet(R.RDRXCTL, R.RDRXCTL_DMAIDONE, 'DMA initialisation (RDRXCTL.DMAIDONE)');
  }

  // 4.6.4: the link mode, then restart autonegotiation. An SFP+ port takes a 10 Gb/s serial
  // link; every other 82599 keeps the mode its NVM loaded into AUTOC, which matches its
  // media (forcing serial there leaves the link down). Link comes up later; open() waits.
  setupLink() {
    const regs = this.regs;
    let autoc = regs[R.AUTOC >> 2];
    if (isSfp(pci.readIdentity(this.address).device)) {
      autoc = (autoc & ~R.AUTOC_LMS_MASK) | R.AUTOC_LMS_10G_SERIAL;
      autoc = (autoc & ~R.AUTOC_10G_PMA_PMD_MASK) | R.AUTOC_10G_XAUI;
    }
    regs[R.AUTOC >> 2] = autoc | R.AUTOC_AN_RESTART;
  }

  // 4.6.5: statistics registers clear when read; read them once to start from zero.
  resetStatistics() {
    for (const reg of [R.GPRC, R.GPTC, R.GORCL, R.GORCH, R.GOTCL, R.GOTCH]) this.readClear(reg);
    this.clearCounters();
  }

  // 4.6.7 Receive initialization.
  initRx() {
    const regs = this.regs;
    const o = this.options;
    // Receive off while the rings are set up.
    regs[R.RXCTRL >> 2] &= ~R.RXCTRL_RXEN;
    // 4.6.11.3.4 (no DCB, no virtualisation): one packet buffer of 128 KiB, the rest 0.
    regs[R.RXPBSIZE(0) >> 2] = R.RXPBSIZE_128KB;
    for (let i = 1; i < 8; i++) regs[R.RXPBSIZE(i) >> 2] = 0;
    // Strip the Ethernet CRC: buffers then hold the frame as sent (8.2.3.22.8, 8.2.3.8.8).
    regs[R.HLREG0 >> 2] |= R.HLREG0_RXCRCSTRP;
    regs[R.RDRXCTL >> 2] |= R.RDRXCTL_CRCSTRIP;
    // Accept broadcast frames.
    regs[R.FCTRL >> 2] |= R.FCTRL_BAM;
    for (let q = 0; q < o.rxQueues; q++) {
      this.addRxQueue(q);
      // 8.2.3.11.1: bit 12 of DCA_RXCTRL is reserved, reads as 1 and must be written 0.
      regs[R.DCA_RXCTRL(q) >> 2] &= ~R.DCA_RXCTRL_RESERVED_BIT12;
    }
    // 4.6.7: set CTRL_EXT.NS_DIS (no-snoop disable) as the sequence requires.
    regs[R.CTRL_EXT >> 2] |= R.CTRL_EXT_NS_DIS;
    regs[R.RXCTRL >> 2] |= R.RXCTRL_RXEN;
  }

  // 4.6.8 Transmit initialization.
  initTx() {
    const regs = this.regs;
    const o = this.options;
    // Append the CRC and pad short frames to 64 bytes (8.2.3.22.8).
    regs[R.HLREG0 >> 2] |= R.HLREG0_TXCRCEN | R.HLREG0_TXPADEN;
    // 4.6.11.3.4: one TX packet buffer of 40 KiB.
    regs[R.TXPBSIZE(0) >> 2] = R.TXPBSIZE_40KB;
    for (let i = 1; i < 8; i++) regs[R.TXPBSIZE(i) >> 2] = 0;
    // 4.6.11.3.4: without DCB, DTXMXSZRQ at its maximum and descriptor arbitration on.
    regs[R.DTXMXSZRQ >> 2] = 0xffff;
    regs[R.RTTDCS >> 2] &= ~R.RTTDCS_ARBDIS;
    for (let q = 0; q < o.txQueues; q++) this.addTxQueue(q);
    // 8.2.3.9.1: transmit DMA on.
    regs[R.DMATXCTL >> 2] |= R.DMATXCTL_TE;
  }

  // Link speed in Mb/s, 0 when the link is down.
  get linkSpeed() {
    this.checkOpen('linkSpeed');
    const links = this.regs[R.LINKS >> 2];
    if ((links & R.LINKS_UP) === 0) return 0;
    switch (links & R.LINKS_SPEED_MASK) {
      case R.LINKS_SPEED_100M: return 100;
      case R.LINKS_SPEED_1G: return 1000;
      case R.LINKS_SPEED_10G: return 10000;
      default: return 0;
    }
  }

  // 8.2.3.7.1 FCTRL: unicast and multicast promiscuous.
  get promiscuous() {
    this.checkOpen('promiscuous');
    const mask = R.FCTRL_UPE | R.FCTRL_MPE;
    return (this.regs[R.FCTRL >> 2] & mask) === mask;
  }

  set promiscuous(on) {
    this.checkOpen('promiscuous');
    const mask = R.FCTRL_UPE | R.FCTRL_MPE;
    if (on) this.regs[R.FCTRL >> 2] |= mask;
    else this.regs[R.FCTRL >> 2] &= ~mask;
  }

  // Frames dropped for want of room: with SRRCTL.DROP_EN (RxQueue sets it when there are
  // several RX queues) a queue without a free descriptor drops at once and counts in its
  // QPRDC; MPC counts what overflowed a packet buffer (8.2.3.8.7, 8.2.3.23).
  readMissed() {
    for (let i = 0; i < 8; i++) this.missed += this.readClear(R.MPC(i));
    for (const q of this.rxQueues) if (q.index < 16) this.missed += this.readClear(R.QPRDC(q.index));
    return this.missed;
  }

  // Broken frames the MAC dropped (8.2.3.23): a bad FCS, a wrong length field, too short
  // or too long (each with a good or a bad FCS: each frame counts in one of these).
  readErrors() {
    for (const reg of ERROR_COUNTERS) this.hardwareErrors += this.readClear(reg);
    return this.hardwareErrors;
  }
}

module.exports = { IxgbeDevice, DEFAULTS };
