'use strict';

// Receiving with `for await`, without starving the event loop:
//
//   for await (const batch of dev.receive(0)) {
//     for (let i = 0; i < batch.count; i++) use(batch.data(i), batch.lengths[i]);
//   }
//
// The iterator polls the RX queue. It hands out a batch as soon as one has packets, but
// every SLICE_MS (or when the queue is empty for that long) it first waits for
// setImmediate, so that timers, I/O and signal handlers run between batches. (A resolved
// promise alone is not enough: promise callbacks run before timers and I/O, so a loop that
// only awaits ready batches would never let them in.)
//
// Ownership: there is ONE batch object, reused for every step. It is valid until the next
// step of the loop. When the loop asks for the next batch, the iterator gives back every
// buffer the batch still owns (batch.release(): ids[sent..count)). So:
//   - do nothing: the packets are freed for you;
//   - dev.txBatch(q, batch): the packets that fit are sent (the driver frees them later),
//     the rest are freed at the next step;
//   - to keep a buffer longer, copy its id elsewhere and remove it from the batch (for all
//     of them: batch.count = 0); you then free it yourself with batch.pool.free(id).
// With `debug` (or a device opened with it) a batch used after its turn throws ESTALEBATCH
// rather than showing later frames; dev.frames() and dev.createReadStream() hand out copies
// (lib/device/frames.js).
// Leaving the loop (break, return, throw) releases the last batch too. dev.close() ends
// the loop at its next step, and so does aborting the AbortSignal passed as `signal` (one
// that is already aborted ends it at once).
//
// Per packet this costs nothing: the work per step is one receive call, one clock read and
// one release of the previous batch's leftovers.
//
// Filter: `filter: 'udp and dst port 53'` (tcpdump's language, lib/filter/) or a predicate
// (bytes, length) => boolean hands out only the frames it accepts; the others go back to
// the pool as soon as they are received. A poll that only found rejected frames counts
// as work for the idler (traffic is flowing), but hands out nothing.
//
// Idle (lib/device/idle.js; the default is what open() was given, else the best the device can
// do: 'interrupt' through VFIO, 'backoff' otherwise): with `idle: 'backoff'` a
// queue that has stayed empty for a few milliseconds is polled once per 1 ms timer,
// instead of once per turn: an idle loop then sleeps in the event
// loop. The first batch returns it to full polling. `idle: 'spin'` polls without pause.
// `idle: 'interrupt'` (VFIO, the device model, AF_XDP) sleeps until the NIC's receive
// interrupt (an AF_XDP socket: until the kernel puts frames on its RX ring) instead; on
// AF_XDP an empty poll also sleeps on the socket until the slice ends.
const { setImmediate: yieldToEventLoop } = require('timers/promises');
const { PacketBatch } = require('../memory/batch');
const { IxyError, shown } = require('../host/errors');
const { idleMode, bestIdle, Idler } = require('./idle');
const { compileFilter } = require('../filter');
const { BatchTurns } = require('./batch-turns');
const { checkOptionNames } = require('../host/option-names');

const RECEIVE_OPTIONS = ['batchSize', 'sliceMs', 'status', 'hashes', 'signal', 'idle', 'filter', 'debug'];

const SLICE_MS = 1; // how long we may poll before giving the event loop a turn

class ReceiveIterator {
  // status: the batch keeps each frame's descriptor status word (batch.checksumOf());
  // hashes: each frame's RSS hash (batch.hashes). debug: each step hands out a view of the
  // batch that throws ESTALEBATCH once its turn is over (lib/device/batch-turns.js);
  // default: the device's `debug` option.
  constructor(dev, queue, options = {}) {
    const { batchSize = 32, sliceMs = SLICE_MS, status = false, hashes = false, signal = null, idle, filter = null, debug } = checkOptionNames('receive()', options, RECEIVE_OPTIONS);
    dev.checkQueue('RX', queue, dev.rxQueues.length);
    const mode = idleMode(idle, dev.options ? dev.options.idle : undefined) || bestIdle([dev]);
    if (signal !== null && (typeof signal !== 'object' || typeof signal.addEventListener !== 'function')) {
      throw new IxyError('EINVAL', `receive()'s signal must be an AbortSignal, got ${shown(signal)}`);
    }
    this.keep = filterOption(filter); // before anything that needs undoing: EFILTER throws
    this.ready = 0; // frames the last poll leaves in the batch for the loop (after the filter)
    this.dev = dev;
    this.queue = queue;
    this.batch = new PacketBatch(batchSize, null, { status, hashes });
    this.sliceMs = sliceMs;
    this.sliceEnd = 0; // yield first: the caller's code after the loop setup runs first
    this.idler = mode === 'spin' ? null : new Idler(mode, [dev], queue); // EUNSUPPORTED: 'interrupt' without a line
    this.waits = this.idler !== null && this.idler.readableFds !== null; // an empty poll sleeps on the socket
    this.finished = false;
    // An abort marks the iterator finished (next() checks that after every await already,
    // so a signal costs the loop nothing) and ends an idle sleep at once: a backoff timer
    // or an interrupt wait of up to a second.
    this.signal = signal;
    this.onAbort = () => {
      this.finished = true;
      if (this.idler !== null) this.idler.close();
    };
    if (signal !== null) {
      if (signal.aborted) this.finished = true;
      else signal.addEventListener('abort', this.onAbort, { once: true });
    }
    const checked = debug === undefined ? Boolean(dev.options && dev.options.debug) : Boolean(debug);
    this.turns = checked ? new BatchTurns(this.batch) : null;
    // One result object for every step: for-await reads it at once and keeps nothing.
    this.result = { value: this.batch, done: false };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  async next() {
    if (this.turns !== null) this.turns.end();
    if (this.batch.count > 0) this.batch.release();
    for (;;) {
      const now = performance.now();
      if (now >= this.sliceEnd) {
        if (this.idler !== null && this.idler.idle(now)) {
          // The loop body may have closed the device: its interrupt cannot be armed then.
          if (this.finished || this.dev.closed) return this.finish();
          this.sliceEnd = 0; // one poll, then sleep again unless it found frames
          if (await this.idler.sleep(() => this.poll())) {
            this.wokeUp();
            if (this.ready > 0) return this.handOut();
          }
        } else {
          await yieldToEventLoop();
          this.sliceEnd = performance.now() + this.sliceMs;
        }
      }
      // Checked after every await: the device may have been closed meanwhile, and a closed
      // queue's ring memory is gone.
      if (this.finished || this.dev.closed) return this.finish();
      if (this.poll()) {
        if (this.sliceEnd === 0) this.wokeUp();
        else if (this.idler !== null) this.idler.worked(now);
        if (this.ready > 0) return this.handOut();
      } else if (this.waits) {
        this.idler.waitForFrames(this.sliceEnd - performance.now()); // AF_XDP: see lib/device/idle.js
      }
    }
  }

  // One receive call into the batch; true when it took frames (which the filter may
  // then all have freed).
  poll() {
    this.batch.sent = 0;
    const n = this.dev.rxQueues[this.queue].receive(this.batch);
    this.ready = n === 0 || this.keep === null ? n : this.batch.keepIf(this.keep);
    return n > 0;
  }

  // The first frames after a sleep: full polling again, the next sleep the shortest.
  wokeUp() {
    const now = performance.now();
    this.idler.worked(now);
    this.sliceEnd = now + this.sliceMs;
  }

  // The batch, or in debug mode a view of it for this turn only.
  handOut() {
    if (this.turns !== null) this.result.value = this.turns.next();
    return this.result;
  }

  // Called by for-await on break, return or throw.
  async return() {
    return this.finish();
  }

  finish() {
    this.finished = true;
    if (this.turns !== null) this.turns.end();
    if (this.idler !== null) this.idler.close();
    if (this.signal !== null) this.signal.removeEventListener('abort', this.onAbort);
    if (this.batch.count > 0) this.batch.release();
    return { value: undefined, done: true };
  }
}

// receive()'s `filter`: an expression to compile, a predicate, or null.
function filterOption(filter) {
  if (filter === null || filter === undefined) return null;
  if (typeof filter === 'string') return compileFilter(filter);
  if (typeof filter === 'function') return filter;
  throw new IxyError('EINVAL', `receive()'s filter must be a filter expression or a function (bytes, length) => boolean, got ${shown(filter)}`);
}

module.exports = { ReceiveIterator, SLICE_MS, RECEIVE_OPTIONS };
