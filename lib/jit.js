'use strict';

// V8's inlining budget, raised for the forwarding loop. Call tuneJit() once, at start-up,
// before the hot code runs; the `ixy` command and the benchmarks do.
//
// What it keeps: a whole forwarding step (runSlice() in lib/apps/loop.js: forwardBatch(),
// receive(), touchFrames(), send() and reclaim(), both directions) is one optimised
// function, with no call left on its usual path; test/forward.test.js checks that. By
// Node's defaults TurboFan inlines a function of at most 460 bytes of bytecode, and at
// most 920 bytes in all into one function: receive() alone is larger than the first and
// a step several times the second, and every call left in a step checks the maps of the
// queues, the batch and the pool again. The sizes and what inlining was worth are in
// test/bench/PERFORMANCE.md (thirteenth round).
//
// The flags are V8's own (`node --v8-options`, present in Node 20, 22 and 24); they
// change how much TurboFan inlines, not what the code does. They apply to the whole
// process, so the library does not set them by itself: an application with hot loops of
// its own calls tuneJit() as well (or starts node with the same flags).
const v8 = require('v8');

const JIT_FLAGS = [
  // per function: above receive(), the largest function of a step, with room to grow
  '--max-inlined-bytecode-size=800',
  // per optimised function: above both directions of a forwarding step
  '--max-inlined-bytecode-size-cumulative=5000',
];

function tuneJit() {
  for (const flag of JIT_FLAGS) v8.setFlagsFromString(flag);
}

module.exports = { tuneJit };
