'use strict';

// The loop of a worker thread that owns queue pairs (lib/queue-pair.js): `ixy forward
// --workers` and `ixy pcap --workers`. It calls step() until the stop flag is set, looks
// at its pairs about once a second (QueuePair.check(): drop counts published, a hung TX
// queue reset) and hands what it found to onEvent, and between steps does what the idle
// mode says (lib/device/idle.js names the modes):
//   'spin'     poll without pause.
//   'backoff'  a poll that drained the rings (fewer frames than a batch) is followed by a
//              nap on the stop flag (Atomics.wait: a stop ends it at once): while frames
//              come, for about the time COALESCE_BATCHES batches take to arrive at the
//              rate the worker carries; once none come, for a SLEEP_RAMP-th of the time
//              it has been idle. Never longer than half of what the smallest RX ring holds
//              at the highest rate seen (at least DEFAULT_START_RATE): with several RX
//              queues the NIC drops at once for a full queue (SRRCTL.DROP_EN), so a
//              worker's queues have no packet buffer behind them. The naps give the CPU
//              back between bursts, to the other workers and to whatever makes the
//              traffic on the same cores.
// 'interrupt' needs a vector per queue pair and is not offered to workers (workerIdle()).
const { IxyError, shown } = require('../host/errors');
const { DEFAULT_START_RATE, SLEEP_SHARE } = require('../device/idle-bound');

const STEPS_PER_LOOK = 64; // steps between two reads of the stop flag and the clock
const LOOK_MS = 1000; // how often the pairs are checked
const COALESCE_BATCHES = 2;
const SLEEP_RAMP = 8;
const RATE_WINDOW_MS = 10;
const MIN_NAP_MS = 0.01; // shorter naps are not worth a futex call

// The idle mode of workers: 'backoff' (the default) or 'spin'; EUNSUPPORTED for
// 'interrupt', EINVAL for anything else. `idle` undefined or null: the default.
function workerIdle(idle) {
  if (idle === undefined || idle === null || idle === 'backoff') return 'backoff';
  if (idle === 'spin') return 'spin';
  if (idle === 'interrupt') {
    throw new IxyError('EUNSUPPORTED', "idle 'interrupt' is not offered with workers (each would need a vector of its own): use 'backoff', their default, or 'spin'");
  }
  throw new IxyError('EINVAL', `idle must be 'spin', 'backoff' or 'interrupt', got ${shown(idle)}`);
}

// The naps of a 'backoff' worker (see the top of this file).
class Napper {
  constructor({ batchSize, ringHold }) {
    this.full = batchSize; // a poll that got this many may have left more behind
    this.ringHold = ringHold; // frames the smallest RX ring holds between two polls
    this.batchSize = batchSize;
    this.workedAt = performance.now();
    this.frames = 0; // frames received, for the rate
    this.rateAt = this.workedAt;
    this.rateFrames = 0;
    this.rate = 0; // frames/s of the last window
    this.peakRate = 0;
  }

  // After a step that received `received` frames: the nap to take, in ms (0: none).
  after(received) {
    this.frames += received;
    if (received >= this.full) return 0;
    const now = performance.now();
    if (received > 0) this.workedAt = now;
    if (now - this.rateAt >= RATE_WINDOW_MS) this.sampleRate(now);
    const coalesce = this.rate > 0 ? (COALESCE_BATCHES * this.batchSize * 1000) / this.rate : 0;
    const ramp = (now - this.workedAt) / SLEEP_RAMP;
    const bound = ((this.ringHold * 1000) / Math.max(this.peakRate, DEFAULT_START_RATE)) * SLEEP_SHARE;
    const nap = Math.min(Math.max(coalesce, ramp), bound);
    return nap >= MIN_NAP_MS ? nap : 0;
  }

  sampleRate(now) {
    this.rate = ((this.frames - this.rateFrames) * 1000) / (now - this.rateAt);
    if (this.rate > this.peakRate) this.peakRate = this.rate;
    this.rateAt = now;
    this.rateFrames = this.frames;
  }
}

// Runs step() (returns the frames it received) until flags[stopAt] is set. pairs: the
// QueuePairs to check; onEvent(pairIndex, event) for what a check found.
function runWorkerLoop({ step, flags, stopAt = 0, pairs, idle, batchSize, onEvent }) {
  const rxRings = pairs.filter((p) => p.rx !== null).map((p) => p.rx.size - p.rx.freeThreshold);
  const napper = idle === 'spin' ? null : new Napper({ batchSize, ringHold: Math.min(...rxRings) });
  let lookAt = performance.now() + LOOK_MS;
  while (Atomics.load(flags, stopAt) === 0) {
    for (let k = 0; k < STEPS_PER_LOOK; k++) {
      const received = step();
      if (napper === null) continue;
      const nap = napper.after(received);
      if (nap > 0) Atomics.wait(flags, stopAt, 0, nap);
    }
    if (performance.now() >= lookAt) {
      lookAt += LOOK_MS;
      for (let i = 0; i < pairs.length; i++) for (const event of pairs[i].check()) onEvent(i, event);
    }
  }
}

module.exports = { runWorkerLoop, workerIdle, Napper };
