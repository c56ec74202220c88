'use strict';

// `npm run bench -- --latency` (run by npm run test:bench): one short run per driver at a
// low rate, then the shape of the results file. No thresholds: the figures are the
// benchmark's; the model's truth itself is tested in test/model/latency-truth.test.js.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { suiteTmpDir, runBench } = require('../test/support/helpers');

const RUN = path.join(__dirname, 'run.js');

describe('npm run bench -- --latency', function () {
  this.timeout(60000);
  const tmpDir = suiteTmpDir('ixy-latency-');

  it('forwards at a fixed rate with each driver and writes the histogram of each', async function () {
    const { results: r, stdout } = await runBench(['--latency', '--rates', '0.05', '--seconds', '1', '--warmup', '0.5'], tmpDir(), { pattern: /^latency-.*\.json$/, timeoutMs: 50000 });
    assert.deepStrictEqual(r.results.map((x) => [x.lang, x.mpps]), [['js', 0.05], ['c', 0.05]]);
    for (const x of r.results) {
      const h = x.histogram;
      assert.ok(h.count > 0, `${x.lang}: no frame timed of ${x.offered}`);
      assert.strictEqual(h.unmatched, 0, `${x.lang}: every frame forwarded came from the source`);
      assert.ok(h.minNs <= h.p50Ns && h.p50Ns <= h.p99Ns && h.p99Ns <= h.p999Ns && h.p999Ns <= h.p9999Ns && h.p9999Ns <= h.maxNs);
      assert.strictEqual(h.buckets.reduce((sum, [, , n]) => sum + n, 0), h.count);
      assert.ok(Number.isInteger(x.notForwarded), 'frames received but not sent on');
      assert.ok(x.driverWaitedNs >= 0 && x.driverWaitedNs < 1.5e9, `${x.lang}: the driver's wait for its CPU within the 1 s window, got ${x.driverWaitedNs} ns`);
    }
    assert.strictEqual(typeof r.results[0].gcs, 'number', 'the JS driver counts its GCs');
    assert.strictEqual(r.results[1].gcs, null);
    assert.match(stdout, /\| 0\.05 Mpps \| JavaScript \|/);
    assert.match(stdout, /\| 0\.05 Mpps \| C yardstick \|/);
  });

  it('refuses a bad option with one line and exit 1', function () {
    const r = spawnSync(process.execPath, [RUN, '--latency', '--rates', '20'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr, /^bench: --rates must be Mpps from 0 to 14\.88 \(the line\)\n$/);
  });
});
