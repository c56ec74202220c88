'use strict';

// The busy loop's clock: performance.now()'s milliseconds, read without allocating. The
// loop reads the clock thousands of times a second and must make no garbage (each
// young-generation collection pauses it), but in Node 20 every performance.now() returns
// a new heap number. Here the addon writes CLOCK_MONOTONIC into a Float64Array made once,
// and the offset to performance.now()'s origin is taken once, so that both clocks can be
// mixed (lib/device/idle.js reads performance.now()). In optimised code the array's
// element stays an unboxed double.
const { native } = require('../host/native');

const reading = new Float64Array(1);
let readClock = null;
let offset = 0;

function nowMs() {
  if (readClock === null) start();
  readClock(reading);
  return reading[0] + offset;
}

// The offset from the monotonic clock to performance.now()'s, from one clockPair().
function start() {
  // An addon built before it had readClock (a clone whose build was not redone): the
  // clock is performance.now()'s, and each read allocates again.
  readClock = native().readClock || ((out) => { out[0] = performance.now(); });
  const { perf, other } = clockPair(() => {
    readClock(reading);
    return reading[0];
  });
  offset = perf - other;
}

// performance.now() (ms) and the clock readOther() reads, at one instant as nearly as two
// reads allow: of three tries, the one whose performance.now() reads around readOther()
// were closest together (the first read of a clock can be slow).
function clockPair(readOther) {
  let best = null;
  for (let i = 0; i < 3; i++) {
    const before = performance.now();
    const other = readOther();
    const after = performance.now();
    if (best === null || after - before < best.gap) best = { gap: after - before, perf: (before + after) / 2, other };
  }
  return best;
}

module.exports = { nowMs, clockPair };
