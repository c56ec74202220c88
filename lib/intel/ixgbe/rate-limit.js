'use strict';

// The 82599's per-queue TX rate limiter (datasheet 7.7.2.4; RTTDQSEL and RTTBCNRC among
// the DCB transmit registers, 8.2.3.10): the NIC spaces a queue's frames so that they
// leave at a set rate, while the driver sleeps. `ixy latency` paces its load with it, and
// lib/traffic/pacing.js offers it beside software pacing.
const R = require('./registers');
const { IxyError } = require('../../host/errors');
const { setReg } = require('../../host/register-access');

const RF_ONE = 1 << 14; // RTTBCNRC.RF_DEC has 14 bits
const RF_MAX = 0x3ff * RF_ONE + (RF_ONE - 1); // RF_INT is 10 bits
const LINK_BPS = 10e9;

// The rate factor for `bps` bits per second of frames with their FCS: 10 Gb/s / rate in
// RF_INT.RF_DEC. The lowest rate the limiter spaces is 10 Gb/s / 1024 (9.77 Mb/s).
function rateFactor(bps) {
  const rf = Math.round((LINK_BPS / bps) * RF_ONE);
  if (!(rf >= RF_ONE && rf <= RF_MAX)) {
    throw new IxyError('EINVAL', `the 82599's rate limiter spaces frames for ${(LINK_BPS / RF_MAX * RF_ONE / 1e6).toFixed(2)} Mb/s to 10 Gb/s, not ${(bps / 1e6).toFixed(3)} Mb/s`);
  }
  return rf;
}

// Limits TX queue `queue` of `dev` to `bps`: RS_ENA and the rate factor for the queue
// RTTDQSEL selects.
function limitRate(dev, queue, bps) {
  const rf = rateFactor(bps);
  setReg(dev.regs, R.RTTDQSEL, queue);
  setReg(dev.regs, R.RTTBCNRC, R.RTTBCNRC_RS_ENA | rf);
}

module.exports = { rateFactor, limitRate };
