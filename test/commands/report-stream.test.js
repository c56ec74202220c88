'use strict';

// A report stream that fails (issue 46, 4): the reader of `ixy forward | head` goes away,
// `--json | jq` exits, `> /dev/full`, or ixy.run()'s `out` throws. The command ends with its
// totals on stderr and one line that says why, exit 1; ixy.run() rejects with the error.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const ixy = require('../../lib');
const { PcapWriter } = require('../../lib/pcap-file');
const { IXY, modelForSuite, suiteTmpDir } = require('../support/helpers');

// `ixy args...` whose stdout the test closes after the first line (the reader of a pipe
// that exits), or sends to `stdoutFd`. Resolves with { code, signal, stderr, first }.
function runWithFailingReader(args, env, { stdoutFd = null } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [IXY, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', stdoutFd === null ? 'pipe' : stdoutFd, 'pipe'] });
    let stderr = '';
    let first = '';
    child.stderr.on('data', (d) => { stderr += d; });
    if (stdoutFd === null) {
      child.stdout.once('data', (d) => {
        first = String(d);
        child.stdout.destroy(); // the reader goes away: the next write gets EPIPE
      });
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr, first });
    });
  });
}

// stderr: one totals line per port, then the error line, and nothing else.
function assertEndsWithTotals(run, addresses, why) {
  assert.strictEqual(run.signal, null, run.stderr);
  assert.strictEqual(run.code, 1, run.stderr);
  assert.doesNotMatch(run.stderr, /Unhandled|\n\s+at /, 'no stack');
  const lines = run.stderr.trim().split('\n');
  assert.strictEqual(lines.length, addresses.length + 1, run.stderr);
  addresses.forEach((a, i) => assert.ok(lines[i].startsWith(`[${a}] total RX `), run.stderr));
  assert.match(lines[addresses.length], why);
}

describe('a report stream that fails', function () {
  this.timeout(60000);
  const model = modelForSuite(2);
  const tmp = suiteTmpDir('ixy-report-');

  it('ixy forward | a reader that exits: totals on stderr, one line, exit 1', async function () {
    const run = await runWithFailingReader(['forward', ...model().addresses], { IXY_PCI_ROOT: model().dir });
    assert.match(run.first, /^forwarding /);
    assertEndsWithTotals(run, model().addresses, /^ixy: cannot write the report: write EPIPE \(its reader went away\)$/);
  });

  it('ixy generate --json > /dev/full: totals on stderr, ENOSPC, exit 1', async function () {
    const full = fs.openSync('/dev/full', 'w');
    try {
      const run = await runWithFailingReader(['generate', model().addresses[0], '--json', '--rate', '1000'], { IXY_PCI_ROOT: model().dir }, { stdoutFd: full });
      assertEndsWithTotals(run, [model().addresses[0]], /^ixy: cannot write the report: ENOSPC: no space left on device/);
    } finally {
      fs.closeSync(full);
    }
  });

  it('ixy replay --loop 0 --json | jq that exits: totals on stderr, one line, exit 1', async function () {
    const file = path.join(tmp(), 'frames.pcap');
    const w = new PcapWriter(file, { nanoseconds: false });
    for (let i = 0; i < 10; i++) w.write(Buffer.alloc(60, i), 60, 1700000000, i * 1e7);
    w.close();
    const run = await runWithFailingReader(['replay', model().addresses[0], file, '--loop', '0', '--json'], { IXY_PCI_ROOT: model().dir });
    assert.match(run.first, /^\{"type":"start"/);
    assertEndsWithTotals(run, [model().addresses[0]], /^ixy: cannot write the report: write EPIPE/);
  });

  it('ixy.run({ report: true, out }) whose out.write throws rejects with EREPORT, and ends the loop', async function () {
    const a = await ixy.open(model().addresses[0]);
    try {
      let writes = 0;
      const out = { write() { writes++; throw new Error('the log is gone'); } };
      const t0 = performance.now();
      await assert.rejects(ixy.run(() => false, { devices: [a], report: true, out, seconds: 20 }),
        { name: 'IxyError', code: 'EREPORT', message: 'cannot write the report: the log is gone' });
      assert.ok(performance.now() - t0 < 5000, 'ended by the failure, not by seconds');
      assert.strictEqual(writes, 1, 'nothing more written to a stream that failed');
    } finally {
      a.close();
    }
  });
});
