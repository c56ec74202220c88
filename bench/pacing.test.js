'use strict';

// `npm run bench -- --pacing` (run by npm run test:bench): short runs at two rates, then the
// shape of the results file. No thresholds on the gaps: they are the benchmark's figures;
// which pacing a rate gets and what it programs is tested in test/commands/generate-frames.test.js.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { suiteTmpDir, runBench } = require('../test/support/helpers');

const RUN = path.join(__dirname, 'run.js');

describe('npm run bench -- --pacing', function () {
  this.timeout(90000);
  const tmpDir = suiteTmpDir('ixy-pacing-');

  it('sends R x S frames per rate with default flags and gives the gaps on the wire against 1/R', async function () {
    const { results: r, stdout } = await runBench(['--pacing', '--rates', '5k,50k', '--seconds', '0.4'], tmpDir(), { pattern: /^pacing-.*\.json$/, timeoutMs: 80000 });
    assert.deepStrictEqual(r.rows.map((x) => [x.rate, x.pps, x.frames, x.pacing]), [['5k', 5000, 2000, 'software'], ['50k', 50000, 20000, 'the NIC']]);
    for (const x of r.rows) {
      assert.strictEqual(x.idealNs, 1e9 / x.pps);
      assert.ok(x.p50Ns <= x.p99Ns && x.p99Ns <= x.p999Ns && x.p999Ns <= x.maxNs, JSON.stringify(x));
      assert.strictEqual(x.p99x, x.p99Ns / x.idealNs);
      assert.ok(x.cpuShare >= 0 && x.achievedPps > 0);
    }
    assert.match(stdout, /^ {2}5k {5}software: ideal 200\.0 us, p50 /m);
    assert.match(stdout, /^ {2}50k {4}the NIC: ideal 20\.0 us, p50 /m);
  });

  it('refuses a rate that is not one, in one line with exit 1', function () {
    const r = spawnSync(process.execPath, [RUN, '--pacing', '--rates', 'fast'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr, /^bench: 'fast' is not a rate/);
  });
});
