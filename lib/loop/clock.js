'use strict';

// The busy loop's clock: performance.now()'s milliseconds, read without allocating. In
// Node 20 every performance.now() returns a new heap number, and a loop that reads the
// clock thousands of times a second made enough garbage for a young-generation collection,
// a pause of the loop, every few seconds. Here the addon writes CLOCK_MONOTONIC into a
// Float64Array made once, and the offset to performance.now()'s origin is taken once, so
// that both clocks can be mixed (lib/device/idle.js reads performance.now()). In optimised
// code the array's element stays an unboxed double.
const { native } = require('../host/native');

const reading = new Float64Array(1);
let readClock = null;
let offset = 0;

function nowMs() {
  if (readClock === null) start();
  readClock(reading);
  return reading[0] + offset;
}

// The offset from the monotonic clock to performance.now()'s: of three tries, from the read
// whose two performance.now() calls around it were closest. The first performance.now()
// of a process loads Node's perf module (a millisecond or so): it comes before the tries.
function start() {
  // An addon built before it had readClock (a clone whose build was not redone): the
  // clock is performance.now()'s, and each read allocates again.
  readClock = native().readClock || ((out) => { out[0] = performance.now(); });
  performance.now();
  let closest = Infinity;
  for (let i = 0; i < 3; i++) {
    const before = performance.now();
    readClock(reading);
    const after = performance.now();
    if (after - before < closest) {
      closest = after - before;
      offset = (before + after) / 2 - reading[0];
    }
  }
}

module.exports = { nowMs };
