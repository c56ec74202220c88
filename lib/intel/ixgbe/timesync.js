'use strict';

// IEEE 1588 on the 82599 (datasheet 7.9; registers 8.2.3.26, in registers.js): the NIC's
// clock SYSTIM and its one-deep RX and TX timestamp latches. A TX queue asks for its
// frames' timestamps itself (TxQueue.stampFrames()). Cold paths: a timestamp is read once
// per probe frame.
const R = require('./registers');
const { IxyError } = require('../../host/errors');
const { getReg, setReg, sleep } = require('../../host/register-access');

const ETQF_PTP = 3; // the filter Linux ixgbe gives PTP
const PTP_ETHERTYPE = 0x88f7;
// SYSTIM in tenths of a nanosecond: Incvalue 64 every Incperiod (1) period of 6.4 ns, the
// 82599's time sync clock at 10 Gb/s. 2^53 tenths are ten days: exact in a double.
const TIMINCA_TENTHS = (1 << 24) | 64;
const TENTHS_PER_NS = 10;

// The ETQF filter for the PTP EType with its 1588 bit, RX timestamps of every V2 event
// message, TX timestamps of frames whose descriptor asks, SYSTIM counting tenths of ns.
function enableTimesync(dev) {
  setReg(dev.regs, R.TIMINCA, TIMINCA_TENTHS);
  setReg(dev.regs, R.ETQF(ETQF_PTP), (R.ETQF_FILTER_EN | R.ETQF_1588 | PTP_ETHERTYPE) >>> 0);
  setReg(dev.regs, R.TSYNCRXCTL, R.TSYNCRXCTL_EN | R.TSYNCRXCTL_TYPE_EVENT_V2);
  setReg(dev.regs, R.TSYNCTXCTL, R.TSYNCTXCTL_EN);
}

// SYSTIM in tenths of ns. Reading SYSTIML latches SYSTIMH on the NIC; on the device model
// both are refreshed together, so a low half that went backwards (a carry in between)
// means reading again.
function systim(dev) {
  for (;;) {
    const low = getReg(dev.regs, R.SYSTIML);
    const high = getReg(dev.regs, R.SYSTIMH);
    if (getReg(dev.regs, R.SYSTIML) >= low) return high * 2 ** 32 + low;
  }
}

function setSystim(dev, tenths) {
  setReg(dev.regs, R.SYSTIML, tenths % 2 ** 32);
  setReg(dev.regs, R.SYSTIMH, Math.floor(tenths / 2 ** 32));
}

// Resolves once SYSTIM has moved twice: the NIC runs the clock as enableTimesync() set it
// (the device model takes control registers at its next scan, ~0.5 ms).
async function waitClock(dev, timeoutMs = 2000) {
  const end = performance.now() + timeoutMs;
  let last = systim(dev);
  for (let moves = 0; moves < 2;) {
    if (performance.now() > end) throw new IxyError('ETIMEDOUT', `${dev.address}: the IEEE 1588 clock (SYSTIM) does not run`);
    await sleep(1);
    const now = systim(dev);
    if (now !== last) moves++;
    last = now;
  }
}

// How far b's SYSTIM is ahead of a's, in tenths of ns: the median of b's clock minus the
// mean of a's read just before and after it.
function clockOffset(a, b, rounds = 15) {
  const d = [];
  for (let i = 0; i < rounds; i++) {
    const a1 = systim(a);
    const tb = systim(b);
    const a2 = systim(a);
    d.push(tb - (a1 + a2) / 2);
  }
  d.sort((x, y) => x - y);
  return d[rounds >> 1];
}

// A latched timestamp (tenths of ns), or -1 when there is none. Reading the high register
// releases the latch on the NIC; the device model cannot see reads, so the valid bit is also
// written clear, which the NIC ignores (native/model/README.md, "IEEE 1588").
function takeStamp(dev, ctl, valid, lowReg, highReg) {
  const c = getReg(dev.regs, ctl);
  if ((c & valid) === 0) return -1;
  const low = getReg(dev.regs, lowReg);
  const high = getReg(dev.regs, highReg);
  setReg(dev.regs, ctl, c & ~valid);
  return high * 2 ** 32 + low;
}
const takeRxStamp = (dev) => takeStamp(dev, R.TSYNCRXCTL, R.TSYNCRXCTL_RXTT, R.RXSTMPL, R.RXSTMPH);
const takeTxStamp = (dev) => takeStamp(dev, R.TSYNCTXCTL, R.TSYNCTXCTL_TXTT, R.TXSTMPL, R.TXSTMPH);

module.exports = {
  enableTimesync, systim, setSystim, waitClock, clockOffset, takeRxStamp, takeTxStamp, TENTHS_PER_NS, PTP_ETHERTYPE,
};
