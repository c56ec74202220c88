'use strict';

// `npm run bench -- --workers 1,2` (run by npm run test:bench): one short run per worker
// count, then the shape of the results file. No thresholds: the figures are the
// benchmark's; forwarding with workers itself is tested in test/api/workers.test.js.
const assert = require('assert');
const { spawnSync } = require('child_process');
const path = require('path');
const { benchDriversLeft, suiteTmpDir, runBench } = require('../test/support/helpers');

const RUN = path.join(__dirname, 'run.js');

// A median, a min and a max in order, the median above 0.
function assertSpread(s, what) {
  assert.ok(s && s.min <= s.median && s.median <= s.max && s.median > 0, `${what}: ${JSON.stringify(s)}`);
}

describe('npm run bench -- --workers', function () {
  this.timeout(90000);
  const tmpDir = suiteTmpDir('ixy-bench-workers-');

  it('forwards with 1 and then 2 workers and writes the totals and each worker\'s ns per packet', async function () {
    const { results: r, stdout } = await runBench(['--workers', '1,2', '--runs', '1', '--seconds', '0.5', '--warmup', '0.5'], tmpDir(), { pattern: /^workers-.*\.json$/, timeoutMs: 80000 });
    assert.strictEqual(r.kind, 'workers');
    assert.deepStrictEqual(r.rows.map((row) => [row.workers, row.perWorker.length, row.runs.length]), [[1, 1, 1], [2, 2, 1]]);
    for (const row of r.rows) {
      assertSpread(row.mpps, `${row.workers} workers: Mpps`);
      assertSpread(row.nsPerPacket, `${row.workers} workers: ns per packet`);
      assertSpread(row.cpuNsPerPacket, `${row.workers} workers: CPU ns per packet`);
      row.perWorker.forEach((w, q) => assertSpread(w.nsPerPacket, `${row.workers} workers: worker ${q} ns per packet`));
      const [run] = row.runs;
      assert.strictEqual(run.rxDropped, 0, 'the unlimited sources offer only what fits');
      // Each worker forwards its queue of both ports: together what the model delivered.
      assert.ok(run.perWorker.reduce((sum, w) => sum + w.packets, 0) > 0);
    }
    assert.match(stdout, /^ {2}1 worker +total .* Mpps .* ns\/pkt {2}CPU .* ns\/pkt\n {4}worker 0 /m);
    assert.match(stdout, /^ {2}2 workers +total .*\n {4}worker 0 .*\n {4}worker 1 .* ns\/pkt\n/m);
    // This bench's drivers (other sessions may be benchmarking beside it).
    assert.deepStrictEqual(benchDriversLeft().filter((l) => l.includes('"mode":"forward-workers"')), [], 'driver processes left behind');
  });

  it('refuses a bad worker count with one line and exit 1', function () {
    const r = spawnSync(process.execPath, [RUN, '--workers', '0,2'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.strictEqual(r.stderr, 'bench: --workers takes worker counts of 1..16, e.g. --workers 1,2\n');
  });
});
