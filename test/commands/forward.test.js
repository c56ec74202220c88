'use strict';

// forwardBatch(), the step of `ixy forward`, with stand-in queues: what it does to the
// frames between receive and send, and what it does with frames the TX ring refuses.
// Then how V8 compiles the step in the real command.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { Mempool } = require('../../lib/memory/mempool');
const { PacketBatch } = require('../../lib/memory/batch');
const { forward, forwardBatch } = require('../../lib/apps/forward');
const { native } = require('../../lib/host/native');
const { Model } = require('../../lib/model');
const { IXY, suiteTmpDir, hugetlbfsFiles, hugepageMappings } = require('../support/helpers');
const { tracedForward, lossesBeyondCpuWait } = require('../support/traced-forward');

// The model's traffic for forwarding at full load: on both ports a source of 60-byte frames
// that fills every free RX descriptor (rate 0), and a sink that counts.
const FULL_LOAD = require('../../bench/run-one').MODEL_CONFIG.forward;

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
    it(`sends each of ${n} received frames on unchanged`, function () {
      const ids = [];
      for (let i = 0; i < n; i++) ids.push(pool.alloc());
      for (const id of ids) pool.buffers[id].forEach((_, k, b) => { b[k] = k & 0xff; });
      const { rx, tx } = standIns(pool, ids, n);
      const batch = new PacketBatch(32);
      forwardBatch(rx, tx, batch);
      assert.strictEqual(batch.count, 0, 'nothing held back');
      assert.deepStrictEqual(tx.sent, ids);
      for (const id of ids) {
        const b = pool.buffers[id];
        assert.ok(b.every((v, k) => v === (k & 0xff)), `buffer ${id} changed`);
        pool.free(id);
      }
    });
  }

  it('holds back what a full TX ring did not take and sends it first, receiving nothing meanwhile', function () {
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(pool.alloc());
    const before = pool.freeCount;
    const { rx, tx } = standIns(pool, ids, 4);
    let receives = 0;
    const receive = rx.receive;
    rx.receive = (b) => { receives++; return receive(b); };
    const batch = new PacketBatch(32);
    forwardBatch(rx, tx, batch);
    assert.deepStrictEqual(tx.sent, ids.slice(0, 4));
    assert.strictEqual(batch.count, 2, 'two frames held back');
    assert.strictEqual(pool.freeCount, before, 'no buffer went back to the pool: none was dropped');
    forwardBatch(rx, tx, batch); // the TX ring has room again: the held frames go first
    assert.deepStrictEqual(tx.sent, ids);
    assert.strictEqual(batch.count, 0);
    assert.strictEqual(receives, 1, 'no receive while frames were held');
    for (const id of tx.sent) pool.free(id);
  });

  it('on stand-in queues, a TX ring that completes nothing for a while loses no frame', function () {
    const { openPort, standInNic, closeQueues } = require('../../lib/warm-up/stand-in');
    const ixgbeLayout = require('../../lib/intel/ixgbe/registers');
    const a = openPort(ixgbeLayout, 64);
    const b = openPort(ixgbeLayout, 64);
    const batch = new PacketBatch(32);
    try {
      // 20 steps with b's TX completing nothing: its ring (63 frames) fills while a keeps
      // receiving; then both run on until everything received has gone out.
      for (let k = 0; k < 120; k++) {
        standInNic(a, 60, k < 40 ? 32 : 0);
        standInNic(b, 60, 0, k < 20);
        forwardBatch(a.rx, b.tx, batch);
      }
      assert.ok(a.rx.packets > 64, `${a.rx.packets} frames received`);
      assert.strictEqual(b.tx.packets, a.rx.packets, 'every received frame was sent');
      assert.strictEqual(batch.count, 0);
    } finally {
      closeQueues(a);
      closeQueues(b);
      a.pool.close();
      b.pool.close();
    }
  });
});

// lib/host/jit.js raises V8's inlining budget so that one forwarding step, both directions,
// compiles into one function with no call left on its usual path: runSlice() with step()
// inlined, or, where V8 keeps step() as a compiled function of its own (V8 14 does not
// inline a callee whose optimised code is already large), step() with the rest inlined,
// one call per step. V8 lists what each optimised function took in (--print-opt-code);
// with Node's default budget receive() and send() stay outside.
describe('ixy forward, compiled', function () {
  this.timeout(60000);
  const tmpDir = suiteTmpDir('ixy-jit-');

  it('compiles the whole step (receive, touch, send, reclaim) into one function', async function () {
    const model = await Model.start({ ports: 2, config: FULL_LOAD });
    try {
      // stdout into a file, not a pipe: Node makes a pipe non-blocking, and V8 prints
      // through C stdio, which drops what a full pipe refuses.
      const outFile = path.join(tmpDir(), 'opt-code.txt');
      const out = fs.openSync(outFile, 'w');
      const args = ['--print-opt-code', IXY, 'forward', ...model.addresses, '--seconds', '2'];
      const run = spawnSync(process.execPath, args, { env: { ...process.env, IXY_PCI_ROOT: model.dir }, encoding: 'utf8', stdio: ['ignore', out, 'pipe'] });
      fs.closeSync(out);
      const printed = fs.readFileSync(outFile, 'utf8');
      assert.strictEqual(run.status, 0, run.stderr);
      assert.match(printed, /total RX [1-9]\d* packets/);
      // Each compilation ends with "Inlined functions (count = N)" and N lines of
      // "0x... <SharedFunctionInfo name>"; the last TurboFan one of a function is the code
      // that ran to the end.
      const inlinedInto = (name) => {
        const compilations = printed.split('--- Optimized code ---')
          .filter((c) => new RegExp(`^name = ${name}$`, 'm').test(c) && /^kind = TURBOFAN/m.test(c));
        if (compilations.length === 0) return null;
        const m = /^Inlined functions \(count = (\d+)\)\n((?:.*\n)*)/m.exec(compilations[compilations.length - 1]);
        return m ? m[2].split('\n').slice(0, Number(m[1])).map((line) => (/<SharedFunctionInfo ?([\w ]*)>/.exec(line) || [])[1]) : [];
      };
      const slice = inlinedInto('runSlice');
      assert.ok(slice !== null, 'runSlice() was never optimised');
      const [where, inlined] = slice.includes('step') ? ['runSlice', slice] : ['step', inlinedInto('step')];
      assert.ok(inlined !== null, 'runSlice() calls step(), which was never optimised');
      for (const f of ['forwardBatch', 'receive', 'touchFrames', 'send', 'reclaim']) {
        assert.ok(inlined.includes(f), `${f}() is not inlined into ${where}(), which took in: ${inlined.join(', ')}`);
      }
    } finally {
      await model.stop();
    }
  });
});

// A forwarder usually starts before its traffic. lib/warm-up/index.js runs the step on stand-in
// queues before the ports go live, so that V8 has compiled it for frames, not only for an
// empty ring: the first real frames must not throw that code away (a deoptimisation
// costs the loop its speed until TurboFan has compiled it again).
describe('ixy forward, from its first frame', function () {
  this.timeout(60000);
  const tmpDir = suiteTmpDir('ixy-first-');
  const FRAMES = 100000;
  const HOT = ['runSlice', 'step', 'forwardBatch', 'receive', 'touchFrames', 'send', 'reclaim', 'reclaimMixed', 'tagOf', 'freeMany', 'freeFrom'];
  let run;

  // Idle until the loop has printed its first rate line (a second), then FRAMES frames at
  // 100 kpps into port 0, checked in order at port 1's sink, with V8 printing each
  // deoptimisation (--trace-deopt) in order with the app's lines (tracedForward). What the
  // traffic caused is what counts: deoptimisations while idle are harmless, V8 compiles
  // early and corrects itself before any frame waits. The forwarder spins while idle, as the loss
  // benchmark's does; test/commands/cold-start.test.js runs it with its default idle mode.
  before(async function () {
    run = await tracedForward(tmpDir(), { flags: ['--trace-deopt'], args: ['--idle', 'spin'], rate: 100000, frames: FRAMES });
  });

  it('does not deoptimise the step when the first frames arrive', function () {
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.idleTrace, /forwarding .* <-> /, 'the app\'s lines are in the file, in order');
    const bailouts = run.trafficTrace.split('\n').filter((l) => l.includes('bailout (')).map((l) => (/deoptimizing 0x[0-9a-f]+ <JSFunction (\w+)/.exec(l) || [])[1]);
    const hot = bailouts.filter((f) => HOT.includes(f));
    assert.deepStrictEqual(hot, [], `deoptimised: ${hot.join(', ')}`);
  });

  it('at 100 kpps from a cold start, loses no frame but what came while it waited for a CPU', function () {
    const [p0, p1] = run.ports;
    const lost = p0.rxDropNoDesc;
    assert.strictEqual(lossesBeyondCpuWait(run, 100000), 0, `${lost} frames found no RX descriptor, the loop waited ${run.cpuWaitMs.toFixed(1)} ms for a CPU`);
    const said = run.trafficTrace.split('\n').filter((l) => /^\[.*\] (total|TX|link)/.test(l)).join('\n');
    assert.strictEqual(p1.sinkFrames, FRAMES - lost, `the forwarder said:\n${said}\nport 1: ${JSON.stringify(p1)}`);
    if (lost === 0) assert.strictEqual(p1.sinkSeqErrors, 0);
  });
});

// Freeing DMA memory detaches its ArrayBuffer (native/addon.cc), and after the first
// detach in a process V8 checks on every typed array access whether its buffer is gone.
// So nothing may be freed before the loop runs: not the warm-up's stand-ins, not a ring
// memory made and freed again.
describe('ixy forward, its memory', function () {
  this.timeout(30000);

  it('frees no DMA memory before its loop runs, and all of it when it ends', async function () {
    const model = await Model.start({ ports: 2, config: FULL_LOAD });
    const addon = native();
    const free = addon.free;
    const events = [];
    addon.free = (buffer) => {
      events.push('free');
      return free.call(addon, buffer);
    };
    process.env.IXY_PCI_ROOT = model.dir;
    try {
      const out = { write: (line) => { if (line.startsWith('forwarding ')) events.push('loop'); return true; } };
      await forward(model.addresses[0], model.addresses[1], { seconds: 1, out });
    } finally {
      addon.free = free;
      delete process.env.IXY_PCI_ROOT;
      await model.stop();
    }
    assert.strictEqual(events[0], 'loop', `events: ${events.join(' ')}`);
    assert.ok(events.filter((e) => e === 'free').length >= 5, 'pools, stand-ins and ring memory freed at the end');
    assert.deepStrictEqual(hugetlbfsFiles(), [], 'no DMA file left');
  });
});

describe('ixy.warmUp', function () {
  it('runs the per-batch function on stand-in queues with frames, and close() frees it all', function () {
    const ixy = require('../../lib/index');
    const batch = new PacketBatch(32);
    let calls = 0;
    let received = 0;
    let sent = 0;
    const standIns = ixy.warmUp((rx, tx) => {
      calls++;
      const n = rx.receive(batch);
      received += n;
      const s = tx.send(batch);
      sent += s;
      batch.freeFrom(s);
    });
    assert.ok(calls > 1000, `${calls} calls`);
    assert.ok(received > 100000 && sent > 0 && sent <= received, `received ${received}, sent ${sent}`);
    assert.ok(hugepageMappings() > 0, 'the stand-ins hold their DMA memory until close()');
    standIns.close();
    assert.strictEqual(hugepageMappings(), 0);
  });
});
