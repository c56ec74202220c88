'use strict';

// Running totals that the hot paths add to: each queue's packets and bytes. They live in
// a Float64Array, not in number properties. V8 stores a property that has only ever held
// small integers as a 32-bit integer; the first time a total passes 2^31 - 1 (a queue's
// bytes do after about 3.6 s of 64-byte frames at 10 Mpps) the object gets a new hidden
// class, and every optimised function that handled the object is thrown away, in the
// middle of a run: one forward run showed 1313 deoptimisations of receive() in a row.
// A Float64Array element is a double from the start, and exact up to 2^53.
//
// The queues add a batch with `totals[PACKETS] += n; totals[BYTES] += bytes;` written out in
// receive() and send(), not through a helper function: in the forward loop TurboFan spends
// its inlining budget on receive()/send() themselves and left such a helper as a real call
// in send(), which cost 5-12% of the rate at batch 1 (test/bench/PERFORMANCE.md, ninth round).
const PACKETS = 0; // index of the packet count in a queue's totals
const BYTES = 1; // index of the byte count

function newTotals() {
  return new Float64Array(2);
}

// Gives a queue class the read-only `packets` and `bytes` it has moved since it was made,
// read from the instance's `totals` (newTotals()).
function defineTotals(QueueClass) {
  Object.defineProperties(QueueClass.prototype, {
    packets: { get() { return this.totals[PACKETS]; }, configurable: true },
    bytes: { get() { return this.totals[BYTES]; }, configurable: true },
  });
}

module.exports = { newTotals, defineTotals, PACKETS, BYTES };
