'use strict';

// The shared DMA region of the descriptor rings (lib/intel/rings.js): where spans go,
// what a reused span holds, what happens when the region is full, and that the region's
// hugepages go back with the last ring.
const assert = require('assert');
const ringMemory = require('../../lib/intel/rings');
const { hugepageBytes } = require('../support/helpers');

const { allocRing, releaseRing, ringsInUse, REGION_BYTES } = ringMemory;
const KiB = 1024;

describe('ring memory', function () {
  let hugepagesBefore;
  before(function () {
    assert.strictEqual(ringsInUse(), 0, 'a ring of another test is still open');
    hugepagesBefore = hugepageBytes(); // this process's, not the machine's
  });
  after(function () {
    assert.strictEqual(ringsInUse(), 0);
    assert.strictEqual(hugepageBytes(), hugepagesBefore, 'the region was not freed with its last ring');
  });

  it('places each ring at a multiple of its size, apart from the others, seen through its view and through words', function () {
    const sizes = [8 * KiB, 1 * KiB, 64 * KiB, 8 * KiB, 2 * KiB];
    const rings = sizes.map((bytes) => allocRing(bytes));
    const ranges = rings.map((r) => [r.at * 4, r.at * 4 + r.bytes]).sort((x, y) => x[0] - y[0]);
    for (let k = 1; k < ranges.length; k++) assert.ok(ranges[k - 1][1] <= ranges[k][0], `rings ${ranges[k - 1]} and ${ranges[k]} overlap`);
    for (const r of rings) {
      assert.strictEqual((r.at * 4) % r.bytes, 0, `a ring of ${r.bytes} bytes at byte ${r.at * 4}`);
      assert.strictEqual(r.view.length, r.bytes / 4);
      r.view[r.view.length - 1] = r.bytes;
      assert.strictEqual(ringMemory.words[r.at + r.view.length - 1], r.bytes);
      // Within one hugepage, physical addresses follow offsets.
      assert.strictEqual(r.phys - rings[0].phys, (r.at - rings[0].at) * 4);
    }
    for (const r of rings) releaseRing(r);
  });

  it('hands a span back out zeroed, and ignores a span given back twice', function () {
    const keep = allocRing(4 * KiB); // keeps the region while the span below comes and goes
    const a = allocRing(8 * KiB);
    a.view.fill(0xffffffff); // as if the NIC had written back every descriptor
    releaseRing(a);
    const b = allocRing(8 * KiB);
    assert.strictEqual(b.at, a.at);
    assert.ok(b.view.every((w) => w === 0), 'old descriptors are still there');
    releaseRing(a); // a second time: must not take b's span away
    assert.strictEqual(ringsInUse(), 2);
    const c = allocRing(8 * KiB);
    assert.notStrictEqual(c.at, b.at);
    for (const r of [keep, b, c]) releaseRing(r);
  });

  it('refuses a ring that does not fit with ENOMEM and a one-line message, and loses nothing', function () {
    const big = 128 * KiB; // the largest ring: 8192 descriptors
    const rings = [];
    for (let k = 0; k < REGION_BYTES / big; k++) rings.push(allocRing(big));
    assert.throws(() => allocRing(1 * KiB), (err) => err.code === 'ENOMEM' && /ring memory/.test(err.message) && !err.message.includes('\n'));
    releaseRing(rings.pop());
    rings.push(allocRing(big)); // the freed span is usable again
    for (const r of rings) releaseRing(r);
    assert.strictEqual(ringsInUse(), 0);
  });
});
