'use strict';

// --json on the commands' reports: every line of stdout is one JSON object (start, rates
// each second, totals, end) that a program can read, and the totals are the device's.
const assert = require('assert');
const path = require('path');
const { modelForSuite, runIxy, suiteTmpDir } = require('../support/helpers');

// stdout as records; fails on any line that is not a JSON object with type and time.
function records(stdout) {
  const lines = stdout.split('\n').filter((l) => l.length > 0);
  return lines.map((l) => {
    let r;
    assert.doesNotThrow(() => { r = JSON.parse(l); }, `not JSON: ${l}`);
    assert.ok(typeof r.type === 'string' && Number.isFinite(r.time), `no type or time: ${l}`);
    return r;
  });
}

describe('--json reports', function () {
  this.timeout(60000);
  const model = modelForSuite(2);
  const tmpDir = suiteTmpDir('ixy-json-');

  it('generate --json: start, a rates line each second, the total and the end', async function () {
    await model().clear(0);
    await model().sink(0);
    const run = await runIxy(['generate', model().addresses[0], '--rate', '20000', '--seconds', '2', '--json']);
    assert.strictEqual(run.code, 0, run.stderr);
    const r = records(run.stdout);
    assert.deepStrictEqual([r[0].type, r.at(-2).type, r.at(-1).type], ['start', 'total', 'end']);
    assert.strictEqual(r[0].command, 'generate');
    assert.strictEqual(r[0].devices[0].address, model().addresses[0]);
    const rates = r.filter((x) => x.type === 'rates');
    assert.ok(rates.length >= 1, 'no rates line in 2 s');
    for (const x of rates) for (const k of ['rxPps', 'rxMbits', 'txPps', 'txMbits', 'rxMissed']) assert.strictEqual(typeof x[k], 'number', k);
    const truth = await model().stats(0);
    assert.strictEqual(r.at(-2).txPackets, truth.txFrames);
    assert.strictEqual(r.at(-1).reason, 'time');
  });

  it('forward --json: a total per port', async function () {
    const run = await runIxy(['forward', model().addresses[0], model().addresses[1], '--seconds', '1', '--json']);
    assert.strictEqual(run.code, 0, run.stderr);
    const r = records(run.stdout);
    assert.strictEqual(r[0].command, 'forward');
    assert.deepStrictEqual(r.filter((x) => x.type === 'total').map((x) => x.device), model().addresses.slice(0, 2));
    assert.ok(r.filter((x) => x.type === 'total').every((x) => Number.isInteger(x.txDropped)));
  });

  it('pcap --json: the records on stdout, the end says what the file holds; to stdout (-) they go to stderr', async function () {
    const file = path.join(tmpDir(), 'capture.pcap');
    try {
      await model().clear(0);
      await model().source(0, { rate: 10000, size: 60 });
      const run = await runIxy(['pcap', model().addresses[0], file, '50', '--json']);
      assert.strictEqual(run.code, 0, run.stderr);
      const r = records(run.stdout);
      assert.deepStrictEqual([r[0].type, r.at(-1).type], ['start', 'end']);
      assert.strictEqual(r.at(-1).frames, 50);
      const piped = await runIxy(['pcap', model().addresses[0], '-', '5', '--json']);
      assert.strictEqual(piped.code, 0, piped.stderr);
      assert.strictEqual(records(piped.stderr).at(-1).frames, 5);
      assert.ok(piped.stdout.length > 24, 'the capture did not go to stdout');
    } finally {
      await model().sourceOff(0);
    }
  });
});
