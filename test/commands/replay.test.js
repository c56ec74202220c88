'use strict';

// `ixy replay`: the frames of a pcap file on the model's wire byte for byte (short ones padded
// by the NIC), in order, at the recorded timing (scaled by --speed) or as fast as the NIC
// takes them, --loop times.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { replay } = require('../../lib/apps/replay');
const { PcapWriter, readPcap } = require('../../lib/pcap-file');
const { suiteTmpDir, modelForSuite, runIxy, assertIxyError } = require('../support/helpers');

const quiet = { write() {} };
// The model's wire times are exact when it visits in time; on a shared host it can be a
// few ms late (native/model/README.md, The wire, Limits), and replay's own sleeps end late
// too. The recorded gaps are far longer than that, and each frame is asked to be within
// this of its recorded (scaled) place in the schedule, whose start is fitted (the median),
// plus what the machine took from the run's own processes: the time this process's main
// thread (which replays) and the model's threads (which time the frames on the wire)
// waited for a CPU.
const TOLERANCE_MS = 12;

// Nanoseconds the threads of process `pid` have waited for a CPU (/proc/PID/task/*/schedstat);
// for this process its main thread's.
function cpuWaitNs(pid = null) {
  const read = (file) => { try { return Number(fs.readFileSync(file, 'utf8').split(' ')[1]); } catch { return 0; } };
  if (pid === null) return read('/proc/self/schedstat');
  return fs.readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => sum + read(`/proc/${pid}/task/${tid}/schedstat`), 0);
}
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

// A frame as it is on the wire: the NIC pads one under 60 bytes with zeros (HLREG0.TXPADEN).
const onWire = (f) => (f.length >= 60 ? f : Buffer.concat([f, Buffer.alloc(60 - f.length)]));

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

// Each frame's distance in ms from its place in the schedule (frame i at i x gapMs), the
// schedule's start taken as the median over the frames of (time - place): a first frame
// that left late moves no other frame's verdict.
function offSchedule(frames, gapMs) {
  const ms = offsets(frames).map((ns) => ns / 1e6);
  const starts = ms.map((t, i) => t - i * gapMs).sort((a, b) => a - b);
  const start = starts[Math.floor(starts.length / 2)];
  return ms.map((t, i) => t - i * gapMs - start);
}

describe('ixy replay on the device model', function () {
  this.timeout(60000);
  const model = modelForSuite(1);
  const tmp = suiteTmpDir('ixy-replay-');
  let n = 0;

  // Replays `file`; resolves with replay()'s result, the frames the model sent and
  // `tolerance`: TOLERANCE_MS and what the machine took from this run (see above).
  async function played(file, options) {
    const out = path.join(tmp(), `out${n++}.pcap`);
    await model().pcapOut(0, out, { nanoseconds: true });
    const waited = cpuWaitNs() + cpuWaitNs(model().pid);
    const r = await replay(model().addresses[0], file, { out: quiet, ...options });
    const waitedMs = (cpuWaitNs() + cpuWaitNs(model().pid) - waited) / 1e6;
    await model().pcapOut(0, null);
    return { r, frames: readPcap(out).frames, tolerance: TOLERANCE_MS + waitedMs };
  }

  it('sends every frame byte for byte and in order, at the recorded gaps within the tolerance', async function () {
    const frames = sampleFrames(14);
    const file = path.join(tmp(), 'in.pcap');
    writeCapture(file, frames, GAP_MS);
    const { r, frames: got, tolerance } = await played(file, {});
    assert.strictEqual(r.sent, frames.length);
    assert.deepStrictEqual(got.map((f) => f.data), frames.map(onWire));
    offSchedule(got, GAP_MS).forEach((off, i) => {
      assert.ok(Math.abs(off) < tolerance, `frame ${i}: ${off.toFixed(2)} ms off its recorded time (gaps ${GAP_MS} ms; tolerance ${tolerance.toFixed(1)} ms)`);
    });
  });

  it('--speed 2 halves the gaps; --loop 3 plays the file three times, the next loop one mean gap after the last frame', async function () {
    const frames = sampleFrames(5);
    const file = path.join(tmp(), 'loop.pcap');
    writeCapture(file, frames, GAP_MS);
    const { r, frames: got, tolerance } = await played(file, { speed: 2, loop: 3 });
    assert.strictEqual(r.sent, 15);
    assert.deepStrictEqual(got.map((f) => f.data), [...frames, ...frames, ...frames].map(onWire));
    offSchedule(got, GAP_MS / 2).forEach((off, i) => {
      assert.ok(Math.abs(off) < tolerance, `frame ${i}: ${off.toFixed(2)} ms off its time at --speed 2 (gaps ${GAP_MS / 2} ms; tolerance ${tolerance.toFixed(1)} ms)`);
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
    assert.deepStrictEqual(got.map((f) => f.data), [...frames, ...frames].map(onWire));
  });

  // Issue 46, 7: setTimeout cannot wait longer than 2^31 - 1 ms; asked to, it warned and
  // fired after 1 ms, over and over (2,693 warnings in 2 s).
  it('a gap of 30 days: sleeps through it without a TimeoutOverflowWarning, and without polling', async function () {
    const file = path.join(tmp(), 'month.pcap');
    const w = new PcapWriter(file, { nanoseconds: false });
    w.write(Buffer.alloc(60, 1), 60, 1700000000, 0);
    w.write(Buffer.alloc(60, 2), 60, 1700000000 + 30 * 86400, 0);
    w.close();
    let cpu = 0;
    const run = await runIxy(['replay', model().addresses[0], file], {
      env: { IXY_PCI_ROOT: model().dir },
      // What the process used in a second after its start-up, from /proc; then Ctrl-C.
      onStart: (child) => setTimeout(() => {
        const ticks = () => fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0);
        const before = ticks();
        setTimeout(() => {
          cpu = (ticks() - before) / 100;
          child.kill('SIGINT');
        }, 1000);
      }, 1000),
    });
    assert.strictEqual(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /TimeoutOverflowWarning/);
    assert.match(run.stdout, /TX 1 packets/);
    assert.ok(cpu >= 0 && cpu < 0.2, `${cpu} s of CPU in 1 s of sleeping`);
  });

  // Issue 46, 9: frames of other media were sent as if they were Ethernet frames.
  it('refuses a capture of another link type (radiotap, raw IP) in one line naming it, before touching the device', async function () {
    await model().clear(0);
    for (const [linktype, name] of [[127, /link type 127 \(IEEE802_11_RADIOTAP, 802\.11 with radiotap headers\)/], [101, /link type 101 \(RAW, raw IP\)/], [147, /link type 147: /]]) {
      const file = path.join(tmp(), `linktype-${linktype}.pcap`);
      writeCapture(file, sampleFrames(3), GAP_MS);
      const bytes = fs.readFileSync(file);
      bytes.writeUInt32LE(linktype, 20);
      fs.writeFileSync(file, bytes);
      const run = await runIxy(['replay', model().addresses[0], file], { env: { IXY_PCI_ROOT: model().dir } });
      assert.strictEqual(run.code, 1);
      assert.match(run.stderr, name);
      assert.match(run.stderr, /^ixy: .*replay sends Ethernet frames only \(link type 1\)\n$/);
    }
    assert.strictEqual((await model().stats(0)).txFrames, 0);
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
