'use strict';

// The shape every long-running app shares: call `step()` as fast as possible, but give the
// event loop a turn when it has something to do, so timers (the per-second report), signals
// and I/O keep working; stop on SIGINT/SIGTERM, after `seconds`, or when step() says done.
// When nothing moves, sleep instead (lib/device/idle.js).
const { Report } = require('./report');
const { Watch } = require('./watch');
const { idleMode, bestIdle, Idler } = require('../device/idle');
const { nowMs } = require('./clock');
const { native } = require('../host/native');

const SLICE_MS = 2; // the unit of the pace below and of the warm-up's count
// Every this many slices (10 ms) the loop asks whether the event loop has work (a timer due,
// a file descriptor ready: I/O, a signal, a worker's message; eventLoopHasWork() in
// native/process.cc) and gives it a turn only then. A turn is not free: it allocates an
// Immediate and Node's async bookkeeping for it, the busy loop's only garbage, and after
// milliseconds of polling it runs Node's code from cold caches (tens of µs, bench/LOG.md)
// while arriving frames wait.
const SLICES_PER_TURN = 5;
// What libuv cannot see (promise callbacks, process.nextTick() and setImmediate() callbacks
// that step() queued) waits for a turn at most this long.
const MAX_TURN_GAP_MS = 100;
// The first this many turns (the first 2 s) come every 10 ms whether or not there is
// work: V8 compiles the event loop's own functions (Node's processImmediate() and the like,
// run once per turn) after enough calls (lib/host/jit.js), and this is when it should,
// before traffic matters, not tens of seconds into a run.
const EAGER_TURNS = 200;
// The clock is read about this many times per slice, not per step: a read (lib/loop/clock.js,
// which allocates nothing) is a call into the addon of about 100 ns, and an idle step
// (nothing received) takes only tens of nanoseconds. The steps between clock reads adapt
// to how long a step takes, within [1, MAX_STEPS_PER_READ].
const CLOCK_READS_PER_SLICE = 8;
const MAX_STEPS_PER_READ = 4096;
// The loop sleeps only once it has polled this many steps, in at least this many slices,
// at full speed (about 0.1 s of a CPU, once): V8 marks runSlice() hot within the first
// slice, but may compile it at once, before its first call has left feedback for its
// first lines; that code deoptimises at its next call and is compiled again only after
// more calls. An idle loop calls it once a millisecond ('backoff') or a second
// ('interrupt'): the compilation would then begin at the first frame after idleness
// (bench/LOG.md, 2026-11-27). Slices here give V8 those calls before the first sleep.
const WARM_STEPS = 200000;
const WARM_SLICES = 50;
// And before the first slice, this many single-step calls: V8 gives a function its
// feedback vector only after some of its bytecode has run, so the first call's first lines
// leave no feedback; a runSlice() made hot within its first (busy) call was then compiled
// with none for them and deoptimised at its next call. After these calls it has some.
const WARM_CALLS = 100;

// Runs step() for about `sliceMs` (at least one clock read's worth of steps); returns true
// as soon as step() says it is done. A plain function (not async), so that V8 optimises it
// with step() inlined. The idle loop's single polls come through here too (sliceMs 0, one
// step per read): one compiled loop for both, compiled before the first sleep (WARM_SLICES)
// and kept warm by the idle polls. Were only the busy loop to call it, its compilation (the
// whole forwarding step inlined: tens of ms of a CPU, more on a loaded machine) would begin
// at the first frame after idleness and compete with the loop just as traffic begins.
function runSlice(step, pace, sliceMs) {
  const start = nowMs();
  const end = start + sliceMs;
  let steps = 0;
  let now = start;
  do {
    for (let i = pace.stepsPerRead; i > 0; i--) if (step()) return true;
    steps += pace.stepsPerRead;
    now = nowMs();
  } while (now < end);
  pace.total += steps;
  pace.slices++;
  if (sliceMs === 0) return false; // an idle poll: its pace stays one step
  const perStep = (now - start) / steps;
  const want = Math.floor(sliceMs / CLOCK_READS_PER_SLICE / (perStep > 0 ? perStep : 1e-6));
  pace.stepsPerRead = want < 1 ? 1 : want > MAX_STEPS_PER_READ ? MAX_STEPS_PER_READ : want;
  return false;
}

// runSlice() where the kernel fills the devices' rings (Idler.readableFds: AF_XDP): a step
// that moved no packet is followed not by the next step but by a sleep on the sockets until
// frames come, within the slice, so that the kernel's NAPI poll gets the CPU a spinning loop
// would take. Every step here moves packets or ends in a syscall: reading the clock and the
// counts after each costs little.
function runSliceWaiting(step, pace, sliceMs, devices, idler) {
  const end = nowMs() + sliceMs;
  let moved = packetsMoved(devices);
  let steps = 0;
  for (;;) {
    if (step()) return true;
    steps++;
    const now = nowMs();
    if (now >= end) break;
    const n = packetsMoved(devices);
    if (n === moved) idler.waitForFrames(end - now);
    moved = n;
  }
  pace.total += steps;
  pace.slices++;
  return false;
}

// True when Node's event loop has work waiting (native/process.cc). An addon built before it
// had eventLoopHasWork (a clone whose build was not redone): always, a turn every 10 ms.
function hasWork() {
  const ask = native().eventLoopHasWork;
  return ask === undefined ? true : ask();
}

// setTimeout waits at most 2^31 - 1 ms (about 24.8 days): a longer delay warns and fires
// at once. So a longer run waits in chunks of at most that, each armed for what is left.
const MAX_TIMER_MS = 2 ** 31 - 1;

// Calls done() after `ms`; returns a function that cancels it.
function afterMs(ms, done, chunkMs = MAX_TIMER_MS) {
  const end = performance.now() + ms;
  let timer = null;
  const arm = () => {
    const left = end - performance.now();
    if (left <= 0) done();
    else timer = setTimeout(arm, Math.min(left, chunkMs));
  };
  arm();
  return () => clearTimeout(timer);
}

// Packets the devices' queues have moved so far: a change says the loop had work. The
// busy loop reads it once per slice, so that a step pays nothing for it; runSliceWaiting()
// once per step, each of which moves packets or ends in a syscall.
function packetsMoved(devices) {
  let n = 0;
  for (const d of devices) {
    for (const q of d.rxQueues) n += q.packets;
    for (const q of d.txQueues) n += q.packets;
  }
  return n;
}

// A report stream that fails ends the run as 'failed', with the stream's error to throw
// (lib/loop/report.js); returns a function that stops listening.
function endOnReportFailure(report, watch) {
  return report.onFailure((err) => {
    if (watch.failure === null) watch.failure = err;
    watch.end('failed');
  });
}

// devices: what to report on and watch each second; step(): returns true when the app is
// done. Resolves with the reason it stopped: 'signal', 'time' or 'done'; rejects with the
// device's error when a device is gone (EDEVICELOST). Each second every device is checked
// (device.check()): link changes and recovered TX hangs are printed as lines of their own.
// idle: 'backoff', 'spin' or 'interrupt' (default: the best the devices can do), see
// lib/device/idle.js; once no queue of `devices` has moved a packet for a while the loop sleeps
// between single steps.
// json: the reports as JSON lines (lib/loop/report.js). stop: an AbortSignal that stops the
// loop as SIGINT does ('signal'; lib/apps/stop-signal.js), even when it was aborted before
// the loop began; signal: one whose abort stops it as 'aborted' (ixy.run()'s). lines: the
// app's Report (lib/loop/report.js) to print through, else one of `out` and `json`; a
// report stream that fails rejects with its error (EPIPE, ENOSPC, EREPORT).
async function runLoop({ devices, step, seconds = 0, report = true, out = process.stdout, idle, json = false, stop = null, signal = null, lines = null }) {
  const mode = idleMode(idle) || bestIdle(devices);
  const idler = mode === 'spin' ? null : new Idler(mode, devices); // EUNSUPPORTED: 'interrupt' without VFIO
  const waits = idler !== null && idler.readableFds !== null;
  // The first sleep waits for V8 to have compiled the busy loop (WARM_STEPS), but a
  // waiting loop's steps are few (each is a batch or a wait): its slices are the measure.
  const warm = (pace) => pace.slices >= WARM_SLICES && (waits || pace.total >= WARM_STEPS);
  const own = lines === null;
  const reportTo = own ? new Report({ json, out }) : lines;
  const watch = new Watch({ devices, lines: reportTo, report, stop, signal });
  const unlisten = endOnReportFailure(reportTo, watch);
  const cancelTimer = seconds > 0 ? afterMs(seconds * 1000, () => watch.end('time')) : null;

  try {
    await new Promise((resolve, reject) => {
      const pace = { stepsPerRead: 16, total: 0, slices: 0 };
      const idlePace = { stepsPerRead: 1, total: 0, slices: 0 };
      let moved = packetsMoved(devices);
      // False once the loop is to sleep: no queue has moved a packet for a while (never
      // with 'spin').
      const busy = () => {
        if (idler === null) return true;
        const n = packetsMoved(devices);
        const now = nowMs();
        if (n !== moved) {
          moved = n;
          idler.worked(now);
          return true;
        }
        return !(idler.idle(now) && warm(pace));
      };
      // After each turn's slices (or, while idle, each single step): resolve when stopped,
      // else the next slices at once or, once idle, a single step after a sleep.
      const schedule = () => {
        if (watch.reason !== null) resolve();
        else if (busy()) setImmediate(turn);
        else idler.sleep(stepOnce).then((worked) => (worked ? schedule() : wake()), reject);
      };
      // While busy: slices until the event loop has work, by a callback rather than an
      // `await` loop: a turn then allocates one Immediate and no promises.
      let turns = 0;
      const turn = () => {
        const from = nowMs();
        // The eager turns evaluate the same test as the others (it fails on the time), so
        // that V8 compiles it once, with feedback for every call in it.
        const gapMs = ++turns > EAGER_TURNS ? MAX_TURN_GAP_MS : 0;
        try {
          do {
            for (let k = 0; k < SLICES_PER_TURN && watch.reason === null; k++) {
              if (waits ? runSliceWaiting(step, pace, SLICE_MS, devices, idler) : runSlice(step, pace, SLICE_MS)) watch.reason = 'done';
            }
          } while (watch.reason === null && busy() && !hasWork() && nowMs() - from < gapMs);
        } catch (err) {
          reject(err);
          return;
        }
        schedule();
      };
      // One step (through runSlice(), see there); true when the loop is to stop or the
      // step moved packets.
      const stepOnce = () => {
        if (watch.reason === null && runSlice(step, idlePace, 0)) watch.reason = 'done';
        return watch.reason !== null || packetsMoved(devices) !== moved;
      };
      // After a sleep: one step, then sleep again unless it moved packets.
      const wake = () => {
        try {
          stepOnce();
        } catch (err) {
          reject(err);
          return;
        }
        schedule();
      };
      for (let k = 0; k < WARM_CALLS && watch.reason === null; k++) stepOnce();
      setImmediate(turn);
    });
  } finally {
    watch.close();
    unlisten();
    if (own) reportTo.close();
    if (idler !== null) idler.close();
    if (cancelTimer) cancelTimer();
  }
  if (watch.failure) throw watch.failure;
  return watch.reason;
}

// runSlice and SLICE_MS: also for bench/stand-in.js, which times the steps in the loop the apps
// run; SLICES_PER_TURN, EAGER_TURNS and MAX_TURN_GAP_MS for the tests of the turns.
module.exports = { runLoop, runSlice, SLICE_MS, SLICES_PER_TURN, EAGER_TURNS, MAX_TURN_GAP_MS, afterMs, endOnReportFailure };
