'use strict';

// Waiting for a device: register polls with a timeout, and sleeps. Init runs before any
// packet moves, so short synchronous sleeps are fine there; Atomics.wait is the one sleep
// Node offers on the main thread. Waits that can take long (link) are async instead.
const { IxyError } = require('./errors');

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms) {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Polls regs[offset] until (value & mask) is set (or clear), every millisecond.
function pollRegister(regs, offset, mask, wantSet, what, timeoutMs = 2000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const set = (regs[offset >> 2] & mask) !== 0;
    if (set === wantSet) return;
    if (Date.now() > deadline) {
      throw new IxyError('ETIMEDOUT', `timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    sleepSync(1);
  }
}

module.exports = { sleepSync, sleep, pollRegister };
