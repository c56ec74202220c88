'use strict';

// How long a backoff loop sleeps (lib/device/idle.js, lib/device/idle-bound.js): longer the longer it
// has been idle, never longer than half of what the RX ring and packet buffer hold at the
// rate traffic may start at (the user's idleRate, else the highest rate the loop carried,
// at least 1 Mpps).
const assert = require('assert');
const ixy = require('../../lib/index');
const { Idler } = require('../../lib/device/idle');
const { framesHeld, holdMs } = require('../../lib/device/idle-bound');
const { modelForSuite } = require('../support/helpers');

// A device as the bound sees it: one RX ring of 512 with a refill threshold of 128, and
// ixgbe's 512 KiB packet buffer.
function device(options = {}) {
  return { options, rxPacketBufferBytes: 512 << 10, rxQueues: [{ size: 512, freeThreshold: 128, packets: 0 }], txQueues: [] };
}

describe('idle bound: what a sleeping port holds', function () {
  this.timeout(20000);
  const model = modelForSuite(1);

  it("an ixgbe port on the model holds its armed descriptors and 512 KiB of 64-byte frames: 6.6 ms at 1 Mpps", async function () {
    const dev = await ixy.open(model().addresses[0]);
    try {
      // 512 - 128 descriptors, and 524288 / (60 + 24) frames in the packet buffer.
      assert.strictEqual(framesHeld(dev), 384 + 6241);
      assert.strictEqual(holdMs([dev], 1e6), 6.625);
    } finally {
      dev.close();
    }
  });

  it('a device that says nothing of its packet buffer is held to its ring', function () {
    const dev = device();
    dev.rxPacketBufferBytes = 0;
    assert.strictEqual(framesHeld(dev), 384);
  });
});

describe('idle bound: the backoff sleep', function () {
  it('grows with the idle time, up to half the hold time at 1 Mpps by default', function () {
    const idler = new Idler('backoff', [device()]);
    const t = idler.workedAt;
    assert.strictEqual(idler.sleepMs(t + 5), 1);
    assert.strictEqual(idler.sleepMs(t + 20), 2);
    assert.strictEqual(idler.sleepMs(t + 60000), 3); // 6.625 ms / 2, in whole ms
  });

  it('a named rate sets the bound: lower sleeps longer', function () {
    assert.strictEqual(new Idler('backoff', [device({ idleRate: 250000 })]).sleepMs(performance.now() + 60000), 13);
    assert.strictEqual(new Idler('backoff', [device({ idleRate: 4e6 })]).sleepMs(performance.now() + 60000), 1);
    // Of two devices, the lower rate that one names; and the port that holds less.
    const small = device();
    small.rxPacketBufferBytes = 0;
    assert.strictEqual(new Idler('backoff', [device({ idleRate: 100000 }), small]).sleepMs(performance.now() + 60000), 1);
  });

  it('a loop that has carried more than 1 Mpps sleeps as that rate allows', function () {
    const dev = device();
    const idler = new Idler('backoff', [dev]);
    const t = idler.workedAt;
    idler.worked(t + 10);
    dev.rxQueues[0].packets += 30000; // 3 Mpps over 10 ms
    idler.worked(t + 20);
    assert.ok(Math.abs(idler.peakRate - 3e6) < 1, `${idler.peakRate}`);
    assert.strictEqual(idler.sleepMs(t + 60000), 1); // 6,625 frames at 3 Mpps: 2.2 ms, half of it
  });

  it('idleRate must be a positive number', function () {
    for (const idleRate of [0, -5, 'fast', Infinity]) {
      assert.throws(() => new Idler('backoff', [device({ idleRate })]), { code: 'EINVAL', message: /idleRate must be a positive number/ });
    }
  });
});
