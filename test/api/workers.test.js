'use strict';

// Queue pairs in worker threads (lib/queue-pair.js) on the device model: the main
// thread opens the ports with { workers: true }, each worker attaches its queue pair from
// workerHandle(). examples/forward-workers.js is run end to end against the model's
// per-flow checking sinks.
const assert = require('assert');
const childProcess = require('child_process');
const path = require('path');
const { Worker } = require('worker_threads');
const ixy = require('../../lib');
const { assertForwardAccounts, modelForSuite, runIxy } = require('../support/helpers');
const { parseTotals } = require('../../lib/apps/demo/frame-account');

const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'forward-workers.js');
const LIB = path.join(__dirname, '..', '..', 'lib');
const { sleep } = require('../../lib/host/register-access');

// Runs `body` (the text of a function of (ixy, workerData)) in a worker; resolves with what
// it returned, rejects with what it threw.
function inWorker(body, workerData) {
  const source = `const { parentPort, workerData } = require('worker_threads');
    const ixy = require(${JSON.stringify(LIB)});
    parentPort.postMessage((${body})(ixy, workerData));`;
  return new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true, workerData });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`worker exited (${code}) without a result`)));
  });
}

describe('queue pairs in worker threads', function () {
  this.timeout(60000);
  const model = modelForSuite(2);

  it('examples/forward-workers.js: 2 workers forward both ways, every frame intact and each flow in order, counts equal the model\'s', async () => {
    await model().sink(0, { check: true });
    await model().sink(1, { check: true });
    const child = childProcess.spawn(process.execPath, [EXAMPLE, model().addresses[0], model().addresses[1], '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      await model().waitFor(0, (s) => s.linkUp && s.rxQueueActive, 10000);
      await model().waitFor(1, (s) => s.rxQueueActive && s.txQueuesActive === 2, 10000);
      const count = 30000;
      await model().source(0, { count, flows: 64 });
      await model().source(1, { count, flows: 64, proto: 'tcp' });
      await model().waitFor(0, (s) => s.rxDelivered === count, 20000);
      await model().waitFor(1, (s) => s.rxDelivered === count, 20000);
      await sleep(200);
    } finally {
      child.kill('SIGINT');
    }
    const { code } = await exited;
    assert.strictEqual(code, 0, out);
    const [a, b] = await model().stats();
    const total = Number(/total (\d+) packets forwarded \((\d+) \+ (\d+)\)/.exec(out)[1]);
    const perWorker = /total \d+ packets forwarded \((\d+) \+ (\d+)\)/.exec(out).slice(1).map(Number);
    assert.ok(perWorker.every((n) => n > 0), `both workers forwarded: ${out}`);
    assert.strictEqual(total, a.sinkFrames + b.sinkFrames, 'what the workers sent is what the sinks got');
    for (const s of [a, b]) {
      assert.strictEqual(s.sinkBadFrames, 0);
      assert.strictEqual(s.sinkFlowErrors, 0, 'each flow in order');
      assert.strictEqual(s.sinkFlows, 64);
      assert.ok(s.rxQueues[0] > 0 && s.rxQueues[1] > 0, 'RSS used both queues');
      assert.strictEqual(s.busMaster, false, 'the NIC was stopped');
      assert.strictEqual(s.dmaAfterRelease, 0);
    }
  });

  // `ixy forward A B --workers 2` with 64 flows each way; `stopWith` ends it: --seconds or SIGINT.
  async function forwardWithWorkers(stopWith) {
    await model().clear(0);
    await model().clear(1);
    await model().sink(0, { check: true });
    await model().sink(1, { check: true });
    const count = 20000;
    const args = ['forward', model().addresses[0], model().addresses[1], '--workers', '2'];
    if (stopWith === 'seconds') args.push('--seconds', '3');
    const run = await runIxy(args, {
      env: { IXY_PCI_ROOT: model().dir },
      onStart: async (child) => {
        await model().waitFor(1, (s) => s.txQueuesActive === 2, 10000);
        await model().source(0, { count, flows: 64 });
        await model().source(1, { count, flows: 64, proto: 'tcp' });
        if (stopWith === 'SIGINT') {
          await model().waitFor(0, (s) => s.sinkFrames === count, 10000);
          await model().waitFor(1, (s) => s.sinkFrames === count, 10000);
          child.kill('SIGINT');
        }
      },
    });
    assert.strictEqual(run.code, 0, run.stderr);
    const stats = await model().waitFor(0, (s) => !s.busMaster);
    const [a, b] = [stats, await model().stats(1)];
    for (const [s, address] of [[a, model().addresses[0]], [b, model().addresses[1]]]) {
      assert.strictEqual(s.sinkFrames, count, 'every frame forwarded (the source waits for room)');
      assert.strictEqual(s.sinkBadFrames, 0);
      assert.strictEqual(s.sinkFlowErrors, 0, 'each flow in order');
      assert.strictEqual(s.dmaAfterRelease, 0);
      const total = new RegExp(`\\[${address.replace(/\./g, '\\.')}\\] total RX \\d+ packets \\d+ bytes, TX (\\d+) packets`).exec(run.stdout);
      assert.ok(total, run.stdout);
      assert.strictEqual(Number(total[1]), count, 'the totals summed over the workers equal the model\'s');
    }
    assert.match(run.stdout, /per worker RX [1-9]\d* \+ [1-9]\d*/, 'both workers received');
  }

  it('ixy forward --workers 2 --seconds: every frame intact and each flow in order, totals summed over the workers', async () => {
    await forwardWithWorkers('seconds');
  });

  it('ixy forward --workers 2 stops cleanly on SIGINT with the totals', async () => {
    await forwardWithWorkers('SIGINT');
  });

  // Issue 34, 6 and 7 with worker threads: every frame received is in the totals, sent or
  // dropped (port 1 stops taking TX descriptors, then SIGINT comes), and a SIGINT during
  // the link wait ends the command with its totals and exit 0.
  it('ixy forward --workers 2: SIGINT during a TX stall counts the frames still on the rings as dropped, not sent', async () => {
    const [a, b] = model().addresses;
    await model().clear(0);
    await model().clear(1);
    let run;
    try {
      run = await runIxy(['forward', a, b, '--workers', '2'], {
        env: { IXY_PCI_ROOT: model().dir },
        onStart: async (child) => {
          // Traffic, the stall and SIGINT once both workers' TX queues are up: they must find
          // the forwarder running, not setting up.
          await model().waitFor(1, (s) => s.txQueuesActive === 2, 10000);
          await model().source(0, { rate: 20000, flows: 64 });
          await sleep(500);
          await model().stall(1, 10000);
          await sleep(1000);
          child.kill('SIGINT');
        },
      });
    } finally {
      await model().sourceOff(0);
    }
    const totals = await assertForwardAccounts(run, model(), a, b);
    assert.ok(totals[b].txDropped > 0, run.stdout);
  });

  it('ixy forward --workers 2: SIGINT during the link wait ends it with its totals and exit 0', async () => {
    await model().link(1, false);
    let run;
    try {
      run = await runIxy(['forward', ...model().addresses, '--workers', '2', '--link-timeout', '60000'], {
        env: { IXY_PCI_ROOT: model().dir },
        timeoutMs: 30000,
        onStart: (child) => setTimeout(() => child.kill('SIGINT'), 1500),
      });
    } finally {
      await model().link(1, true);
    }
    assert.deepStrictEqual({ code: run.code, signal: run.signal }, { code: 0, signal: null }, run.stderr);
    assert.deepStrictEqual(Object.keys(parseTotals(run.stdout)).sort(), [...model().addresses].sort(), run.stdout);
  });

  it('one owner per queue pair: a second is EBUSY, in another thread or this one, until the first closes', async () => {
    const dev = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2, workers: true });
    try {
      const handle = dev.workerHandle();
      const mine = ixy.attachQueue(handle, 0);
      await assert.rejects(inWorker('(ixy, h) => ixy.attachQueue(h, 0)', handle), (err) => err.code === 'EBUSY' && /queue pair 0 .* is owned by thread 0/.test(err.message));
      assert.throws(() => ixy.attachQueue(handle, 0), { code: 'EBUSY' });
      // Pair 1 is free: a worker takes it, moves nothing, gives it back.
      assert.deepStrictEqual(await inWorker('(ixy, h) => { const p = ixy.attachQueue(h, 1); const s = p.stats(); p.close(); return s; }', handle),
        { rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, rxDropped: 0, rxErrors: 0, txDropped: 0 });
      mine.close();
      ixy.attachQueue(handle, 0).close();
      assert.throws(() => ixy.attachQueue(handle, 2), { code: 'EINVAL' });
    } finally {
      dev.close();
    }
  });

  it('a worker that throws gives its queue pair back (try/finally) and the error to the main thread', async () => {
    const dev = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2, workers: true });
    try {
      await model().clear(0);
      await model().source(0, { count: 1000, flows: 8, vary: ['sport'] }); // flows on both queues
      const body = `(ixy, h) => {
        const pair = ixy.attachQueue(h, 0);
        try {
          const batch = new ixy.PacketBatch(32);
          for (let n = 0; n < 100;) { n += pair.rxBatch(batch); batch.release(); }
          throw new Error('worker failed on purpose');
        } finally { pair.close(); }
      }`;
      await assert.rejects(inWorker(body, dev.workerHandle()), /worker failed on purpose/);
      ixy.attachQueue(dev.workerHandle(), 0).close(); // free again
    } finally {
      dev.close();
    }
    const s = await model().waitFor(0, (x) => !x.busMaster); // the model scans every 0.5 ms
    assert.strictEqual(s.dmaAfterRelease, 0);
  });

  it('a worker that ends without close() still stops its queues before its memory goes', async () => {
    const dev = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2, workers: true });
    try {
      await model().clear(0);
      await model().source(0, { flows: 8, vary: ['sport'], rate: 200000 });
      const body = `(ixy, h) => {
        const pair = ixy.attachQueue(h, 0);
        const batch = new ixy.PacketBatch(32);
        for (let n = 0; n < 100;) { n += pair.rxBatch(batch); batch.release(); }
        throw new Error('no finally');
      }`;
      await assert.rejects(inWorker(body, dev.workerHandle()), /no finally/);
      await model().waitFor(0, (s) => !s.rxQueueActive && !s.rxQueueReleased, 2000);
      await sleep(100);
      assert.strictEqual((await model().stats(0)).dmaAfterRelease, 0);
      ixy.attachQueue(dev.workerHandle(), 0).close(); // the thread's end let go of it
    } finally {
      await model().sourceOff(0);
      dev.close();
    }
  });

  // Issue 46, 2: terminate() runs no JavaScript in the worker; the addon's teardown hook
  // stops the pair's queues before the worker's memory goes, and lets go of the pair.
  it('a worker ended by terminate() stops its queues: no DMA after release, and the pair attaches again', async () => {
    const dev = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2, workers: true });
    try {
      await model().clear(0);
      await model().source(0, { flows: 8, vary: ['sport'], rate: 200000 });
      const source = `const { parentPort, workerData } = require('worker_threads');
        const ixy = require(${JSON.stringify(LIB)});
        const pair = ixy.attachQueue(workerData, 0);
        const batch = new ixy.PacketBatch(32);
        let told = false;
        for (let n = 0; ; ) { // receives and sends back out until terminated
          const got = pair.rxBatch(batch);
          const sent = got > 0 ? pair.txBatch(batch) : 0;
          batch.freeFrom(sent);
          n += got;
          if (n > 1000 && !told) { told = true; parentPort.postMessage('busy'); }
        }`;
      const w = new Worker(source, { eval: true, workerData: dev.workerHandle() });
      const exited = new Promise((resolve) => w.once('exit', resolve));
      await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
      const before = await model().stats(0);
      assert.ok(before.rxQueueActive && before.txQueuesActive === 1, 'both queues of pair 0 were running');
      await w.terminate();
      await exited;
      await model().waitFor(0, (s) => !s.rxQueueActive && !s.rxQueueReleased && s.txQueuesActive === 0, 2000);
      await sleep(100);
      assert.strictEqual((await model().stats(0)).dmaAfterRelease, 0, 'no DMA into the terminated worker\'s memory');
      ixy.attachQueue(dev.workerHandle(), 0).close(); // its end let go of it
    } finally {
      await model().sourceOff(0);
      dev.close();
    }
  });

  // Issue 47, 5: the device's stats() total what its queue pairs moved, in whatever thread,
  // and each pair's stats() has its own RX queue's drops (QPRDC, mapped per queue by RQSMR).
  it('Device.stats() with workers totals what the workers received and sent; each pair has its queue\'s drops', async () => {
    // Queues that drop when full (worker queues hold by default): pair 0's unpolled ring
    // then drops its own frames instead of holding up pair 1's in the packet buffer.
    const dev = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2, workers: true, rxDropWhenFull: true });
    let w = null;
    let mine = null;
    try {
      await model().clear(0);
      const handle = dev.workerHandle();
      mine = ixy.attachQueue(handle, 0);
      const flag = new Int32Array(new SharedArrayBuffer(4));
      // Pair 1 in a worker: receives and sends back out until told, then looks once more.
      const source = `const { parentPort, workerData } = require('worker_threads');
        const ixy = require(${JSON.stringify(LIB)});
        const pair = ixy.attachQueue(workerData.handle, 1);
        const batch = new ixy.PacketBatch(32);
        parentPort.postMessage('attached');
        // Until told, then until its ring is empty: every frame the model delivered is sent on.
        for (let empty = 0; Atomics.load(workerData.flag, 0) === 0 || empty < 2;) {
          const got = pair.rxBatch(batch);
          empty = got > 0 ? 0 : empty + 1;
          if (got > 0) batch.freeFrom(pair.txBatch(batch));
        }
        for (let last = -1; pair.stats().rxDropped !== last;) { // a clear-on-read count may come in two reads
          last = pair.stats().rxDropped;
          Atomics.wait(workerData.flag, 0, 1, 50);
          pair.check();
        }
        pair.close();
        parentPort.postMessage(pair.stats());`;
      w = new Worker(source, { eval: true, workerData: { handle, flag } });
      const messages = [];
      const next = () => new Promise((resolve, reject) => {
        if (messages.length > 0) { resolve(messages.shift()); return; }
        w.once('message', resolve);
        w.once('error', reject);
      });
      await next();
      const count = 20000;
      await model().source(0, { count, flows: 8, vary: ['sport'], rate: 2000000 }); // pair 0 is not polled: its ring overflows
      await model().waitFor(0, (s) => s.rxDelivered + s.rxDropNoDesc === count, 20000);
      const batch = new ixy.PacketBatch(32);
      for (let idle = 0; idle < 20;) {
        const got = mine.rxBatch(batch);
        if (got === 0) { idle++; await sleep(1); continue; }
        idle = 0;
        batch.freeFrom(mine.txBatch(batch));
      }
      await sleep(100);
      Atomics.store(flag, 0, 1);
      const theirs = await next();
      const sent = mine.stats().txPackets + theirs.txPackets;
      const truth = await model().waitFor(0, (s) => s.txFrames === sent, 5000);
      let s = dev.stats();
      for (let i = 0; i < 50 && s.rxMissed !== truth.rxDropNoDesc; i++) { // a clear-on-read count may come in two reads
        await sleep(20);
        mine.check();
        s = dev.stats();
      }
      const ours = mine.stats();
      assert.strictEqual(s.rxPackets, ours.rxPackets + theirs.rxPackets, 'the frames the pairs received');
      assert.strictEqual(s.rxPackets, truth.rxDelivered);
      assert.strictEqual(s.txPackets, ours.txPackets + theirs.txPackets);
      assert.strictEqual(s.txPackets, truth.txFrames);
      assert.ok(ours.rxDropped > 0, 'pair 0 was not polled while the source ran');
      assert.strictEqual(s.rxMissed, truth.rxDropNoDesc, 'every drop is some queue\'s');
      assert.strictEqual(ours.rxDropped + theirs.rxDropped, truth.rxDropNoDesc);
      assert.deepStrictEqual(s.rxQueues.map((q) => q.dropped), [ours.rxDropped, theirs.rxDropped]);
    } finally {
      if (mine) mine.close();
      if (w) await w.terminate();
      await model().sourceOff(0);
      dev.close();
    }
  });

  it('refuses a handle of a device not open with workers, or not open in this process', async () => {
    const dev = await ixy.open(model().addresses[1]);
    try {
      assert.throws(() => dev.workerHandle(), { code: 'EINVAL' });
    } finally {
      dev.close();
    }
    const stale = { address: model().addresses[1], dir: path.join(model().dir, model().addresses[1]), backend: 'model', driver: 'ixgbe', owners: new Int32Array(new SharedArrayBuffer(256)), rxQueues: 1, txQueues: 1 };
    assert.throws(() => ixy.attachQueue(stale, 0), { code: 'ENODEV' });
    assert.throws(() => ixy.attachQueue({ address: 'x' }, 0), { code: 'EINVAL' });
  });
});
