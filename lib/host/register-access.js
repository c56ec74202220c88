'use strict';

// Waiting for a device, and the register read-modify-writes that start most waits. All
// cold path: init, queue start and stop, recovery. Init runs before any packet moves, so
// short synchronous sleeps are fine there (Atomics.wait is the one sleep Node offers on
// the main thread); waits that can take long (link) are async instead. `regs` is a
// register BAR as a Uint32Array, `offset` a register's byte offset as the datasheet gives it.
const { IxyError } = require('./errors');

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms) {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// One register read or write, as the datasheet names it: getReg(regs, R.STATUS). Cold
// paths only; the hot loops index `regs` at a word index they keep (RxQueue.tailIndex).
function getReg(regs, offset) {
  return regs[offset >> 2];
}

function setReg(regs, offset, value) {
  regs[offset >> 2] = value;
}

function setBits(regs, offset, bits) {
  regs[offset >> 2] |= bits;
}

function clearBits(regs, offset, bits) {
  regs[offset >> 2] &= ~bits;
}

// Clears the bits of `mask` and sets those of `value`, in one write.
function setField(regs, offset, mask, value) {
  regs[offset >> 2] = (regs[offset >> 2] & ~mask) | value;
}

// Polls every millisecond until all of `bits` are set (waitSet) or clear (waitClear);
// ETIMEDOUT after 2 s. `what` names what is awaited, for the message.
function waitSet(regs, offset, bits, what) {
  poll(regs, offset, bits, bits, what);
}

function waitClear(regs, offset, bits, what) {
  poll(regs, offset, bits, 0, what);
}

function poll(regs, offset, bits, want, what, timeoutMs = 2000) {
  const deadline = Date.now() + timeoutMs;
  while ((regs[offset >> 2] & bits) !== want) {
    if (Date.now() > deadline) {
      throw new IxyError('ETIMEDOUT', `timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    sleepSync(1);
  }
}

module.exports = { sleepSync, sleep, getReg, setReg, setBits, clearBits, setField, waitSet, waitClear };
