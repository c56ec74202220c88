'use strict';

// Smoke test of `npm run bench` (bench/): one very short run end to end, then the figures a
// reader of the results needs. The bench's own detailed tests are bench/*.test.js (npm run
// test:bench). No timing thresholds: a busy machine is slow, not broken.
const assert = require('assert');
const { benchDriversLeft, suiteTmpDir, runBench } = require('../test/support/helpers');
const { plotSvg } = require('./plot');

// A median, a min and a max in order, the median above 0.
function assertSpread(s, what) {
  assert.ok(s && s.min <= s.median && s.median <= s.max && s.median > 0, `${what}: ${JSON.stringify(s)}`);
}

describe('npm run bench (smoke test)', function () {
  this.timeout(120000);
  const tmpDir = suiteTmpDir('ixy-bench-');

  it('runs both drivers at batch 32 and writes the JS/C ratios, ns per packet and the host phase of each', async function () {
    const { results: r, stdout } = await runBench(['--quick', '--batches', '32', '--runs', '1', '--rounds', '1', '--seconds', '0.3', '--warmup', '0.2',
      '--window', '50'], tmpDir());
    assert.ok(!Number.isNaN(Date.parse(r.date)), `date ${r.date}`);
    assert.ok(r.machine.cpu && r.machine.nproc >= 1 && r.machine.node === process.version, JSON.stringify(r.machine));
    assert.strictEqual(r.options.ringSize, 512);
    const row = r.forward[0];
    assert.strictEqual(row.batch, 32);
    for (const lang of ['js', 'c']) {
      assertSpread(row[lang].mpps, `forward ${lang} Mpps`);
      assertSpread(row[lang].nsPerPacket, `forward ${lang} ns per packet`);
    }
    // The stable figure: JS/C with both drivers on one model, and the host's phase
    // around the window pair (sharing a cache, apart, or changed during it).
    const sbs = row.sideBySide;
    assertSpread(sbs.ratios, 'side-by-side JS/C');
    assert.strictEqual(sbs.ratio, sbs.ratios.median);
    assert.strictEqual(sbs.phases.near.count + sbs.phases.far.count + sbs.phases.mixed, 1, JSON.stringify(sbs.phases));
    assertSpread(r.generate.sideBySide.ratios, 'generate side-by-side JS/C');
    for (const lang of ['js', 'c']) assertSpread(r.standIn[0][lang].nsPerPacket, `own cost ${lang} ns per packet`);
    assertSpread(r.ceiling[0].c.mpps, 'model ceiling');
    assert.match(stdout, /JavaScript \/ C, side by side/);
    // The plot of README: for the one batch size a point of the side-by-side ratio, of
    // the own cost, and of the phase the window pair was in (none if it changed during
    // the pair); a circle each, and one each in the legend.
    const svg = plotSvg(r);
    assert.match(svg, /^<svg [^]*JavaScript \/ C[^]*<\/svg>\n$/);
    const series = 2 + sbs.phases.near.count + sbs.phases.far.count;
    assert.strictEqual((svg.match(/<circle /g) || []).length, 2 * series, svg);
    // Every driver process ended, stopped ones (SIGSTOP between windows) included.
    assert.deepStrictEqual(benchDriversLeft(), [], 'driver processes left behind');
  });
});
