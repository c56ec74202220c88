'use strict';

// V8's inlining budget, raised for the forwarding loop. Call tuneJit() once, at start-up,
// before the hot code runs; the `ixy` command and the benchmarks do.
//
// Why: TurboFan inlines a function only if its bytecode is at most 460 bytes, and at most
// 920 bytes in all into one optimised function (Node 20's defaults). The apps' loop
// (runSlice() in lib/apps/loop.js) calls step(), which forwards one batch each way. One
// direction is about 1,800 bytes of bytecode: forwardBatch() 63, receive() 596, send()
// 424, reclaim() 244, touchFrames() 230, tagOf() 130 and two small helpers. Within the
// defaults V8 inlined step() into runSlice(), in some processes forwardBatch() too, and
// stopped there: every batch paid calls to receive() and send(), each checking the maps
// of the queues, the batch and the pool again. With the budget below, the whole step
// (about 3,700 bytes) is one optimised function with no call left on its usual path.
// Side by side on the model that was worth 30-80% at batch 1 and 8-13% at batch 32
// with the vCPUs sharing a cache (test/bench/PERFORMANCE.md, thirteenth round).
//
// The flags are V8's own (`node --v8-options`, present in Node 20, 22 and 24); they
// change how much TurboFan inlines, not what the code does. They apply to the whole
// process, so the library does not set them by itself: an application with hot loops of
// its own calls tuneJit() as well (or starts node with the same flags).
const v8 = require('v8');

const JIT_FLAGS = [
  // per function: above receive()'s ~600 bytes, with room to grow
  '--max-inlined-bytecode-size=800',
  // per optimised function: above both directions of a forwarding step (~3,700 bytes)
  '--max-inlined-bytecode-size-cumulative=5000',
];

function tuneJit() {
  for (const flag of JIT_FLAGS) v8.setFlagsFromString(flag);
}

module.exports = { tuneJit };
