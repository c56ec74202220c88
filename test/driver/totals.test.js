'use strict';

// A queue's packet and byte totals grow past 2^31 within seconds of forwarding. Passing
// that line must neither lose counts nor throw away the optimised receive() and send()
// (see Queue in lib/device/device.js). Checked in a child process that may ask V8 what it has optimised.
const assert = require('assert');
const { runOptimising } = require('../support/helpers');

// An RX and a TX queue on a register file in plain memory, and the stand-in NIC (lib/warm-up/stand-in.js):
// every RX descriptor up to RDT is completed with a `length`-byte frame, every TX
// descriptor up to TDT is marked done. step() forwards one batch from rx to tx.
const CHILD = `
  // Buffers of 64 KiB: send() refuses a frame longer than its buffer.
  const port = openPort(ixgbeLayout, 512, { entries: 1024, rxFree: 128, bufferSize: 65536 });
  const { rx, tx } = port;
  const batch = new PacketBatch(32);
  const seen = { rx: { packets: 0, bytes: 0 }, tx: { packets: 0, bytes: 0 } }; // counted here
  function step(length) {
    standInNic(port, length);
    const n = rx.receive(batch);
    const sent = tx.send(batch);
    for (let i = 0; i < n; i++) {
      seen.rx.packets++;
      seen.rx.bytes += batch.lengths[i];
      if (i < sent) {
        seen.tx.packets++;
        seen.tx.bytes += batch.lengths[i];
      }
    }
    batch.freeFrom(sent);
  }
  const receive = RxQueue.prototype.receive;
  const send = TxQueue.prototype.send;
  // Running TurboFan's code. Not %GetOptimizationStatus(f) & 16: its bits moved in V8 14
  // (Node 26), where "optimised" is bit 3.
  const optimised = (f) => %ActiveTierIsTurbofan(f);
  %NeverOptimizeFunction(step); // so that receive() and send() run as functions of their own
  %PrepareFunctionForOptimization(receive);
  %PrepareFunctionForOptimization(send);
  for (let i = 0; i < 100; i++) step(60);
  %OptimizeFunctionOnNextCall(receive);
  %OptimizeFunctionOnNextCall(send);
  step(60);
  const before = { receive: optimised(receive), send: optimised(send) };
  // 65535-byte frames (the largest PKT_LEN), 32 per step: 2^31 bytes in 1024 steps.
  while (rx.bytes < 2 ** 31 + 2 ** 24) step(0xffff);
  const after = { receive: optimised(receive), send: optimised(send) };
  process.stdout.write(JSON.stringify({ before, after, seen,
    totals: { rx: { packets: rx.packets, bytes: rx.bytes }, tx: { packets: tx.packets, bytes: tx.bytes } } }));
`;

describe('queue totals', function () {
  it('count past 2^31 bytes exactly, and receive() and send() stay optimised', function () {
    this.timeout(20000);
    const r = runOptimising(CHILD);
    assert.deepStrictEqual(r.before, { receive: true, send: true }, 'the stand-in run did not get optimised code');
    assert.ok(r.seen.rx.bytes > 2 ** 31 && r.seen.tx.bytes > 2 ** 31);
    assert.deepStrictEqual(r.totals, r.seen);
    assert.deepStrictEqual(r.after, { receive: true, send: true }, 'crossing 2^31 threw optimised code away');
  });
});
