'use strict';

// Rates from two snapshots of a device's counters, and the one-line report the apps print.
// Mbit/s is what the wire carries: each frame plus its 4-byte FCS, 8 bytes of preamble and
// start delimiter and a 12-byte inter-frame gap (the 20 bytes of preamble and gap per frame).
const WIRE_OVERHEAD = 4 + 20;

class RateMeter {
  constructor(device) {
    this.device = device;
    this.last = device.stats();
    this.lastTime = process.hrtime.bigint();
  }

  // Rates since the previous sample (or since the meter was made).
  sample() {
    const now = process.hrtime.bigint();
    const current = this.device.stats();
    const seconds = Number(now - this.lastTime) / 1e9;
    const before = this.last;
    this.last = current;
    this.lastTime = now;
    return computeRates(before, current, seconds);
  }
}

// Packet and wire rates between two counter snapshots taken `seconds` apart.
function computeRates(before, after, seconds) {
  const rxPackets = after.rxPackets - before.rxPackets;
  const txPackets = after.txPackets - before.txPackets;
  return {
    rxMpps: rxPackets / seconds / 1e6,
    txMpps: txPackets / seconds / 1e6,
    rxMbits: ((after.rxBytes - before.rxBytes) + rxPackets * WIRE_OVERHEAD) * 8 / seconds / 1e6,
    txMbits: ((after.txBytes - before.txBytes) + txPackets * WIRE_OVERHEAD) * 8 / seconds / 1e6,
    rxMissed: after.rxMissed - before.rxMissed,
  };
}

// One report line; the fields keep their width whatever their unit, so lines align.
function formatRates(address, r) {
  const rate = (mpps, mbits) => `${formatPacketRate(mpps * 1e6).padStart(11)} ${formatBitRate(mbits).padStart(13)}`;
  return `[${address}] RX: ${rate(r.rxMpps, r.rxMbits)} | TX: ${rate(r.txMpps, r.txMbits)}`;
}

// Packets per second in the unit that keeps three digits or more: a rate of a few kpps
// would be "0.00 Mpps". (The bounds are where rounding would show 1000.00 of the smaller.)
function formatPacketRate(pps) {
  if (pps >= 999995) return `${(pps / 1e6).toFixed(2)} Mpps`;
  if (pps >= 999.5) return `${(pps / 1e3).toFixed(2)} kpps`;
  return `${pps.toFixed(0)} pps`;
}

function formatBitRate(mbits) {
  return `${mbits.toFixed(mbits >= 100 ? 0 : 2)} Mbit/s`;
}

function formatTotals(address, s) {
  return `[${address}] total RX ${s.rxPackets} packets ${s.rxBytes} bytes, TX ${s.txPackets} packets ${s.txBytes} bytes, RX missed ${s.rxMissed}, TX dropped ${s.txDropped}`;
}

// The totals of a port that moved no frame: one whose open() was stopped (EABORTED).
function noTraffic() {
  return { rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, rxErrors: 0, rxMissed: 0, txDropped: 0 };
}

module.exports = { RateMeter, computeRates, formatRates, formatPacketRate, formatTotals, noTraffic };
