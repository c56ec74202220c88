'use strict';

// A FIFO as `ixy pcap`'s file or `ixy replay`'s input (issue 46, 6): the command waits for
// the other end before it opens the NIC, and Ctrl-C ends that wait (a blocking open could
// not be interrupted). With the other end there, the frames go through.
const assert = require('assert');
const { execFileSync, spawn } = require('child_process');
const path = require('path');
const { PcapWriter, readPcap } = require('../../lib/pcap-file');
const { runIxy, modelForSuite, suiteTmpDir } = require('../support/helpers');

function mkfifo(file) {
  execFileSync('mkfifo', [file]);
  return file;
}

// `ixy args...`, sent SIGINT after `ms`; resolves with the run. A command that went on
// waiting for the FIFO's other end is killed at timeoutMs (exit code null: the test fails).
function interruptAfter(args, env, ms) {
  return runIxy(args, {
    env,
    timeoutMs: 20000,
    onStart: (child) => setTimeout(() => child.kill('SIGINT'), ms),
  });
}

describe('a FIFO as the capture file or the replayed file', function () {
  this.timeout(60000);
  const model = modelForSuite(1);
  const tmp = suiteTmpDir('ixy-fifo-');

  for (const workers of [[], ['--workers', '2']]) {
    it(`ixy pcap ${workers.map((w) => `${w} `).join('')}to a FIFO nobody reads: Ctrl-C ends it at once, the NIC never opened`, async function () {
      const fifo = mkfifo(path.join(tmp(), `capture${workers.length}.fifo`));
      const run = await interruptAfter(['pcap', model().addresses[0], fifo, ...workers], { IXY_PCI_ROOT: model().dir }, 1000);
      assert.strictEqual(run.code, 0, run.stderr);
      assert.match(run.stderr, /captured 0 frames \(interrupted before a reader opened the FIFO; no file written\)/);
      const s = await model().stats(0);
      assert.strictEqual(s.dmaOwnerPid, 0, 'the NIC was not opened');
      assert.strictEqual(s.busMaster, false);
    });
  }

  it('ixy pcap to a FIFO with a reader: the reader gets the frames', async function () {
    const fifo = mkfifo(path.join(tmp(), 'read.fifo'));
    const out = path.join(tmp(), 'read.pcap');
    const reader = spawn('sh', ['-c', 'sleep 0.5; exec cat "$0" > "$1"', fifo, out], { stdio: 'ignore' });
    try {
      await model().clear(0);
      const run = await runIxy(['pcap', model().addresses[0], fifo, '200'], {
        env: { IXY_PCI_ROOT: model().dir },
        onStart: (child) => child.stderr.once('data', () => model().source(0, { rate: 10000, count: 200 })),
      });
      assert.strictEqual(run.code, 0, run.stderr);
      await new Promise((resolve) => { if (reader.exitCode !== null) resolve(); else reader.once('exit', resolve); });
      assert.strictEqual(readPcap(out).frames.length, 200);
    } finally {
      reader.kill('SIGKILL');
    }
  });

  it('ixy replay from a FIFO nobody writes: Ctrl-C ends it at once, the NIC never opened', async function () {
    const fifo = mkfifo(path.join(tmp(), 'replay.fifo'));
    const run = await interruptAfter(['replay', model().addresses[0], fifo], { IXY_PCI_ROOT: model().dir }, 1000);
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stdout, /total RX 0 packets .*TX 0 packets/);
    assert.strictEqual((await model().stats(0)).dmaOwnerPid, 0, 'the NIC was not opened');
  });

  it('ixy replay from a FIFO with a writer: every frame goes out', async function () {
    const fifo = mkfifo(path.join(tmp(), 'write.fifo'));
    const file = path.join(tmp(), 'frames.pcap');
    const w = new PcapWriter(file, { nanoseconds: false });
    for (let i = 0; i < 50; i++) w.write(Buffer.alloc(60, i), 60, 1700000000, i * 1e6);
    w.close();
    const writer = spawn('sh', ['-c', 'sleep 0.5; exec cat "$0" > "$1"', file, fifo], { stdio: 'ignore' });
    try {
      await model().clear(0);
      const run = await runIxy(['replay', model().addresses[0], fifo, '--fast'], { env: { IXY_PCI_ROOT: model().dir } });
      assert.strictEqual(run.code, 0, run.stderr);
      assert.strictEqual((await model().stats(0)).txFrames, 50);
    } finally {
      writer.kill('SIGKILL');
    }
  });
});
