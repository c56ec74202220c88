'use strict';

// The shape every long-running app shares: call `step()` as fast as possible, but give the
// event loop a turn every couple of milliseconds so timers (the per-second report), signals
// and I/O keep working; stop on SIGINT/SIGTERM, after `seconds`, or when step() says done.
const { setImmediate: yieldToEventLoop } = require('timers/promises');
const { RateMeter, formatRates } = require('../stats');

const SLICE_MS = 2; // how long we run before yielding
const STEPS_BETWEEN_CLOCK_READS = 64;

// devices: what to report on each second; step(): returns true when the app is done.
// Resolves with the reason it stopped: 'signal', 'time' or 'done'.
async function runLoop({ devices, step, seconds = 0, report = true, out = process.stdout }) {
  let stopReason = null;
  const onSignal = () => { stopReason = 'signal'; };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const meters = devices.map((d) => new RateMeter(d));
  const reporter = report ? setInterval(() => {
    for (const m of meters) out.write(`${formatRates(m.device.address, m.sample())}\n`);
  }, 1000) : null;
  const timer = seconds > 0 ? setTimeout(() => { stopReason = stopReason || 'time'; }, seconds * 1000) : null;

  try {
    while (stopReason === null) {
      const sliceEnd = performance.now() + SLICE_MS;
      let done = false;
      while (!done && performance.now() < sliceEnd) {
        for (let i = 0; i < STEPS_BETWEEN_CLOCK_READS && !done; i++) done = step();
      }
      if (done) stopReason = 'done';
      else await yieldToEventLoop();
    }
  } finally {
    if (reporter) clearInterval(reporter);
    if (timer) clearTimeout(timer);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return stopReason;
}

module.exports = { runLoop };
