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
//   'interrupt' where the kernel fills the rings (AF_XDP, Device.kernelFillsRings), and the
//              default there: a step that moved no frame is followed by a sleep in ppoll()
//              on the sockets of the queue pairs the worker owns (each pair's readableFd(),
//              readable once the kernel has put frames on its RX ring), for at most
//              WAIT_SLICE_MS; a worker that moves frames never sleeps. As the single thread
//              does on AF_XDP (lib/device/idle.js, waitForFrames()): the kernel's NAPI poll
//              that fills the rings may need the CPU a polling worker would take. TX is kicked
//              as before: each send() with frames queued or in flight makes the sendto()
//              the TX ring asks for (need_wakeup), and the ppoll() does too (the kernel's
//              xsk_poll() drives a copy-mode TX ring, wakes a zero-copy driver).
//              On devices ixy drives itself it would need an MSI-X vector per queue pair,
//              and workerIdle() refuses it (EUNSUPPORTED).
const { IxyError, shown } = require('../host/errors');
const { ringHold, DEFAULT_START_RATE, SLEEP_SHARE } = require('../device/idle-bound');
const { native } = require('../host/native');
const { nowMs } = require('./clock'); // reads allocate nothing (lib/loop/clock.js says why that matters)

const STEPS_PER_LOOK = 64; // steps between two reads of the clock and of the stop flag (read after every sleep too)
const LOOK_MS = 1000; // how often the pairs are checked
const COALESCE_BATCHES = 2;
const SLEEP_RAMP = 8;
const RATE_WINDOW_MS = 10;
const MIN_NAP_MS = 0.01; // shorter naps are not worth a futex call
// The longest sleep on the sockets: the stop flag is read between two, and ppoll() does not
// see it, so a stop waits this long at most.
const WAIT_SLICE_MS = 2;

// The idle mode of workers. kernelFillsRings: every device of the command is one whose RX
// rings the kernel fills (Device.kernelFillsRings: AF_XDP, whose names say so before it is
// opened, isXdpName()). 'interrupt' there, the default, else EUNSUPPORTED; 'backoff' (the
// default elsewhere) or 'spin' anywhere; EINVAL for anything else. `idle` undefined or
// null: the default.
function workerIdle(idle, kernelFillsRings = false) {
  if (idle === undefined || idle === null) return kernelFillsRings ? 'interrupt' : 'backoff';
  if (idle === 'spin' || idle === 'backoff') return idle;
  if (idle === 'interrupt') {
    if (kernelFillsRings) return idle;
    throw noWorkerInterrupts();
  }
  throw new IxyError('EINVAL', `idle must be 'spin', 'backoff' or 'interrupt', got ${shown(idle)}`);
}

function noWorkerInterrupts() {
  return new IxyError('EUNSUPPORTED', "idle 'interrupt' is not offered with workers on devices ixy drives itself (each worker would need an interrupt vector of its own; AF_XDP's, xdp:<interface>, sleep on their sockets): use 'backoff', their default, or 'spin'");
}

// The naps of a 'backoff' worker (see the top of this file).
class Napper {
  constructor({ batchSize, ringHold }) {
    this.full = batchSize; // a poll that got this many may have left more behind
    this.ringHold = ringHold; // frames the smallest RX ring holds between two polls
    this.batchSize = batchSize;
    this.workedAt = nowMs();
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
    const now = nowMs();
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

// The sleeps of an 'interrupt' worker (see the top of this file) on the sockets of its
// pairs: after a step in which none of them received or sent a frame (their own counts, as
// the single thread's packetsMoved()), one ppoll() on their RX fds.
class SocketWaiter {
  constructor(pairs) {
    this.pairs = pairs;
    const withRx = pairs.filter((p) => p.rx !== null);
    if (withRx.some((p) => typeof p.readableFd !== 'function')) throw noWorkerInterrupts();
    this.fds = Int32Array.from(withRx, (p) => p.readableFd());
    this.moved = this.framesMoved();
  }

  framesMoved() {
    let n = 0;
    for (const p of this.pairs) {
      if (p.rx !== null) n += p.rx.packets;
      if (p.tx !== null) n += p.tx.packets;
    }
    return n;
  }

  // After a step: sleeps if it moved nothing; returns whether it slept.
  after() {
    const n = this.framesMoved();
    if (n !== this.moved) {
      this.moved = n;
      return false;
    }
    native().waitReadable(this.fds, WAIT_SLICE_MS);
    return true;
  }
}

// What a worker does after a step that received `received` frames, by its idle mode: null
// for 'spin', else a function that sleeps when its mode says so and returns whether it slept.
function pauseFor(idle, { pairs, batchSize, flags, stopAt }) {
  if (idle === 'spin') return null;
  if (idle === 'interrupt') {
    const waiter = new SocketWaiter(pairs);
    return () => waiter.after();
  }
  const rxRings = pairs.filter((p) => p.rx !== null).map((p) => ringHold(p.rx));
  const napper = new Napper({ batchSize, ringHold: Math.min(...rxRings) });
  return (received) => {
    const nap = napper.after(received);
    if (nap === 0) return false;
    Atomics.wait(flags, stopAt, 0, nap); // a stop ends it at once
    return true;
  };
}

// Runs step() (returns the frames it received) until flags[stopAt] is set, read after every
// sleep and every STEPS_PER_LOOK steps. pairs: the QueuePairs the worker owns, to check and
// to sleep on; onEvent(pairIndex, event) for what a check found.
function runWorkerLoop({ step, flags, stopAt = 0, pairs, idle, batchSize, onEvent }) {
  const pause = pauseFor(idle, { pairs, batchSize, flags, stopAt });
  let lookAt = nowMs() + LOOK_MS;
  while (Atomics.load(flags, stopAt) === 0) {
    for (let k = 0; k < STEPS_PER_LOOK; k++) {
      const received = step();
      if (pause !== null && pause(received) && Atomics.load(flags, stopAt) !== 0) break;
    }
    if (nowMs() >= lookAt) {
      lookAt += LOOK_MS;
      for (let i = 0; i < pairs.length; i++) for (const event of pairs[i].check()) onEvent(i, event);
    }
  }
}

module.exports = { runWorkerLoop, workerIdle, Napper };
