'use strict';

// The model's JavaScript API as index.d.ts types it: source() passes its checksum and FCS
// options on, and the driver sees the broken frames the model says it sent.
const assert = require('assert');
const ixy = require('../../lib');
const { modelForSuite } = require('../support/helpers');

describe('Model API: broken frames from source()', function () {
  this.timeout(30000);
  const model = modelForSuite(1);

  it('ipsum, udpsum and fcs reach the model: the NIC reports what each broke', async function () {
    const dev = await ixy.open(model().addresses[0]);
    const batch = new ixy.PacketBatch(16, null, { status: true });
    const first = async (options) => {
      await model().clear(0);
      await model().source(0, { count: 4, ...options });
      await model().waitFor(0, (s) => s.rxOffered === 4);
      let n = 0;
      while (n === 0) n = dev.rxBatch(0, batch);
      const flags = batch.checksumOf(0);
      batch.release();
      for (;;) { if (dev.rxBatch(0, batch) === 0) break; batch.release(); }
      return flags;
    };
    try {
      assert.strictEqual(await first({ ipsum: 'bad' }) & ixy.CHECKSUM_IP_BAD, ixy.CHECKSUM_IP_BAD);
      assert.strictEqual(await first({ udpsum: 'bad' }) & ixy.CHECKSUM_L4_BAD, ixy.CHECKSUM_L4_BAD);
      assert.strictEqual(await first({ udpsum: 'good' }), ixy.CHECKSUM_IP_GOOD | ixy.CHECKSUM_L4_GOOD);
      const before = dev.stats().rxErrors;
      await model().clear(0);
      await model().source(0, { count: 3, fcs: 'bad' });
      const truth = await model().waitFor(0, (s) => s.rxOffered === 3);
      assert.strictEqual(truth.rxDropCrc, 3);
      assert.strictEqual(dev.stats().rxErrors - before, 3, 'one stats() counts the CRC errors');
    } finally {
      dev.close();
    }
  });
});
