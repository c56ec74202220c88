'use strict';
// The model as a wire (native/model/wire.c, README "The wire"): frames leave at 10 Gb/s pace
// with wire timestamps in nanoseconds, the per-queue TX rate limiter (82599 7.7.2.x,
// RTTDQSEL/RTTBCNRC) spaces a queue's frames. Tolerances are facts of the model's clock:
// pcap nanoseconds are the wire clock rounded down, so a gap is within 1 ns of its value.

const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { readPcap } = require('../../lib/pcap-file');
const { tsharkFields } = require('../support/helpers');
const d = require('../support/model-driver');

const RTTDQSEL = 0x04904;
const RTTBCNRC = 0x04984;
const RS_ENA = 0x80000000;

// Wire time of a frame of `size` bytes (without FCS) at 10 Gb/s: frame, FCS, preamble and
// SFD, inter-frame gap, 0.8 ns per byte.
const wireNs = (size) => (size + 4 + 8 + 12) * 0.8;
// RTTBCNRC rate factor for `mbps` (RF_INT.RF_DEC, 14 fraction bits): 10 Gb/s / rate.
const rateFactor = (mbps) => Math.round((10000 / mbps) * 16384);
// Nanosecond timestamps of a capture (BigInt: epoch nanoseconds do not fit a double).
const stamps = (file) => readPcap(file).frames.map((f) => BigInt(f.sec) * 1000000000n + BigInt(f.nsec));
const gaps = (ts) => ts.slice(1).map((t, i) => Number(t - ts[i]));

describe('the wire (device model)', function () {
  this.timeout(20000);
  let model, dev, mem, dir;
  beforeEach(async () => {
    ({ model, dev, mem } = await d.startPort(0));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-wire-'));
    await d.readyTx(dev, mem);
  });
  afterEach(async () => {
    await d.stopPort({ model, mem });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Frames of the given sizes in descriptors from `first` on; TDT moves once, to after them.
  async function send(sizes, first = 0) {
    sizes.forEach((size, k) => {
      d.buildFrame(mem.bytes.subarray(d.txBuf(first + k)), { size, seq: first + k });
      d.txDesc(mem, first + k, size);
    });
    const before = (await model.stats(0)).txFrames;
    dev.write(d.R.TDT, first + sizes.length);
    await model.waitFor(0, (s) => s.txFrames === before + sizes.length, 5000);
  }

  async function capture(fn) {
    const file = path.join(dir, `c${fs.readdirSync(dir).length}.pcap`);
    await model.pcapOut(0, file, { nanoseconds: true });
    await fn();
    await model.pcapOut(0, null);
    return file;
  }

  it('sends a batch at 10 Gb/s: each gap of the wire timestamps is the frame\'s wire time within 1 ns', async () => {
    const sizes = [...Array(64).fill(60), ...Array(32).fill(200), ...Array(8).fill(1514), 60];
    const file = await capture(() => send(sizes));
    assert.strictEqual(readPcap(file).header.nanoseconds, true);
    const g = gaps(stamps(file));
    assert.strictEqual(g.length, sizes.length - 1);
    g.forEach((gap, k) => assert.ok(Math.abs(gap - wireNs(sizes[k])) < 1, `gap ${k}: ${gap} ns, wire time ${wireNs(sizes[k])} ns`));
    assert.strictEqual(wireNs(60), 67.2);
  });

  it('writes the nanosecond pcap format that tcpdump and tshark read to the nanosecond', async () => {
    const file = await capture(() => send(Array(5).fill(60)));
    const ours = stamps(file).map((t) => `${t / 1000000000n}.${String(t % 1000000000n).padStart(9, '0')}`);
    const dump = execFileSync('tcpdump', ['-r', file, '-n', '-tt', '--time-stamp-precision=nano'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.deepStrictEqual(dump.trim().split('\n').map((l) => l.split(' ')[0]), ours);
    assert.deepStrictEqual(tsharkFields(file, ['frame.time_epoch']).map((f) => f[0]), ours);
  });

  it('does not append nanoseconds to a microsecond capture, and says so', async () => {
    const file = path.join(dir, 'us.pcap');
    await model.pcapOut(0, file);
    await send([60]);
    await model.pcapOut(0, null);
    await assert.rejects(model.pcapOut(0, file, { nanoseconds: true }), /holds the other timestamp precision/);
    await assert.rejects(model.command('pcap-out 0 x.pcap ts=ps'), /usage: pcap-out PORT FILE\|off \[ts=us\|ns\]/);
    assert.strictEqual(readPcap(file).header.nanoseconds, false);
  });

  it('wire PORT unlimited: the frames of a batch take no wire time', async () => {
    await model.wire(0, 'unlimited');
    assert.strictEqual((await model.stats(0)).wire, 'unlimited');
    const file = await capture(() => send(Array(16).fill(60)));
    assert.deepStrictEqual(new Set(gaps(stamps(file))), new Set([0]));
    await assert.rejects(model.wire(0, 'fast'), /usage: wire PORT paced\|unlimited/);
  });

  it('the TX rate limiter (RTTDQSEL, RTTBCNRC.RS_ENA, RF_INT.RF_DEC) spaces the queue\'s frames', async () => {
    // 1 Mpps of 60-byte frames: (60 + 4) * 8 bit * 1e6 = 512 Mb/s, rate factor 19.53125
    dev.write(RTTDQSEL, 0);
    dev.write(RTTBCNRC, (RS_ENA | rateFactor(512)) >>> 0);
    assert.strictEqual(rateFactor(512), (19 << 14) | 8704);
    await model.waitFor(0, (s) => s.txRateLimited === 1);
    let file = await capture(() => send(Array(20).fill(60)));
    for (const gap of gaps(stamps(file))) assert.ok(Math.abs(gap - 1000) < 1, `gap ${gap} ns, want 1000`);

    // RS_ENA clear: back to the line's pace
    dev.write(RTTBCNRC, rateFactor(512));
    await model.waitFor(0, (s) => s.txRateLimited === 0);
    file = await capture(() => send(Array(10).fill(60), 20));
    for (const gap of gaps(stamps(file))) assert.ok(Math.abs(gap - 67.2) < 1, `gap ${gap} ns, want 67.2`);

    // 50 kpps: 20 us apart, longer than the TX packet buffer holds (the model fetches the
    // frames as the limiter lets them go, not all at once): never closer than that.
    dev.write(RTTBCNRC, (RS_ENA | rateFactor(25.6)) >>> 0);
    await model.waitFor(0, (s) => s.txRateLimited === 1);
    file = await capture(() => send(Array(20).fill(60), 30));
    for (const gap of gaps(stamps(file))) assert.ok(gap > 20000 - 1, `gap ${gap} ns, want at least 20000`);
  });

  it('a limited queue holds up no other queue: their frames go out in its gaps', async () => {
    // TX queue 1: ring at 96 KiB, its buffers after queue 0's (registers at +0x40 per queue)
    const q1 = (off) => off + 0x40;
    const ring = 96 * 1024;
    const [lo, hi] = [mem.phys(ring) % 2 ** 32, Math.floor(mem.phys(ring) / 2 ** 32)];
    dev.write(q1(d.R.TDBAL), lo); dev.write(q1(d.R.TDBAH), hi); dev.write(q1(d.R.TDLEN), 256 * 16);
    dev.write(q1(d.R.TDH), 0); dev.write(q1(d.R.TDT), 0);
    dev.write(q1(d.R.TXDCTL), 1 << 25);
    await model.waitFor(0, (s) => s.txQueuesActive === 2);
    for (let k = 0; k < 10; k++) {
      d.buildFrame(mem.bytes.subarray(d.txBuf(100 + k)), { size: 60, seq: 100 + k });
      const w = (ring + k * 16) / 4;
      const addr = mem.phys(d.txBuf(100 + k));
      mem.u32[w] = addr % 2 ** 32; mem.u32[w + 1] = Math.floor(addr / 2 ** 32);
      mem.u32[w + 2] = (60 | (3 << 20) | (1 << 24) | (1 << 25) | (1 << 27) | (1 << 29)) >>> 0;
      mem.u32[w + 3] = (60 << 14) >>> 0;
    }
    // queue 0 at 50 kpps (20 us apart): three frames, the later two fetched ahead of time
    dev.write(RTTDQSEL, 0);
    dev.write(RTTBCNRC, (RS_ENA | rateFactor(25.6)) >>> 0);
    await model.waitFor(0, (s) => s.txRateLimited === 1);
    for (let k = 0; k < 3; k++) {
      d.buildFrame(mem.bytes.subarray(d.txBuf(k)), { size: 60, seq: k });
      d.txDesc(mem, k, 60);
    }
    const file = path.join(dir, 'two.pcap');
    await model.pcapOut(0, file, { nanoseconds: true });
    await model.stall(0, 200); // both tails are seen in one visit: queue 0 first
    dev.write(d.R.TDT, 3);
    dev.write(q1(d.R.TDT), 10);
    await model.waitFor(0, (s) => s.txFrames === 13, 5000);
    await model.pcapOut(0, null);
    const frames = readPcap(file).frames.map((f) => ({ seq: f.data.readUInt32BE(42), t: BigInt(f.sec) * 1000000000n + BigInt(f.nsec) }));
    const limited = frames.filter((f) => f.seq < 3).map((f) => f.t);
    const other = frames.filter((f) => f.seq >= 100).map((f) => f.t);
    for (const gap of gaps(limited)) assert.ok(Math.abs(gap - 20000) < 1, `limited gap ${gap} ns`);
    for (const gap of gaps(other)) assert.ok(Math.abs(gap - 67.2) < 1, `other gap ${gap} ns`);
    assert.ok(Math.abs(Number(other[0] - limited[0]) - 67.2) < 1, 'queue 1 follows queue 0\'s first frame on the line');
    assert.ok(other[9] < limited[1], 'and is out before queue 0\'s next one');
  });
});
