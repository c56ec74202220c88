'use strict';

// forwardBatch(), the step of `ixy forward`, with stand-in queues: what it does to the
// frames between receive and send, and what it does with frames the TX ring refuses.
// Then how V8 compiles the step in the real command.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { Mempool } = require('../lib/mempool');
const { PacketBatch } = require('../lib/batch');
const { forwardBatch } = require('../lib/apps/forward');
const { Model } = require('../lib/model');
const { IXY, suiteTmpDir } = require('./helpers');
const { forwardTraffic } = require('./bench/run-one');

// An RX queue that "receives" the given buffer ids, and a TX queue that takes `room` frames.
function standIns(pool, ids, room) {
  const rx = {
    receive(batch) {
      for (let i = 0; i < ids.length; i++) {
        batch.ids[i] = ids[i];
        batch.lengths[i] = 60;
      }
      batch.count = ids.length;
      batch.pool = pool;
      return ids.length;
    },
  };
  const tx = {
    sent: [],
    send(batch) {
      const n = Math.min(room, batch.count);
      for (let i = 0; i < n; i++) this.sent.push(batch.ids[i]);
      return n;
    },
  };
  return { rx, tx };
}

describe('forwardBatch', function () {
  let pool;
  before(function () {
    pool = new Mempool({ entries: 64 });
  });
  after(function () {
    pool.close();
  });

  // 1..9 frames: the four-at-a-time loop, its remainder, and both together.
  for (let n = 1; n <= 9; n++) {
    it(`adds 1 to byte 1 of each of ${n} received frames and nothing else`, function () {
      const ids = [];
      for (let i = 0; i < n; i++) ids.push(pool.alloc());
      for (const id of ids) pool.buffers[id].fill(7, 0, 64);
      const { rx, tx } = standIns(pool, ids, n);
      const dropped = forwardBatch(rx, tx, new PacketBatch(32));
      assert.strictEqual(dropped, 0);
      assert.deepStrictEqual(tx.sent, ids);
      for (const id of ids) {
        const b = pool.buffers[id];
        assert.deepStrictEqual([b[0], b[1], b[2], b[63]], [7, 8, 7, 7], `buffer ${id}`);
        pool.free(id);
      }
    });
  }

  it('frees what the TX ring did not take and says how many', function () {
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(pool.alloc());
    const before = pool.freeCount;
    const { rx, tx } = standIns(pool, ids, 4);
    assert.strictEqual(forwardBatch(rx, tx, new PacketBatch(32)), 2);
    assert.deepStrictEqual(tx.sent, ids.slice(0, 4));
    assert.strictEqual(pool.freeCount, before + 2, 'the two refused buffers are back in the pool');
    for (const id of tx.sent) pool.free(id);
  });
});

// lib/jit.js raises V8's inlining budget so that one forwarding step, both directions,
// compiles into the app loop's function with no call left on its usual path. V8 lists
// what each optimised function took in (--print-opt-code); with Node's default budget
// receive() and send() stay outside runSlice().
describe('ixy forward, compiled', function () {
  this.timeout(60000);
  const tmpDir = suiteTmpDir('ixy-jit-');

  it('inlines the whole step (receive, touch, send, reclaim) into the loop', async function () {
    const model = await Model.start({ ports: 2, config: forwardTraffic([0, 1]) });
    try {
      // stdout into a file, not a pipe: Node makes a pipe non-blocking, and V8 prints
      // through C stdio, which drops what a full pipe refuses.
      const outFile = path.join(tmpDir(), 'opt-code.txt');
      const out = fs.openSync(outFile, 'w');
      const args = ['--print-opt-code', '--print-opt-code-filter=runSlice', IXY, 'forward', ...model.addresses, '--seconds', '2'];
      const run = spawnSync(process.execPath, args, { env: { ...process.env, IXY_PCI_ROOT: model.dir }, encoding: 'utf8', stdio: ['ignore', out, 'pipe'] });
      fs.closeSync(out);
      const printed = fs.readFileSync(outFile, 'utf8');
      assert.strictEqual(run.status, 0, run.stderr);
      assert.match(printed, /total RX [1-9]\d* packets/);
      // Each compilation of runSlice() (V8 may compile it more than once, on-stack
      // replacement first) ends with "Inlined functions (count = N)" and N lines of
      // "0x... <SharedFunctionInfo name>". The last one is the code that ran to the end.
      const compilations = printed.split('--- Optimized code ---').filter((c) => /^name = runSlice$/m.test(c));
      assert.ok(compilations.length > 0, 'runSlice() was never optimised');
      const last = compilations[compilations.length - 1];
      const m = /^Inlined functions \(count = (\d+)\)\n((?:.*\n)*)/m.exec(last);
      assert.ok(m, 'runSlice() inlined nothing');
      const inlined = m[2].split('\n').slice(0, Number(m[1])).map((line) => (/<SharedFunctionInfo ?([\w ]*)>/.exec(line) || [])[1]);
      for (const f of ['step', 'forwardBatch', 'receive', 'touchFrames', 'send', 'reclaim']) {
        assert.ok(inlined.includes(f), `${f}() is not inlined into runSlice(), which took in: ${inlined.join(', ')}`);
      }
    } finally {
      await model.stop();
    }
  });
});
