'use strict';

// A forwarder started with default flags, left idle, then met by traffic (issue 39): it
// sleeps while idle (lib/device/idle.js), and the first frames after the idleness must find the
// busy loop as ready as a spinning loop finds it: its busy code (runSlice() with the whole
// forwarding step inlined, lib/apps/loop.js) already compiled by TurboFan, though an idle
// loop never calls it, since a compilation that starts with the traffic competes with the
// loop while the RX ring and packet buffer hold only milliseconds of frames; and, with the
// model's default idle 'interrupt' (lib/host/model-irq.js), still woken by interrupts after
// the safety timeouts of its interrupt wait (lib/device/idle.js says why). How both were
// found: bench/LOG.md, "The cold-start stall".
// Each run: a fresh model and `ixy forward A B` with V8's --trace-opt; idle for two seconds
// (until its second report), then FRAMES frames at 1 Mpps into port 0, checked in order at
// port 1's sink. Losses are the model's count (rxDropNoDesc), not the forwarder's, and
// count against it beyond those the machine caused (test/support/traced-forward.js).
const assert = require('assert');
const { suiteTmpDir } = require('../support/helpers');
const { tracedForward, lossesBeyondCpuWait } = require('../support/traced-forward');

const RUNS = 3;
const FRAMES = 200000;
const RATE = 1000000;
const HOT = ['runSlice', 'step', 'forwardBatch', 'receive', 'touchFrames', 'send', 'reclaim'];

// Two seconds idle (its second report, a rate line per port): past the first timeout of an
// interrupt-waiting loop (lib/device/idle.js INTERRUPT_SAFETY_MS), after which it must still
// wake by interrupt.
const coldStart = (dir) => tracedForward(dir, { flags: ['--trace-opt', '--trace-deopt'], rateLines: 4, rate: RATE, frames: FRAMES });

describe('ixy forward with default flags, from a cold start', function () {
  this.timeout(40000 * RUNS);
  const tmpDir = suiteTmpDir('ixy-cold-');
  const runs = [];

  before(async function () {
    for (let r = 0; r < RUNS; r++) runs.push(await coldStart(tmpDir()));
  });

  it('has compiled its busy loop before the traffic comes', function () {
    for (const run of runs) {
      assert.strictEqual(run.code, 0, run.stderr);
      const late = run.trafficTrace.split('\n')
        .map((l) => (/^\[compiling method 0x[0-9a-f]+ <JSFunction (\w+)/.exec(l) || [])[1])
        .filter((f) => HOT.includes(f));
      // What V8 did to the hot functions while the loop was idle, to tell why.
      const idleLog = run.idleTrace.split('\n').filter((l) => HOT.some((f) => l.includes(`<JSFunction ${f} `)) && !l.includes('dependent code')).slice(-6);
      assert.deepStrictEqual(late, [], `compiled only once the frames came: ${late.join(', ')}; before them:\n${idleLog.join('\n')}`);
    }
  });

  it(`at ${RATE / 1e6} Mpps after two seconds idle, loses nothing but what came while it waited for a CPU (${RUNS} runs)`, function () {
    for (const run of runs) {
      const [p0, p1] = run.ports;
      const lost = p0.rxDropNoDesc;
      assert.strictEqual(lossesBeyondCpuWait(run, RATE), 0,
        `${lost} frames found no RX descriptor, the loop waited ${run.cpuWaitMs.toFixed(1)} ms for a CPU; model port 0: ${JSON.stringify(p0)}`);
      assert.strictEqual(p1.sinkFrames, FRAMES - lost, 'every frame the forwarder received reached the sink');
      if (lost === 0) assert.strictEqual(p1.sinkSeqErrors, 0);
    }
  });
});
