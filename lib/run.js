'use strict';

// ixy.run(): the loop `ixy forward` runs, for a tool's own per-batch function. It runs the
// function over and over in slices between turns of the event loop (timers, I/O and
// signal handlers keep working), sleeps by the idle modes when no queue moves a packet
// (lib/device/idle.js), warms the function up first (lib/warm-up), watches the devices
// each second (events, EDEVICELOST), prints the per-second report if asked, and stops on
// SIGINT/SIGTERM, an AbortSignal, after `seconds`, or when the function returns true.
//
//   const batch = new ixy.PacketBatch(32);
//   const work = (rx, tx) => {                  // one batch from rx to tx, on queues
//     if (rx.receive(batch) === 0) return;
//     const sent = tx.send(batch);
//     batch.freeFrom(sent);
//   };
//   const warm = ixy.warmUp(work);              // before open(): see below
//   const a = await ixy.open(A);
//   const b = await ixy.open(B);
//   const reason = await ixy.run(work, {
//     paths: [[a.rxQueues[0], b.txQueues[0]], [b.rxQueues[0], a.txQueues[0]]],
//     devices: [a, b], warmUp: warm,
//   });
//
// work(rxQueue, txQueue, i) is called once per step for each path i = [rxQueue, txQueue]
// (either may be null: a generator has no RX, a capture tool no TX); with no paths it is
// called as work(). The queues' receive(batch) and send(batch) are the hot path: nothing
// is checked per call (dev.rxBatch/txBatch check, and cost that much more).
//
// Warming up runs `work` on stand-in queues so that V8 optimises it for frames before the
// first one arrives. warmUp: true (default) does it at the start of run(), while the
// devices are already open and their rings fill; for a line-rate start call
// ixy.warmUp(work) before open(), as `ixy forward` does, and pass what it returned: run()
// closes it when the loop ends. false: no warm-up. Only paths 0 and 1 are warmed. The
// warm-up calls work thousands of times on stand-ins: what work counts or keeps beyond
// its batch (totals, sequence numbers, buffers of a pool of its own) must be reset after
// ixy.warmUp(work), or use warmUp: false (a sender loses nothing by starting cold).
const { runLoop } = require('./loop');
const { warmUp } = require('./warm-up');
const { Device } = require('./device/device');
const { IxyError, shown } = require('./host/errors');
const { checkOptionNames } = require('./host/option-names');
const { idleMode } = require('./device/idle');

const RUN_OPTIONS = ['paths', 'devices', 'seconds', 'idle', 'report', 'json', 'out', 'warmUp', 'signal'];

// Resolves with why the loop stopped: 'signal' (SIGINT/SIGTERM), 'aborted', 'time' or
// 'done' (work returned true); rejects with work's exception or EDEVICELOST.
async function run(work, options = {}) {
  if (typeof work !== 'function') throw new IxyError('EINVAL', `run() needs a per-batch function, got ${shown(work)}`);
  checkOptionNames('run()', options, RUN_OPTIONS);
  const {
    paths = [], devices, seconds = 0, idle, report = false, json = false, out = process.stdout, warmUp: warm = true, signal = null,
  } = options;
  checkPaths(paths);
  if (!Array.isArray(devices) || devices.length === 0 || !devices.every((d) => d instanceof Device)) {
    throw new IxyError('EINVAL', `run() needs devices: the open devices to watch and idle on, e.g. [a, b]; got ${shown(devices)}`);
  }
  const closed = devices.find((d) => d.closed);
  if (closed) closed.checkOpen('run()');
  if (typeof seconds !== 'number' || !(seconds >= 0)) throw new IxyError('EINVAL', `run()'s seconds must be a number >= 0 (0: no limit), got ${shown(seconds)}`);
  if (signal !== null && (typeof signal !== 'object' || typeof signal.addEventListener !== 'function')) {
    throw new IxyError('EINVAL', `run()'s signal must be an AbortSignal, got ${shown(signal)}`);
  }
  if (warm !== true && warm !== false && !(warm && typeof warm.close === 'function')) {
    throw new IxyError('EINVAL', `run()'s warmUp must be true, false or what ixy.warmUp() returned, got ${shown(warm)}`);
  }
  const mode = idleMode(idle, devices[0].options ? devices[0].options.idle : undefined); // EINVAL for an unknown mode

  const n = paths.length;
  const rxs = paths.map((p) => p[0]);
  const txs = paths.map((p) => p[1]);
  const step = n === 0 ? () => work() === true : () => {
    for (let i = 0; i < n; i++) if (work(rxs[i], txs[i], i) === true) return true;
    return false;
  };
  let standIns = warm === true || warm === false ? null : warm;
  try {
    if (warm === true && n > 0) standIns = warmUp((rx, tx, i) => { if (i < n) work(rx, tx, i); });
    return await runLoop({ devices, step, seconds, report: report || json, out, idle: mode || undefined, json, signal });
  } catch (err) {
    // A device closed under the loop (by `work`, a timer, a handler): its queues' memory is
    // gone, and what failed on it says nothing (a TypeError). Say what happened.
    const closed = devices.find((d) => d.closed);
    if (closed && !(err instanceof IxyError)) {
      throw new IxyError('ECLOSED', `${closed.address} was closed while run() was running it: close devices after run() has resolved (end the loop by returning true from work, or by run()'s signal)`);
    }
    throw err;
  } finally {
    if (standIns !== null) standIns.close();
  }
}

function checkPaths(paths) {
  const isQueue = (q, method) => q === null || (q !== undefined && typeof q[method] === 'function');
  if (!Array.isArray(paths) || !paths.every((p) => Array.isArray(p) && p.length === 2 && isQueue(p[0], 'receive') && isQueue(p[1], 'send'))) {
    throw new IxyError('EINVAL', `run()'s paths must be [rxQueue, txQueue] pairs (dev.rxQueues[i], dev.txQueues[j] or null), got ${shown(paths)}`);
  }
}

module.exports = { run };
