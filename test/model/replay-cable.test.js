'use strict';

// `ixy replay` on one port, `ixy pcap` on the far end of the cable: what a host capture
// looks like after a trip over the model's wire. The 82599 pads short frames (HLREG0.TXPADEN)
// and holds what its RX ring cannot take yet in its packet buffer (RXPBSIZE(0), 512 KiB).
const assert = require('assert');
const path = require('path');
const { replay } = require('../../lib/apps/replay');
const { PcapWriter, readPcap } = require('../../lib/pcap-file');
const { suiteTmpDir, modelForSuite, runIxy } = require('../support/helpers');

const quiet = { write() {} };

// An ARP request as a host's capture has it: 42 bytes, the NIC pads it on the wire.
function arpRequest(i) {
  const f = Buffer.alloc(42);
  f.fill(0xff, 0, 6); // broadcast
  Buffer.from([2, 0, 0, 0, 0xaa, i & 0xff]).copy(f, 6);
  f.writeUInt16BE(0x0806, 12);
  f.writeUInt16BE(1, 14); f.writeUInt16BE(0x0800, 16); f[18] = 6; f[19] = 4; f.writeUInt16BE(1, 20);
  Buffer.from([2, 0, 0, 0, 0xaa, i & 0xff]).copy(f, 22);
  Buffer.from([198, 18, 0, 1 + (i % 200)]).copy(f, 28);
  Buffer.from([198, 18, 0, 250]).copy(f, 38);
  return f;
}

// 64-byte UDP frames to port 1's MAC (its filter takes them), numbered at byte 42.
function udpFrame(i) {
  const f = Buffer.alloc(64);
  Buffer.from([2, 0, 0, 0, 0xff, 1]).copy(f, 0);
  Buffer.from([2, 0, 0, 0, 0xaa, 0]).copy(f, 6);
  f.writeUInt16BE(0x0800, 12);
  f[14] = 0x45; f.writeUInt16BE(50, 16); f[22] = 64; f[23] = 17;
  f.writeUInt32BE(0x0a000001, 26); f.writeUInt32BE(0x0a000002, 30);
  f.writeUInt16BE(1024, 34); f.writeUInt16BE(5000, 36); f.writeUInt16BE(30, 38);
  f.writeUInt32BE(i, 42);
  return f;
}

function writeCapture(file, frames) {
  const w = new PcapWriter(file, { nanoseconds: false });
  frames.forEach((f, i) => w.write(f, f.length, 1700000000, i * 1000));
  w.close();
}

describe('ixy replay across a cable into ixy pcap', function () {
  this.timeout(120000);
  const model = modelForSuite(2);
  const tmp = suiteTmpDir('ixy-replay-cable-');
  let n = 0;

  before(async function () {
    await model().cable(0, 1);
  });

  // Replays `frames` on port 0 while `ixy pcap` (default options) captures `frames.length`
  // on port 1; returns the frames captured and the model's truth of port 1.
  async function across(frames, replayOptions) {
    const input = path.join(tmp(), `in${n}.pcap`);
    const output = path.join(tmp(), `out${n++}.pcap`);
    writeCapture(input, frames);
    await model().clear(1);
    let capture = null;
    const done = runIxy(['pcap', model().addresses[1], output, String(frames.length)], {
      env: { IXY_PCI_ROOT: model().dir }, timeoutMs: 60000, onStart: (child) => { capture = child; },
    });
    try {
      await model().waitFor(1, (s) => s.rxQueueActive && s.linkUp, 20000);
      const r = await replay(model().addresses[0], input, { out: quiet, ...replayOptions });
      assert.strictEqual(r.sent, frames.length);
      await model().waitFor(1, (s) => s.rxOffered === frames.length, 10000);
      const truth = await model().stats(1);
      setTimeout(() => { if (capture && capture.exitCode === null) capture.kill('SIGINT'); }, 2000).unref();
      const result = await done;
      assert.strictEqual(result.code, 0, result.stderr);
      return { got: readPcap(output).frames, truth };
    } finally {
      if (capture && capture.exitCode === null) capture.kill('SIGKILL');
    }
  }

  it('a host capture of 42-byte ARP frames arrives whole on the far port, padded to 60 bytes (64 with the FCS)', async function () {
    const frames = Array.from({ length: 50 }, (_, i) => arpRequest(i));
    const { got, truth } = await across(frames, { fast: true });
    assert.strictEqual(truth.rxDropRunt, 0, 'the MAC padded them: no runts');
    assert.strictEqual(got.length, frames.length);
    got.forEach((f, i) => {
      assert.strictEqual(f.data.length, 60, `frame ${i}`);
      assert.deepStrictEqual(f.data.subarray(0, 42), frames[i], `frame ${i}: its own bytes first`);
      assert.ok(f.data.subarray(42).every((b) => b === 0), `frame ${i}: zeros after`);
    });
  });

  it('--fast: 2,000 64-byte frames all kept with default settings (they wait in the packet buffer)', async function () {
    const frames = Array.from({ length: 2000 }, (_, i) => udpFrame(i));
    const { got, truth } = await across(frames, { fast: true });
    assert.strictEqual(truth.rxDropNoDesc, 0, `the model dropped ${truth.rxDropNoDesc} for want of descriptors`);
    assert.strictEqual(got.length, frames.length);
    got.forEach((f, i) => assert.strictEqual(f.data.readUInt32BE(42), i, `frame ${i} in order`));
  });
});
