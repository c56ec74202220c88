'use strict';

// The recipes of docs/recipes.md, each a file in examples/, run against the device model:
// what each prints and writes is checked against what the model offered and counted.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const ixy = require('../../lib');

const { packet } = ixy;
const EXAMPLES = path.join(__dirname, '..', '..', 'examples');

// Writes a pcap file of UDP frames: for each [srcPort, dstPort, n], n frames, interleaved.
function udpPcap(file, flows) {
  const writer = new ixy.PcapWriter(file);
  const b = new Uint8Array(60);
  const left = flows.map((f) => f[2]);
  let seq = 0;
  while (left.some((n) => n > 0)) {
    flows.forEach(([srcPort, dstPort], k) => {
      if (left[k] === 0) return;
      left[k]--;
      packet.writeUdpFrame(b, { size: 60, srcPort, dstPort });
      packet.writeSeq(b, seq++);
      writer.write(b, 60, 0, 0);
    });
  }
  writer.close();
}

describe('recipes (examples/ on the device model)', function () {
  this.timeout(60000);
  let model;
  let tmp;

  before(async function () {
    model = await ixy.Model.start({ ports: 2 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-recipes-'));
  });

  after(async function () {
    if (model) await model.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(async function () {
    for (const p of [0, 1]) {
      await model.sourceOff(p);
      await model.command(`pcap-in ${p} off`);
      await model.clear(p);
    }
  });

  // Runs examples/name with args; once it printed its ready line ("Ctrl-C stops"), calls
  // whenReady(). Resolves with { code, stdout, stderr } when it exits.
  function runExample(name, args, whenReady = async () => {}) {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(EXAMPLES, name), ...args], {
        env: { ...process.env, IXY_PCI_ROOT: model.dir }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let ready = false;
      const timer = setTimeout(() => child.kill('SIGKILL'), 45000);
      child.stdout.on('data', (d) => {
        stdout += d;
        if (!ready && stdout.includes('Ctrl-C stops')) {
          ready = true;
          whenReady(child).catch(reject);
        }
      });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  it('filter-forward.js forwards what its filter expression accepts, both ways', async function () {
    const file = path.join(tmp, 'mixed.pcap');
    udpPcap(file, [[1000, 53, 100], [1001, 5000, 50]]);
    await model.sink(1);
    const run = await runExample('filter-forward.js', [model.addresses[0], model.addresses[1], '--filter', 'not (udp and dst port 5000)', '--seconds', '2'],
      () => model.pcapIn(0, file, { rate: 20000 }));
    assert.strictEqual(run.code, 0, run.stderr);
    const sink = await model.stats(1);
    assert.strictEqual(sink.sinkFrames, 100);
    assert.match(run.stdout, /received 150, dropped by the filter 50, sent 100\n/);
  });

  it('generator.js sends --count frames in order at no more than --rate', async function () {
    await model.sink(0, { check: true });
    const run = await runExample('generator.js', [model.addresses[0], '--rate', '20000', '--count', '5000']);
    assert.strictEqual(run.code, 0, run.stderr);
    const m = await model.waitFor(0, (s) => s.sinkFrames === 5000, 5000);
    assert.strictEqual(m.sinkSeqErrors, 0);
    assert.strictEqual(m.sinkBadFrames, 0);
    const [, sent, seconds] = /stopped \(done\): sent (\d+) frames in ([\d.]+) s/.exec(run.stdout);
    assert.strictEqual(Number(sent), 5000);
    // Paced by construction: it never sends more than the clock allows.
    assert.ok(Number(seconds) >= 5000 / 20000 - 0.01, `5000 frames at 20000/s took ${seconds} s`);
  });

  it('capture.js writes the frames of one port, in order, with their timestamps', async function () {
    const input = path.join(tmp, 'in.pcap');
    const output = path.join(tmp, 'out.pcap');
    udpPcap(input, [[1000, 53, 100], [1001, 5000, 100]]);
    const before = Date.now() / 1000;
    const run = await runExample('capture.js', [model.addresses[0], output, '--port', '53', '--count', '100'],
      () => model.pcapIn(0, input, { rate: 20000 }));
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stdout, /captured 100 frames/);
    const { frames } = ixy.readPcap(output);
    assert.strictEqual(frames.length, 100);
    const info = new packet.FrameInfo();
    const seqs = frames.map((f) => {
      assert.strictEqual(packet.parseFrame(f.data, f.data.length, info), packet.IPPROTO_UDP);
      assert.strictEqual(info.dstPort, 53);
      return packet.readSeq(f.data);
    });
    assert.deepStrictEqual(seqs, Array.from({ length: 100 }, (_, i) => 2 * i));
    assert.ok(frames[0].sec >= Math.floor(before) && frames[0].sec <= Date.now() / 1000);
  });

  it('top-talkers.js ranks flows by frames', async function () {
    const file = path.join(tmp, 'weighted.pcap');
    udpPcap(file, [[1000, 53, 64], [1001, 53, 32], [1002, 80, 16], [1003, 443, 8], [1004, 22, 4]]);
    const run = await runExample('top-talkers.js', [model.addresses[0], '--top', '3', '--seconds', '2'],
      () => model.pcapIn(0, file, { rate: 20000 }));
    assert.strictEqual(run.code, 0, run.stderr);
    const final = run.stdout.slice(run.stdout.lastIndexOf('top 3 flows ('));
    assert.match(final, /^top 3 flows \(5 flows, 0 frames not IPv4\):\n/);
    const rows = [...final.matchAll(/:(\d+) -> [\d.]+:(\d+) udp frames (\d+) bytes (\d+)/g)].map((m) => m.slice(1).map(Number));
    assert.deepStrictEqual(rows, [[1000, 53, 64, 64 * 60], [1001, 53, 32, 32 * 60], [1002, 80, 16, 16 * 60]]);
  });

  it('top-talkers.js on the model\'s own weighted, mixed TCP/UDP flows (no pcap file)', async function () {
    const N = 4000;
    // rate 0: frames are offered as descriptors free up, so none is skipped or dropped
    // however busy the host (a rate-limited source skips the time the model was away).
    const start = () => model.source(0, { rate: 0, size: 60, count: N, flows: 8, zipf: 1.2, proto: 'mixed', vary: ['sport'] });
    const run = await runExample('top-talkers.js', [model.addresses[0], '--top', '8', '--seconds', '2'], start);
    assert.strictEqual(run.code, 0, run.stderr);
    const final = run.stdout.slice(run.stdout.lastIndexOf('top 8 flows ('));
    const rows = [...final.matchAll(/:(\d+) -> [\d.]+:5000 (udp|tcp) frames (\d+)/g)].map((m) => [Number(m[1]), m[2], Number(m[3])]);
    assert.strictEqual(rows.reduce((n, r) => n + r[2], 0), N, final);
    // Zipf: flow f drawn with weight 1/(f+1)^1.2, so flows 0, 1, 2 lead in that order;
    // mixed: odd flows are TCP.
    assert.deepStrictEqual(rows.slice(0, 3).map((r) => r[0]), [1024, 1025, 1026], final);
    for (const [sport, proto] of rows) assert.strictEqual(proto, (sport - 1024) % 2 === 1 ? 'tcp' : 'udp');
  });
});
