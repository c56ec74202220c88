'use strict';

// `ixy replay`: the frames of a pcap file on the model's wire byte for byte, in order, at
// the recorded timing (scaled by --speed) or as fast as the NIC takes them, --loop times.
const assert = require('assert');
const path = require('path');
const { replay } = require('../lib/apps/replay');
const { PcapWriter, readPcap } = require('../lib/pcap');
const { suiteTmpDir, modelForSuite, runIxy, assertIxyError } = require('./support/helpers');

const quiet = { write() {} };
// The model's wire times are exact when it visits in time; on a shared host it can be a
// few ms late (native/model/README.md, The wire, Limits), and replay's own sleeps end late
// too. The recorded gaps are far longer than that, and a frame's time after the first is
// asked to be within this of the recorded (scaled) one.
const TOLERANCE_MS = 12;
const GAP_MS = 40;

// Frames of every length class, bytes from a simple generator: not all of them IPv4, some
// shorter than the 60 bytes a NIC pads to.
function sampleFrames(count) {
  let x = 12345;
  const next = () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return x >>> 16;
  };
  const lengths = [17, 42, 60, 61, 128, 1000, 1514];
  return Array.from({ length: count }, (_, i) => {
    const b = Buffer.alloc(lengths[i % lengths.length]);
    for (let k = 0; k < b.length; k++) b[k] = next() & 0xff;
    return b;
  });
}

function writeCapture(file, frames, gapMs) {
  const w = new PcapWriter(file, { nanoseconds: false });
  frames.forEach((f, i) => {
    const us = 1000000 + i * gapMs * 1000;
    w.write(f, f.length, 1700000000 + Math.floor(us / 1e6), (us % 1e6) * 1000);
  });
  w.close();
}

// ns since the capture's first frame
const offsets = (frames) => frames.map((f) => (f.sec - frames[0].sec) * 1e9 + (f.nsec - frames[0].nsec));

describe('ixy replay on the device model', function () {
  this.timeout(60000);
  const model = modelForSuite(1);
  const tmp = suiteTmpDir('ixy-replay-');
  let n = 0;

  async function played(file, options) {
    const out = path.join(tmp(), `out${n++}.pcap`);
    await model().pcapOut(0, out, { nanoseconds: true });
    const r = await replay(model().addresses[0], file, { out: quiet, ...options });
    await model().pcapOut(0, null);
    return { r, frames: readPcap(out).frames };
  }

  it('sends every frame byte for byte and in order, at the recorded gaps within the tolerance', async function () {
    const frames = sampleFrames(14);
    const file = path.join(tmp(), 'in.pcap');
    writeCapture(file, frames, GAP_MS);
    const { r, frames: got } = await played(file, {});
    assert.strictEqual(r.sent, frames.length);
    assert.deepStrictEqual(got.map((f) => f.data), frames);
    offsets(got).forEach((ns, i) => {
      assert.ok(Math.abs(ns / 1e6 - i * GAP_MS) < TOLERANCE_MS, `frame ${i}: ${(ns / 1e6).toFixed(2)} ms after the first, recorded ${i * GAP_MS} ms`);
    });
  });

  it('--speed 2 halves the gaps; --loop 3 plays the file three times, the next loop one mean gap after the last frame', async function () {
    const frames = sampleFrames(5);
    const file = path.join(tmp(), 'loop.pcap');
    writeCapture(file, frames, GAP_MS);
    const { r, frames: got } = await played(file, { speed: 2, loop: 3 });
    assert.strictEqual(r.sent, 15);
    assert.deepStrictEqual(got.map((f) => f.data), [...frames, ...frames, ...frames]);
    offsets(got).forEach((ns, i) => {
      assert.ok(Math.abs(ns / 1e6 - (i * GAP_MS) / 2) < TOLERANCE_MS, `frame ${i}: ${(ns / 1e6).toFixed(2)} ms, expected ${(i * GAP_MS) / 2}`);
    });
  });

  it('--fast ignores the timestamps: 700 frames of a capture 28 s long, byte for byte, in well under its time', async function () {
    const frames = sampleFrames(700);
    const file = path.join(tmp(), 'fast.pcap');
    writeCapture(file, frames, GAP_MS);
    const start = performance.now();
    const { r, frames: got } = await played(file, { fast: true, loop: 2 });
    assert.ok(performance.now() - start < 700 * GAP_MS / 2, 'it waited for the timestamps');
    assert.strictEqual(r.sent, 1400);
    assert.deepStrictEqual(got.map((f) => f.data), [...frames, ...frames]);
  });

  it('refuses, in one line and before touching the device, a frame the NIC cannot send whole', async function () {
    const file = path.join(tmp(), 'cut.pcap');
    const w = new PcapWriter(file, { nanoseconds: false, snaplen: 64 });
    w.write(Buffer.alloc(100), 100, 1, 0);
    w.close();
    await assert.rejects(replay(model().addresses[0], file, { out: quiet }), (err) => {
      assertIxyError(err, 'EINVAL', /frame 1 of .* was cut to 64 of its 100 bytes/);
      return true;
    });
    const run = await runIxy(['replay', model().addresses[0], path.join(tmp(), 'missing.pcap')], { env: { IXY_PCI_ROOT: model().dir } });
    assert.strictEqual(run.code, 1);
    assert.match(run.stderr, /^ixy: .*missing\.pcap/);
    assert.strictEqual(run.stderr.trim().split('\n').length, 1);
  });
});
