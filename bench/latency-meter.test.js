'use strict';

// `npm run bench -- --latency-meter` (run by npm run test:bench): ixy latency over a bare
// cable, then through each forwarder at one low rate, with the model's truth of the same
// probes. No thresholds on the figures (test/commands/latency-forward.test.js holds the meter to the
// truth); here the shape of the results.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { suiteTmpDir, runBench } = require('../test/support/helpers');

const RUN = path.join(__dirname, 'run.js');

describe('npm run bench -- --latency-meter', function () {
  this.timeout(90000);
  const tmpDir = suiteTmpDir('ixy-latency-meter-');

  it('measures the bare cable, then each forwarder with the model timing the same probes', async function () {
    const { results: r, stdout } = await runBench(['--latency-meter', '--rates', '0.05', '--seconds', '1'], tmpDir(), { pattern: /^latency-meter-.*\.json$/, timeoutMs: 80000 });
    assert.ok(r.cable.count > 0 && r.cable.p50Ns > 0, 'ixy latency over a cable reads more than 0');
    assert.ok(Math.abs(r.cable.p50Ns - r.cable.cableNs) <= 13, 'over a bare cable: the two ports\' latency, within two SYSTIM ticks');
    assert.deepStrictEqual(r.results.map((x) => [x.lang, x.mpps]), [['js', 0.05], ['c', 0.05]]);
    for (const x of r.results) {
      assert.ok(x.meter.count > 0 && x.truth.count >= x.meter.count, `${x.lang}: ${x.meter.count} probes, the model timed ${x.truth.count}`);
      assert.ok(x.meter.p50 * 1000 > x.cablesNs, `${x.lang}: the meter reads more than the cables alone`);
    }
    assert.match(stdout, /\| 0\.05 Mpps \| ixy forward \|/);
    assert.match(stdout, /\| 0\.05 Mpps \| C yardstick \|/);
  });

  it('refuses a bad option with one line and exit 1', function () {
    const r = spawnSync(process.execPath, [RUN, '--latency-meter', '--rates', '20'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr, /^bench: --rates must be Mpps above 0, at most 5\n$/);
  });
});
