'use strict';

// The run loop's timer: `--seconds` of any length ends the run when it should.
const assert = require('assert');
const { runLoop, afterMs } = require('../lib/apps/loop');

describe('run loop timer', function () {
  it('a run longer than setTimeout can wait (2^31 ms) neither warns nor ends at once', async function () {
    const warnings = [];
    const onWarning = (w) => warnings.push(w.name);
    process.on('warning', onWarning);
    const start = performance.now();
    try {
      const reason = await runLoop({
        devices: [], seconds: 2147484, report: false, out: { write() {} },
        step: () => performance.now() - start > 200, // done after 200 ms
      });
      await new Promise((resolve) => setImmediate(resolve)); // warnings come on a later tick
      assert.strictEqual(reason, 'done', 'the timer ended the run');
    } finally {
      process.removeListener('warning', onWarning);
    }
    assert.deepStrictEqual(warnings, []);
  });

  it('waits in chunks: done() comes once, after the whole delay, and cancel stops it', async function () {
    const start = performance.now();
    let calls = 0;
    let at = 0;
    afterMs(120, () => { calls++; at = performance.now() - start; }, 25);
    const cancel = afterMs(60, () => { calls += 100; }, 25);
    setTimeout(cancel, 30);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.strictEqual(calls, 1);
    assert.ok(at >= 120 && at < 240, `done() after ${at.toFixed(0)} ms`);
  });
});
