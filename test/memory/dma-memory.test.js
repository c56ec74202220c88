'use strict';

// DmaMemory (lib/memory/mempool.js) over the addon's allocDma(): what one allocation may be.
const assert = require('assert');
const { DmaMemory } = require('../../lib/memory/mempool');
const { assertIxyError, hugepageBytes } = require('../support/helpers');

describe('DMA memory', function () {
  it('refuses more than 4 GiB in one allocation with EINVAL, before it takes a hugepage', function () {
    const before = hugepageBytes();
    // One allocation is one external ArrayBuffer; Node 20 cannot make one over 4 GiB, and
    // its failure there used to end the process (a double free) instead of throwing.
    assert.throws(() => new DmaMemory(4 * 1024 ** 3 + 1), (err) => assertIxyError(err, 'EINVAL', /at most 4096 MiB per allocation/));
    assert.strictEqual(hugepageBytes(), before);
  });

  // This process's mappings, not the machine's free count, which other processes change.
  it('gives back what it took when freed', function () {
    const before = hugepageBytes();
    const memory = new DmaMemory(4 * 1024 * 1024);
    assert.strictEqual(memory.size, 4 * 1024 * 1024);
    assert.strictEqual(hugepageBytes(), before + 4 * 1024 * 1024);
    memory.free();
    assert.strictEqual(hugepageBytes(), before);
  });
});
