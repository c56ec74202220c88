'use strict';

// `npm run bench -- --loss` (run by npm run test:bench): one short run per driver at a low
// rate, then the shape of the results file. No thresholds: whether frames were lost at
// this rate is test/commands/forward.test.js's question, asked without timing.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { suiteTmpDir, runBench } = require('../test/support/helpers');

const RUN = path.join(__dirname, 'run.js');

describe('npm run bench -- --loss', function () {
  this.timeout(60000);
  const tmpDir = suiteTmpDir('ixy-loss-');

  it('runs both drivers at a fixed rate after an idle start and writes drops per interval', async function () {
    const { results: r, stdout } = await runBench(['--loss', '--rates', '0.05', '--runs', '1', '--idle', '0.2', '--seconds', '1', '--interval', '250'], tmpDir(), { pattern: /^loss-.*\.json$/, timeoutMs: 50000 });
    assert.strictEqual(r.rates.length, 1);
    const row = r.rates[0];
    assert.strictEqual(row.mpps, 0.05);
    for (const lang of ['js', 'c']) {
      assert.strictEqual(row.runs[lang].length, 1, `${lang} runs`);
      const run = row.runs[lang][0];
      assert.strictEqual(run.drops.length, 4, `${lang}: four intervals of 250 ms in 1 s`);
      assert.strictEqual(run.dropsFirstSecond, run.drops.reduce((a, b) => a + b, 0));
      assert.strictEqual(run.dropsAfter, 0, 'a run of 1 s has no "after the first second"');
      // 50 kpps for 1 s, less what the model skipped while it was descheduled
      assert.ok(run.offered > 0 && run.offered <= 50000 + 100, `${lang} offered ${run.offered}`);
      assert.ok(run.delivered + run.dropsFirstSecond <= run.offered, `${lang}: ${JSON.stringify(run)}`);
      assert.strictEqual(row[lang].offered, run.offered);
    }
    assert.match(stdout, /rate Mpps \| driver \| drops in 1st s/);
    assert.match(stdout, /^ +0\.05 \| js /m);
    assert.match(stdout, /^ +0\.05 \| c /m);
  });

  it('refuses a bad option with one line and exit 1', function () {
    const r = spawnSync(process.execPath, [RUN, '--loss', '--rates', 'fast'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.strictEqual(r.stderr, "bench: bad rate 'fast': Mpps above 0 (at most 100), or half\n");
  });
});
