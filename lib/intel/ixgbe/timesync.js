'use strict';

// IEEE 1588 on the 82599 (datasheet 7.9; registers 8.2.3.26): the NIC's clock SYSTIM and
// its one-deep RX and TX timestamp latches; and the per-queue TX rate limiter (7.7.2.x;
// RTTDQSEL and RTTBCNRC among the DCB transmit registers, 8.2.3.10) that `ixy latency`
// paces its load traffic with. Cold paths: a timestamp is read once per probe frame.
const { IxyError } = require('../../host/errors');
const { getReg, setReg, sleep } = require('../../host/register-access');

const R = {
  TSYNCRXCTL: 0x05188, RXSTMPL: 0x051e8, RXSTMPH: 0x051a4,
  TSYNCTXCTL: 0x08c00, TXSTMPL: 0x08c04, TXSTMPH: 0x08c08,
  SYSTIML: 0x08c0c, SYSTIMH: 0x08c10, TIMINCA: 0x08c14,
  ETQF: (n) => 0x05128 + 4 * n, // EType queue filters, n < 8
  RTTDQSEL: 0x04904, RTTBCNRC: 0x04984,
};
const VALID = 1; // TSYNCRXCTL.RXTT, TSYNCTXCTL.TXTT
const ENABLE = 1 << 4;
const TYPE_EVENT_V2 = 5 << 1; // TSYNCRXCTL.Type 101b: every PTP V2 event message
const ETQF_FILTER_EN = 0x80000000;
const ETQF_1588 = 0x40000000;
const ETQF_PTP = 3; // the filter Linux ixgbe gives PTP
const PTP_ETHERTYPE = 0x88f7;
// SYSTIM in tenths of a nanosecond: Incvalue 64 every Incperiod (1) period of 6.4 ns, the
// 82599's time sync clock at 10 Gb/s. 2^53 tenths are ten days: exact in a double.
const TIMINCA_TENTHS = (1 << 24) | 64;
const TENTHS_PER_NS = 10;
// Advanced TX data descriptor, MAC field: timestamp this frame (7.2.3.2.4).
const TXD_MAC_1588 = 1 << 19;
const RS_ENA = 0x80000000;
const RF_ONE = 1 << 14; // RTTBCNRC.RF_DEC has 14 bits
const RF_MAX = 0x3ff * RF_ONE + (RF_ONE - 1); // RF_INT is 10 bits
const LINK_BPS = 10e9;

// The ETQF filter for the PTP EType with its 1588 bit, RX timestamps of every V2 event
// message, TX timestamps of frames whose descriptor asks, SYSTIM counting tenths of ns.
function enableTimesync(dev) {
  setReg(dev.regs, R.TIMINCA, TIMINCA_TENTHS);
  setReg(dev.regs, R.ETQF(ETQF_PTP), ETQF_FILTER_EN | ETQF_1588 | PTP_ETHERTYPE);
  setReg(dev.regs, R.TSYNCRXCTL, ENABLE | TYPE_EVENT_V2);
  setReg(dev.regs, R.TSYNCTXCTL, ENABLE);
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
function takeStamp(dev, ctl, lowReg, highReg) {
  const c = getReg(dev.regs, ctl);
  if ((c & VALID) === 0) return -1;
  const low = getReg(dev.regs, lowReg);
  const high = getReg(dev.regs, highReg);
  setReg(dev.regs, ctl, c & ~VALID);
  return high * 2 ** 32 + low;
}
const takeRxStamp = (dev) => takeStamp(dev, R.TSYNCRXCTL, R.RXSTMPL, R.RXSTMPH);
const takeTxStamp = (dev) => takeStamp(dev, R.TSYNCTXCTL, R.TXSTMPL, R.TXSTMPH);

// The rate factor for `bps` bits per second of frames with their FCS: 10 Gb/s / rate in
// RF_INT.RF_DEC. The lowest rate the limiter spaces is 10 Gb/s / 1024 (9.77 Mb/s).
function rateFactor(bps) {
  const rf = Math.round((LINK_BPS / bps) * RF_ONE);
  if (!(rf >= RF_ONE && rf <= RF_MAX)) {
    throw new IxyError('EINVAL', `the 82599's rate limiter spaces frames for ${(LINK_BPS / RF_MAX * RF_ONE / 1e6).toFixed(2)} Mb/s to 10 Gb/s, not ${(bps / 1e6).toFixed(3)} Mb/s`);
  }
  return rf;
}

// Limits TX queue `queue` to `bps`: RS_ENA and the rate factor for the queue RTTDQSEL selects.
function limitRate(dev, queue, bps) {
  const rf = rateFactor(bps);
  setReg(dev.regs, R.RTTDQSEL, queue);
  setReg(dev.regs, R.RTTBCNRC, RS_ENA | rf);
}

module.exports = {
  enableTimesync, systim, setSystim, waitClock, clockOffset, takeRxStamp, takeTxStamp, rateFactor, limitRate,
  TENTHS_PER_NS, TXD_MAC_1588, PTP_ETHERTYPE,
};
