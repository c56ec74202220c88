'use strict';

// stats() after traffic stops says what the device dropped, in one call: on the NIC one read
// of a clear-on-read counter is exact, and on the model it must be too (the model hands its
// counts over through the registers, native/model/README.md "Statistics registers").
const assert = require('assert');
const ixy = require('../../lib');
const { modelForSuite } = require('../support/helpers');

const { sleep } = require('../../lib/host/register-access');

describe('exact counts', function () {
  const model = modelForSuite(1);

  it('one stats() after traffic stops equals the frames the model dropped, though stats() was read during the run', async function () {
    this.timeout(30000);
    const N = 60000;
    const dev = await ixy.open(model().addresses[0], { rxRingSize: 64 });
    try {
      // Nobody receives: the ring fills at once and the rest is dropped for want of descriptors.
      await model().clear(0);
      await model().source(0, { rate: 600000, size: 60, count: N });
      let during = 0;
      for (let i = 0; i < 10; i++) {
        await sleep(5);
        during = dev.stats().rxMissed; // as a per-second report would, while frames still drop
      }
      const truth = await model().waitFor(0, (s) => s.rxOffered === N, 20000);
      assert.ok(during < truth.rxDropNoDesc, 'the run ended before the reads in it: nothing to show');
      const missed = dev.stats().rxMissed;
      assert.strictEqual(missed, truth.rxDropNoDesc, `one stats() said ${missed}, the model dropped ${truth.rxDropNoDesc}`);
      assert.strictEqual(dev.stats().rxMissed, missed, 'a second call changed the count');
    } finally {
      dev.close();
    }
  });

  it('the first stats() after a burst holds the whole count: no read during the burst', async function () {
    this.timeout(30000);
    const N = 60000;
    const dev = await ixy.open(model().addresses[0], { rxRingSize: 64 });
    try {
      await model().clear(0);
      await model().source(0, { rate: 600000, size: 60, count: N });
      const truth = await model().waitFor(0, (s) => s.rxOffered === N, 20000);
      await sleep(200); // the model publishes what is pending within 0.5 ms
      const missed = dev.stats().rxMissed;
      assert.ok(truth.rxDropNoDesc > 1000, `the ring of 64 should have overflowed, the model dropped ${truth.rxDropNoDesc}`);
      assert.strictEqual(missed, truth.rxDropNoDesc, `the first stats() said ${missed}, the model dropped ${truth.rxDropNoDesc}`);
    } finally {
      dev.close();
    }
  });
});
