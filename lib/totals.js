'use strict';

// Running totals that the hot paths add to: each queue's packets and bytes. They live in
// a Float64Array, not in number properties. V8 stores a property that has only ever held
// small integers as a 32-bit integer; the first time a total passes 2^31 - 1 (a queue's
// bytes do after about 3.6 s of 64-byte frames at 10 Mpps) the object gets a new hidden
// class, and every optimised function that handled the object is thrown away, in the
// middle of a run: one forward run showed 1313 deoptimisations of receive() in a row.
// A Float64Array element is a double from the start, and exact up to 2^53.
const PACKETS = 0;
const BYTES = 1;

function newTotals() {
  return new Float64Array(2);
}

// Adds a batch of `packets` frames and `bytes` bytes to a queue's totals.
function addBatch(totals, packets, bytes) {
  totals[PACKETS] += packets;
  totals[BYTES] += bytes;
}

// Gives a queue class the read-only `packets` and `bytes` it has moved since it was made,
// read from the instance's `totals` (newTotals()).
function defineTotals(QueueClass) {
  Object.defineProperties(QueueClass.prototype, {
    packets: { get() { return this.totals[PACKETS]; }, configurable: true },
    bytes: { get() { return this.totals[BYTES]; }, configurable: true },
  });
}

module.exports = { newTotals, addBatch, defineTotals };
