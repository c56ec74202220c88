'use strict';

// `ixy pcap --workers N` (lib/apps/pcap-workers.js) on the device model: RSS spreads the
// source's flows over N RX queues, each captured in its own worker into one file. The file
// is checked against the model's truth and the test's own Toeplitz (test/support/rss.js):
// every frame the model delivered is there once, each flow in order, each queue's
// timestamps never go back.
const assert = require('assert');
const { execFile, spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { readPcap } = require('../../lib/pcap-file');
const { pcapWorkers } = require('../../lib/apps/pcap-workers');
const { IXY, modelForSuite, runIxy, suiteTmpDir, tsharkFields } = require('../support/helpers');
const { MS_KEY, hashOf, sourceFlow, frameTuple } = require('../support/rss');

const FLOWS = 64;
const VARY = ['sip', 'sport', 'dport'];
const seqOf = (b) => b.readUInt32BE(42);

// The file's frames, each with its tuple, sequence number, time (ns) and the RX queue
// RSS gave it among `queues` (the test's own Toeplitz); checks that each frame is the
// source frame its sequence number says (flow seq % FLOWS) and that no frame is there twice.
function framesOf(file, queues) {
  const frames = readPcap(file, { maxFrames: 1 << 22 }).frames.map((f) => {
    const t = frameTuple(f.data);
    const hash = hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport);
    return { ...t, seq: seqOf(f.data), ns: f.sec * 1e9 + f.nsec, queue: (hash & 127) % queues };
  });
  const seen = new Set();
  for (const f of frames) {
    assert.ok(!seen.has(f.seq), `frame ${f.seq} is in the file twice`);
    seen.add(f.seq);
    const want = sourceFlow(f.seq % FLOWS, { vary: VARY });
    assert.deepStrictEqual([f.src, f.dst, f.sport, f.dport], [want.src, want.dst, want.sport, want.dport], `frame ${f.seq} is flow ${f.seq % FLOWS}'s`);
  }
  return frames;
}

// Each flow's frames in order; within each queue, timestamps that never go back.
function assertOrder(frames) {
  const lastSeq = new Map();
  const lastNs = new Map();
  for (const f of frames) {
    const flow = `${f.src}:${f.sport}>${f.dst}:${f.dport}`;
    assert.ok(!lastSeq.has(flow) || lastSeq.get(flow) < f.seq, `flow ${flow} out of order at ${f.seq}`);
    lastSeq.set(flow, f.seq);
    assert.ok(!lastNs.has(f.queue) || lastNs.get(f.queue) <= f.ns, `queue ${f.queue}: frame ${f.seq} stamped before the one before it`);
    lastNs.set(f.queue, f.ns);
  }
}

describe('ixy pcap --workers', function () {
  this.timeout(60000);
  const model = modelForSuite(1);
  const tmpDir = suiteTmpDir('ixy-pcap-workers-');
  afterEach(async () => {
    await model().sourceOff(0);
    await model().clear(0);
  });

  // Sends `count` frames of FLOWS flows once `started` (the start line: every worker's
  // queue is up) resolves.
  async function sendWhenReady(started, count, proto = 'mixed') {
    await started;
    await model().source(0, { count, flows: FLOWS, proto, vary: VARY });
  }

  // Resolves once the command's stderr has said `text`.
  function said(child, text) {
    return new Promise((resolve) => {
      let seen = '';
      child.stderr.on('data', (d) => {
        seen += d;
        if (seen.includes(text)) resolve();
      });
    });
  }

  // SIGHUP ends it as SIGINT does, with every file flushed whole (issue 46, 5).
  for (const signal of ['SIGINT', 'SIGHUP']) {
    it(`2 workers, stopped by ${signal}: every frame the model delivered is in the file once, each flow in order, with the totals`, async () => {
      const file = path.join(tmpDir(), `${signal}.pcap`);
      const count = 30000;
      const run = await runIxy(['pcap', model().addresses[0], file, '--workers', '2'], {
        env: { IXY_PCI_ROOT: model().dir },
        onStart: async (child) => {
          await sendWhenReady(said(child, 'capturing on'), count);
          await model().waitFor(0, (s) => s.rxDelivered === count, 20000);
          child.kill(signal);
        },
      });
      assert.strictEqual(run.code, 0, run.stderr);
      const s = await model().waitFor(0, (x) => !x.busMaster);
      assert.strictEqual(s.dmaAfterRelease, 0);
      const frames = framesOf(file, 2);
      assert.strictEqual(frames.length, count, 'every frame delivered is in the file');
      assertOrder(frames);
      const perQueue = [0, 1].map((q) => frames.filter((f) => f.queue === q).length);
      assert.deepStrictEqual(perQueue, s.rxQueues.slice(0, 2), "the model's truth per queue");
      assert.ok(perQueue.every((n) => n > 0), `both queues had flows: ${perQueue}`);
      assert.match(run.stderr, new RegExp(`total RX ${count} packets .*, per worker RX ${perQueue[0]} \\+ ${perQueue[1]}\\n`));
      assert.match(run.stderr, new RegExp(`captured ${count} frames \\(${fs.statSync(file).size} bytes\\) to .* \\(interrupted\\)\\n$`));
      assert.strictEqual(tsharkFields(file, ['frame.number']).length, count, 'tshark reads the whole file');
    });
  }

  it('n and a filter: exactly n frames, all matching, over all workers, and then it stops by itself', async () => {
    const file = path.join(tmpDir(), 'count.pcap');
    const n = 3000;
    const run = await runIxy(['pcap', model().addresses[0], file, String(n), 'tcp', '--workers', '2'], {
      env: { IXY_PCI_ROOT: model().dir },
      onStart: (child) => sendWhenReady(said(child, 'capturing on'), 20000),
    });
    assert.strictEqual(run.code, 0, run.stderr);
    const frames = framesOf(file, 2);
    assert.strictEqual(frames.length, n);
    assert.ok(frames.every((f) => f.proto === 6), 'TCP only (odd flows)');
    assert.ok([0, 1].every((q) => frames.some((f) => f.queue === q)), 'both workers wrote frames');
    assertOrder(frames);
    assert.match(run.stderr, new RegExp(`captured ${n} frames`));
    assert.doesNotMatch(run.stderr, /interrupted/);
    assert.strictEqual(tsharkFields(file, ['frame.number']).length, n);
  });

  it('--seconds ends it by itself, with every frame it says it captured in the file', async () => {
    await model().source(0, { rate: 50000, flows: FLOWS, vary: VARY });
    const file = path.join(tmpDir(), 'seconds.pcap');
    const run = await runIxy(['pcap', model().addresses[0], file, '--workers', '2', '--seconds', '1'], { env: { IXY_PCI_ROOT: model().dir } });
    assert.strictEqual(run.code, 0, run.stderr);
    const captured = Number(/captured (\d+) frames/.exec(run.stderr)[1]);
    assert.ok(captured > 0, run.stderr);
    assert.doesNotMatch(run.stderr, /interrupted/);
    const frames = framesOf(file, 2);
    assert.strictEqual(frames.length, captured);
    assertOrder(frames);
  });

  it('to a pipe (stdout): every batch goes out whole, and tshark reads the n frames as they come', async () => {
    await model().source(0, { rate: 100000, flows: FLOWS, vary: VARY });
    const out = await new Promise((resolve, reject) => {
      execFile('bash', ['-o', 'pipefail', '-c', `"${process.execPath}" "${IXY}" pcap ${model().addresses[0]} - 3000 --workers 2 | tshark -r - -T fields -e udp.dstport`],
        { env: { ...process.env, IXY_PCI_ROOT: model().dir }, maxBuffer: 1 << 24 }, (e, stdout, stderr) => (e ? reject(new Error(stderr)) : resolve({ stdout, stderr })));
    });
    const ports = out.stdout.split('\n').filter((l) => l !== '').map(Number);
    assert.strictEqual(ports.length, 3000, out.stderr);
    assert.ok(ports.every((p) => p >= 5000 && p < 5000 + FLOWS), 'UDP to the source\'s ports');
    assert.match(out.stderr, /captured 3000 frames \(\d+ bytes\) to stdout\n/);
  });

  it('the library call gives every buffer back, and its per-worker counts add up', async () => {
    const file = path.join(tmpDir(), 'lib.pcap');
    let started;
    const err = { write: (line) => { if (line.startsWith('capturing on')) started(); return true; }, isTTY: false };
    const [r] = await Promise.all([
      pcapWorkers(model().addresses[0], file, { workers: 2, count: 5000, err, filter: 'udp' }),
      sendWhenReady(new Promise((resolve) => { started = resolve; }), 20000),
    ]);
    assert.strictEqual(r.reason, 'count');
    assert.strictEqual(r.frames, 5000);
    assert.strictEqual(r.perWorker.reduce((a, b) => a + b, 0), 5000);
    assert.deepStrictEqual(r.buffersInUse, [0, 0]);
    assert.strictEqual(r.bytes, fs.statSync(file).size);
    assert.ok(framesOf(file, 2).every((f) => f.proto === 17));
  });

  it('a worker whose write fails (a full file system) stops the capture with its error, the NIC stopped', async function () {
    // A 64 KiB tmpfs, in a mount namespace of the command's own: gone with it.
    const dir = path.join(tmpDir(), 'small');
    fs.mkdirSync(dir);
    const file = path.join(dir, 'full.pcap');
    const script = `mount -t tmpfs -o size=64k ixy-test "${dir}" && "${process.execPath}" "${IXY}" pcap ${model().addresses[0]} "${file}" --workers 2; ` +
      `code=$?; "${process.execPath}" -e "console.log('frames', require('${path.join(__dirname, '..', '..', 'lib', 'pcap-file')}').readPcap('${file}').frames.length)"; exit $code`;
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { env: { ...process.env, IXY_PCI_ROOT: model().dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const timer = setTimeout(() => child.kill('SIGINT'), 30000); // a capture that never fails
    await sendWhenReady(Promise.race([said(child, 'capturing on'), exited]), 40000, 'udp');
    const code = await exited;
    clearTimeout(timer);
    assert.strictEqual(code, 1, stderr);
    assert.match(stderr, /\nixy: cannot write to '.*full\.pcap' \(ENOSPC\): it holds the first (\d+) frames, ending on a whole record\n$/, 'the last line');
    assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
    const held = Number(/holds the first (\d+) frames/.exec(stderr)[1]);
    assert.ok(/frames (\d+)/.test(stdout), stdout);
    assert.ok(Number(/frames (\d+)/.exec(stdout)[1]) >= held, `the file reads whole (${stdout.trim()}), at least the frames the message names`);
    const s = await model().waitFor(0, (x) => !x.busMaster);
    assert.strictEqual(s.dmaAfterRelease, 0);
  });

  it('the library call refuses a bad batch size, filter or worker count before it opens the port or makes a file', async () => {
    const file = path.join(tmpDir(), 'refused.pcap');
    await assert.rejects(pcapWorkers(model().addresses[0], file, { workers: 2, batchSize: 5000 }), { name: 'IxyError', code: 'EBATCH' });
    await assert.rejects(pcapWorkers(model().addresses[0], file, { workers: 2, filter: 'udp and' }), { name: 'IxyError', code: 'EFILTER' });
    await assert.rejects(pcapWorkers(model().addresses[0], file, { workers: 17 }), { name: 'IxyError', code: 'EINVAL' });
    assert.ok(!fs.existsSync(file), 'no file');
  });

  it('a bad --workers, --workers with --json or --idle interrupt: one line and exit 1, no file', async () => {
    for (const [args, message] of [
      [['--workers', '0'], /^ixy: option '-w, --workers <n>' argument '0' is invalid\. --workers must be 1\.\.16\n$/],
      [['--workers', 'two'], /--workers must be a whole number\n$/],
      [['--workers', '2', '--json'], /^ixy: --json does not go with --workers yet/],
      [['--workers', '2', '--idle', 'interrupt'], /^ixy: idle 'interrupt' is not offered with workers .* use 'backoff', their default, or 'spin'\n$/],
    ]) {
      const file = path.join(tmpDir(), 'bad.pcap');
      const run = await runIxy(['pcap', model().addresses[0], file, ...args], { env: { IXY_PCI_ROOT: model().dir } });
      assert.strictEqual(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.strictEqual(run.stderr.split('\n').length, 2, 'one line');
      assert.ok(!fs.existsSync(file), 'no file');
    }
  });
});
