'use strict';

// PacketBatch.touchFrames() reads and writes back byte `at` of each frame, in the pool's one
// view over every buffer. Buffer id k starts 2^bufferShift bytes after id k - 1: an AF_XDP
// UMEM's bufferSize (its chunk less the kernel's headroom) is less than that stride.
const assert = require('assert');
const { PacketBatch } = require('../../lib/memory/batch');

describe('PacketBatch.touchFrames()', function () {
  // A pool's byte view that records the offsets it is read at.
  function recordingPool(bufferShift, bufferSize, entries) {
    const read = [];
    const bytes = new Proxy(new Uint8Array(entries << bufferShift), {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) read.push(Number(key));
        return target[key];
      },
      set(target, key, value) {
        target[key] = value;
        return true;
      },
    });
    return { pool: { bytes, bufferShift, bufferSize }, read };
  }

  for (const n of [1, 3, 4, 7]) {
    it(`touches byte 1 of each of ${n} frames, buffers 2^bufferShift apart (a UMEM's layout)`, function () {
      const { pool, read } = recordingPool(11, 2048 - 256, 16);
      const batch = new PacketBatch(8);
      const ids = [3, 0, 5, 7, 1, 15, 9].slice(0, n);
      batch.ids.set(ids);
      batch.count = n;
      batch.pool = pool;
      batch.touchFrames(n, 1);
      assert.deepStrictEqual(read, ids.map((id) => id * 2048 + 1));
    });
  }
});
