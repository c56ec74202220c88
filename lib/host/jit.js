'use strict';

// V8 set for the forwarding loop: its inlining budget raised, functions compiled sooner, and
// no full collections by its memory reducer once the loop runs. Call tuneJit() once, at
// start-up, before the hot code runs; the `ixy` command and the benchmarks do.
//
// What it keeps: a whole forwarding step (runSlice() in lib/loop/index.js: forwardBatch(),
// receive(), touchFrames(), send() and reclaim(), both directions) is one optimised
// function, with no call left on its usual path; test/commands/forward.test.js checks that. By
// Node's defaults TurboFan inlines a function of at most 460 bytes of bytecode, and at
// most 920 bytes in all into one function: receive() alone is larger than the first and
// a step several times the second, and every call left in a step checks the maps of the
// queues, the batch and the pool again. What inlining was worth is in bench/LOG.md.
//
// The memory reducer: V8 (Node 20 and 22) marks a heap whose old generation grew during
// start-up as likely to hold garbage, and about 8 s later, if little is being allocated (as
// in a loop that allocates nothing per packet), collects the whole heap two or three times
// to give memory back, each a pause of the loop of milliseconds while frames wait. The
// third flag turns that start-up trigger off; a heap that fills still gets collected.
//
// Tier-up: V8 compiles a function once it has used up a budget, counted per function. The
// step and runSlice() use theirs up in milliseconds, but the event loop's own functions
// (Node's processImmediate() and its async-context helpers, runLoop()'s turn) run once per
// turn, 100 times a second in a run's first 2 s and about 10 after (lib/loop/index.js): by
// V8's default budget they are compiled seconds into a run, each compilation taking
// milliseconds of the CPU the loop shares with V8's threads. With an eighth of the budget
// that happens in the first seconds, before traffic matters, and the once-a-second work
// (stats, checks) gets compiled too instead of staying interpreted.
//
// The flags are V8's own (`node --v8-options`; each one set is present in its Node line); they
// change how much TurboFan inlines and when V8 compiles and collects, not what the code
// does. They apply to the whole process, so the library does not set them by itself: an
// application with hot loops of its own calls tuneJit() as well (or starts node with the
// same flags).
//
// A later V8 may rename or drop a flag. v8.setFlagsFromString() returns nothing and V8
// answers an unknown flag by printing "Error: unrecognized flag ..." on stderr, which would
// greet every user of the `ixy` command. So each flag is set while the addon holds stderr
// (captureStderr in native/process.cc): silence means V8 took it, anything else means it did
// not, and tuneJit() says so once, in one line of its own. Asking `node --v8-options` instead
// costs a process start (70-110 ms) on every run; the capture, well under a millisecond.
const v8 = require('v8');
const { native } = require('./native');

// An eighth of each tier-up budget, from V8's defaults: V8 11 (Node 20) counts bytecode
// run, V8 12 and later (Node 22 on) calls, for TurboFan and for Maglev.
function tierUpFlags(v8Major) {
  const eighth = (flag, byDefault) => `${flag}=${byDefault / 8}`;
  if (v8Major < 12) return [eighth('--interrupt-budget', 67584)];
  return [eighth('--invocation-count-for-turbofan', 3000), eighth('--invocation-count-for-maglev', 400)];
}

const JIT_FLAGS = [
  // per function: above receive(), the largest function of a step, with room to grow
  '--max-inlined-bytecode-size=800',
  // per optimised function: above both directions of a forwarding step and the loop's clock
  '--max-inlined-bytecode-size-cumulative=6000',
  // no full collections by the memory reducer after start-up (above)
  '--no-memory-reducer-for-small-heaps',
  // tier-up at an eighth of V8's default budget (above)
  ...tierUpFlags(Number(process.versions.v8.split('.')[0])),
];

// Sets each V8 flag; returns those V8 refused, as [{ flag, reason }] (reason: the first
// line V8 printed, e.g. "unrecognized flag --x"). Without the addon's captureStderr (not
// built yet, or built from older sources) the flags are set plainly and V8 speaks for itself.
function setV8Flags(flags) {
  let captureStderr = null;
  try {
    captureStderr = native().captureStderr || null; // null: an addon built before it had one
  } catch {
    captureStderr = null;
  }
  const refused = [];
  for (const flag of flags) {
    if (captureStderr === null) {
      v8.setFlagsFromString(flag);
      continue;
    }
    const said = captureStderr(() => v8.setFlagsFromString(flag)).trim();
    if (said !== '') refused.push({ flag, reason: said.split('\n')[0].replace(/^Error: /, '') });
  }
  return refused;
}

let toldRefusal = false;

// Raises the inlining budget, lowers the tier-up budget and turns off the memory reducer's
// start-up trigger. Returns the flags V8 refused (none on Node 20 to 26); the first call
// that meets a refusal writes one line on stderr, later calls stay quiet.
function tuneJit() {
  const refused = setV8Flags(JIT_FLAGS);
  if (refused.length > 0 && !toldRefusal) {
    toldRefusal = true;
    const what = refused.map((r) => `${r.flag} (${r.reason})`).join(', ');
    process.stderr.write(`ixy: V8 ${process.versions.v8} (Node ${process.version}) refused ${what}; ` +
      'the hot loops run as V8 likes by default, correct but slower or with more pauses\n');
  }
  return refused.map((r) => r.flag);
}

module.exports = { tuneJit, JIT_FLAGS };
