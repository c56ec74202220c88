'use strict';

// Rates and even spacing for a generator. A rate is frames per second ('10000', '10k',
// '100kpps', '1.5Mpps') or bits per second ('500Mbit', '1Gbit/s', '9.5 Gb/s'), where a
// frame's bits are its bytes with the 4-byte FCS, as the NIC's rate limiter and its octet
// counters count them (not the preamble and inter-frame gap).
//
// Two ways to space frames evenly:
// - the NIC (82599: the per-queue TX rate limiter, lib/intel/ixgbe/rate-limit.js):
//   the driver keeps the queue full and sleeps; the NIC starts each frame on time;
// - software (any NIC, and rates below the limiter's range): each frame is handed to the
//   NIC when it falls due. SoftwarePacer sleeps until just before that moment
//   (Atomics.wait, microseconds) and spins the last stretch (the timer slack): the
//   process does not spin a whole core at low rates.
const { IxyError } = require('../host/errors');

const FCS = 4;
// unit (lower case) -> [multiplier, 'pps' or 'bps']
const UNITS = {};
for (const [prefix, mult] of [['', 1], ['k', 1e3], ['m', 1e6], ['g', 1e9]]) {
  for (const u of ['pps', ...(prefix ? [''] : [])]) UNITS[prefix + u] = [mult, 'pps'];
  for (const u of ['bit', 'bit/s', 'bps', 'b/s']) UNITS[prefix + u] = [mult, 'bps'];
}
UNITS[''] = [1, 'pps'];
delete UNITS.g; // '10g' would be ambiguous: write 10Gbit or 10Gpps

// { pps } or { bps } from a number (frames per second) or a string with a unit.
function parseRate(rate) {
  if (typeof rate === 'number') {
    if (!(rate >= 0) || !Number.isFinite(rate)) throw new IxyError('EINVAL', `rate must be a number of frames per second >= 0, got ${rate}`);
    return { pps: rate };
  }
  const m = /^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z/]*)\s*$/.exec(String(rate));
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (unit === undefined) {
    throw new IxyError('EINVAL', `'${rate}' is not a rate: give frames per second (10000, 10k, 100kpps, 1Mpps) or bits per second (500Mbit, 1Gbit/s)`);
  }
  return { [unit[1]]: Number(m[1]) * unit[0] };
}

// Frames per second for a parsed rate and frames of meanSize bytes (without FCS).
function framesPerSecond(rate, meanSize) {
  return rate.pps !== undefined ? rate.pps : rate.bps / ((meanSize + FCS) * 8);
}

// Bits per second (with FCS) of pps frames of meanSize bytes: what the rate limiter takes.
function bitsPerSecond(pps, meanSize) {
  return pps * (meanSize + FCS) * 8;
}

// A sleep ends up to Linux's default timer slack (50 us) late, plus the wake-up: the
// pacer sleeps until this long before a frame is due and spins the rest. A sleep that
// ends later than that was descheduled, and spinning longer would not have helped.
const SLEEP_MARGIN_MS = 0.06;

// Frames at `pps`, evenly from `start`: dueAt(n) says when frame n is due, waitFor(n)
// blocks until then.
class SoftwarePacer {
  constructor(pps, { start = performance.now(), spin = false } = {}) {
    this.gapMs = 1000 / pps;
    this.start = start;
    this.spin = spin;
    this.cell = new Int32Array(new SharedArrayBuffer(4));
  }

  // When frame n (from 0) is due, in performance.now() time.
  dueAt(n) {
    return this.start + n * this.gapMs;
  }

  // Blocks until frame n is due, or until `limit` (ms, performance.now() time), whichever
  // comes first; returns the time it woke.
  waitFor(n, limit) {
    return this.waitUntil(this.dueAt(n), limit);
  }

  // Blocks until `at` or `limit`, whichever is first (performance.now() time, ms): sleeps
  // until SLEEP_MARGIN_MS before it, then spins; returns the time it woke.
  waitUntil(at, limit = at) {
    const target = at < limit ? at : limit;
    let now = performance.now();
    if (!this.spin && target - now > SLEEP_MARGIN_MS) {
      Atomics.wait(this.cell, 0, 0, target - SLEEP_MARGIN_MS - now);
      now = performance.now();
    }
    while (now < target) now = performance.now();
    return now;
  }
}

module.exports = { parseRate, framesPerSecond, bitsPerSecond, SoftwarePacer };
