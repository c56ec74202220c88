'use strict';

// Idle loops sleep (lib/device/idle.js): with `idle: 'backoff'` or 'interrupt' (the default on the
// model and through VFIO) a loop whose queues stay empty sleeps in the event loop instead of
// polling a core away, and the first frames
// after idleness bring it back to full polling without losing any. The CPU bound here is
// coarse (a functional check that the loop does not spin, far above what backoff costs,
// far below a spinning core); the figures are measured by bench/idle.js.
const assert = require('assert');
const fs = require('fs');
const ixy = require('../../lib/index');
const { cpuShare, modelForSuite } = require('../support/helpers');
const { runLoop } = require('../../lib/loop');
const { bestIdle } = require('../../lib/device/idle');

const IDLE_CPU_BOUND = 0.3; // of one core

// A device whose one RX queue has `pending` frames to take, `batch` at a time, and counts
// what it took in `packets`, as a driver's queue does.
function standInDevice() {
  const q = { packets: 0, pending: 0 };
  q.take = (batch) => {
    const n = Math.min(q.pending, batch);
    q.pending -= n;
    q.packets += n;
    return n;
  };
  return { address: 'stand-in', rxQueues: [q], txQueues: [], check: () => [], stats: () => ({}) };
}

describe('idle: the run loop of the commands', function () {
  this.timeout(20000);

  it("with idle 'backoff' and no traffic, uses far less than a core", async function () {
    const dev = standInDevice();
    const share = await cpuShare(() => runLoop({
      devices: [dev], seconds: 2.5, report: false, out: { write() {} }, idle: 'backoff',
      step: () => dev.rxQueues[0].take(32) < 0,
    }));
    assert.ok(share < IDLE_CPU_BOUND, `${(share * 100).toFixed(1)}% of a core`);
  });

  it('frames that come after a second of idleness are all taken, by full polling again', async function () {
    const dev = standInDevice();
    const q = dev.rxQueues[0];
    // Steps in one run of the loop without the event loop in between: 1 while it sleeps
    // (a step per timer), many while it polls (a slice of steps per turn).
    let run = 0;
    let longestRun = 0;
    let counting = false;
    const endOfRun = () => {
      longestRun = Math.max(longestRun, run);
      run = 0;
      counting = false;
    };
    let arrived = false;
    setTimeout(() => {
      assert.strictEqual(q.packets, 0);
      q.pending = 100000;
      arrived = true;
      longestRun = 0; // what counts is how it polls from here on
    }, 1000);
    const reason = await runLoop({
      devices: [dev], report: false, out: { write() {} },
      step: () => {
        if (!counting) {
          counting = true;
          setImmediate(endOfRun);
        }
        run++;
        q.take(32);
        return arrived && q.pending === 0;
      },
    });
    endOfRun(); // the run that ended the loop, whose setImmediate has not come yet
    assert.strictEqual(reason, 'done');
    assert.strictEqual(q.packets, 100000);
    assert.ok(longestRun > 100, `at most ${longestRun} steps in one turn of the event loop after the frames came`);
  });

  it('an unknown idle mode is EINVAL', async function () {
    const args = { devices: [], step: () => true, report: false, out: { write() {} } };
    await assert.rejects(runLoop({ ...args, idle: 'sleep' }), { code: 'EINVAL', message: /^idle must be 'spin', 'backoff' or 'interrupt', got 'sleep'/ });
    assert.strictEqual(await runLoop({ ...args, idle: 'spin' }), 'done');
  });
});

// The same tests for both ways of sleeping on the model: timers ('backoff') and the model's
// interrupts, delivered through an eventfd as VFIO delivers them ('interrupt',
// lib/host/model-irq.js).
for (const mode of ['backoff', 'interrupt']) {
  describe(`idle: receive() on the model, idle '${mode}'`, function () {
    this.timeout(30000);
    const model = modelForSuite(1);

    it('with no traffic, sleeps: far less than a core', async function () {
      const dev = await ixy.open(model().addresses[0], { idle: mode });
      try {
        const stop = new AbortController();
        setTimeout(() => stop.abort(), 2500);
        let frames = 0;
        const share = await cpuShare(async () => {
          for await (const batch of dev.receive(0, { signal: stop.signal })) frames += batch.count;
        });
        assert.strictEqual(frames, 0);
        assert.ok(share < IDLE_CPU_BOUND, `${(share * 100).toFixed(1)}% of a core`);
      } finally {
        dev.close();
      }
    });

    // Issue 46, 11: the abort only marked the loop finished, which it saw when its sleep ended:
    // up to the interrupt wait's safety timeout (hundreds of ms) in 'interrupt'.
    it('aborting an idle receive() ends it at once, asleep or not', async function () {
      const dev = await ixy.open(model().addresses[0], { idle: mode });
      try {
        // Less the time this thread waited for a CPU meanwhile (a busy machine's, not the loop's).
        const cpuWaitMs = () => Number(fs.readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1e6;
        const took = [];
        for (let round = 0; round < 3; round++) {
          const stop = new AbortController();
          let abortedAt = 0;
          let waited = 0;
          setTimeout(() => { abortedAt = performance.now(); waited = cpuWaitMs(); stop.abort(); }, 700); // long asleep by then
          for await (const batch of dev.receive(0, { signal: stop.signal })) assert.strictEqual(batch.count, 0);
          took.push(performance.now() - abortedAt - (cpuWaitMs() - waited));
        }
        assert.ok(Math.max(...took) < 100, `the loop ended ${took.map((ms) => ms.toFixed(1)).join(', ')} ms after the abort`);
      } finally {
        dev.close();
      }
    });

    it('frames that start after a second of idleness all arrive, in order', async function () {
      // open()'s idle is the default of its receive() loops.
      const dev = await ixy.open(model().addresses[0], { idle: mode, rxRingSize: 512 });
      const FRAMES = 20000;
      try {
        await model().command('clear 0');
        setTimeout(() => model().source(0, { rate: 20000, count: FRAMES }), 1000);
        let frames = 0;
        let outOfOrder = 0;
        // Ends the loop should frames be missing (the asserts below then say which): a
        // second after the model has offered them all, however long a busy machine made
        // that take.
        const stop = new AbortController();
        const watching = (async () => {
          const end = Date.now() + 25000;
          while (!stop.signal.aborted && Date.now() < end) {
            if ((await model().stats(0)).rxOffered === FRAMES) break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          setTimeout(() => stop.abort(), 1000);
        })();
        for await (const batch of dev.receive(0, { signal: stop.signal })) {
          for (let i = 0; i < batch.count; i++) {
            const d = batch.data(i);
            const seq = ixy.packet.readSeq(d);
            if (seq !== frames) outOfOrder++;
            frames++;
          }
          if (frames >= FRAMES) break;
        }
        stop.abort();
        await watching;
        const [port] = await model().stats();
        assert.strictEqual(port.rxDropNoDesc, 0, `frames that found no descriptor while the loop slept; model: ${JSON.stringify(port)}`);
        assert.strictEqual(frames, FRAMES);
        assert.strictEqual(outOfOrder, 0);
      } finally {
        dev.close();
      }
    });
  });
}

describe("idle: interrupts from the model (idle 'interrupt' on the host)", function () {
  this.timeout(30000);
  const model = modelForSuite(1);

  it("is the default on the model: the run loop and receive() sleep on the model's interrupts", async function () {
    const dev = await ixy.open(model().addresses[0]);
    try {
      assert.strictEqual(bestIdle([dev]), 'interrupt');
      const line = dev.interrupts();
      const seen = line.count;
      setTimeout(() => model().source(0, { count: 1 }), 300);
      for await (const batch of dev.receive(0, { signal: AbortSignal.timeout(5000) })) if (batch.count > 0) break;
      assert.ok(line.count > seen, 'the frame woke the loop through the eventfd');
      assert.ok((await model().stats(0)).interrupts[0] >= 1);
    } finally {
      dev.close();
    }
  });

  it('a frame after the safety timeout still wakes the loop by its interrupt', async function () {
    // After INTERRUPT_SAFETY_MS (1 s) the loop polls once and arms again; the vector must
    // be unmasked then, or the frame waits for the next timeout, uncounted by the line.
    const dev = await ixy.open(model().addresses[0], { idle: 'interrupt' });
    try {
      const line = dev.interrupts();
      let seen = -1;
      setTimeout(() => {
        seen = line.count;
        model().source(0, { count: 1 });
      }, 2500);
      let frames = 0;
      for await (const batch of dev.receive(0, { signal: AbortSignal.timeout(6000) })) {
        frames += batch.count;
        if (frames > 0) break;
      }
      assert.strictEqual(frames, 1);
      assert.ok(line.count > seen, `woken by the safety timeout, not by an interrupt (line count ${line.count}, ${seen} before the frame)`);
    } finally {
      dev.close();
    }
  });

  it('its eventfd goes back to the model when the device closes, and a new one works after', async function () {
    for (let round = 0; round < 2; round++) {
      const dev = await ixy.open(model().addresses[0], { idle: 'interrupt' });
      try {
        const line = dev.interrupts();
        const seen = line.count;
        setTimeout(() => model().source(0, { count: 1 }), 200);
        for await (const batch of dev.receive(0, { signal: AbortSignal.timeout(5000) })) if (batch.count > 0) break;
        assert.ok(line.count > seen, `round ${round}`);
      } finally {
        dev.close();
      }
    }
  });

  it('the irqfd command wants an fd with the line, a known address and a vector', async function () {
    const bad = ['irqfd 0000:ff:00.0 0', 'irqfd 0000:99:00.0 0 off', 'irqfd 0000:ff:00.0 16 off', 'irqfd 0000:ff:00.0 x off', 'irqfd 0000:ff:00.0 0 on'];
    for (const line of bad) {
      await assert.rejects(model().command(line.replace('0000:ff:00.0', model().addresses[0])), /irqfd|usage/, line);
    }
    await model().command(`irqfd ${model().addresses[0]} 0 off`);
  });
});

describe("idle: 'interrupt' where there are none", function () {
  this.timeout(30000);
  const { Model } = require('../../lib/model/index');
  const os = require('os');
  const path = require('path');
  let model = null;
  // A model whose control socket lies elsewhere: its devices are not known as the model's,
  // as a device under sysfs not bound to vfio-pci.
  before(async function () {
    model = await Model.start({ ports: 1, args: ['--socket', path.join(os.tmpdir(), `ixy-idle-${process.pid}.sock`)] });
    process.env.IXY_PCI_ROOT = model.dir;
  });
  after(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
  });

  it("open(), receive() and the run loop refuse 'interrupt' for a device without interrupts, and an unknown mode", async function () {
    await assert.rejects(ixy.open(model.addresses[0], { idle: 'interrupt' }), { code: 'EUNSUPPORTED', message: /VFIO.*ixy bind/ });
    const dev = await ixy.open(model.addresses[0]);
    try {
      assert.strictEqual(bestIdle([dev]), 'backoff');
      assert.throws(() => dev.receive(0, { idle: 'interrupt' }), { code: 'EUNSUPPORTED', message: /VFIO.*ixy bind/ });
      await assert.rejects(runLoop({ devices: [dev], step: () => true, report: false, idle: 'interrupt' }), { code: 'EUNSUPPORTED', message: /VFIO/ });
      assert.throws(() => dev.receive(0, { idle: 'nap' }), { code: 'EINVAL', message: /got 'nap'/ });
    } finally {
      dev.close();
    }
  });
});

// The interrupt line's own logic, with the backend played by the test: one eventfd (here
// /dev/null) and a watcher the test fires by hand.
describe('idle: the interrupt line', function () {
  const nativePath = require.resolve('../../lib/host/native');
  const linePath = require.resolve('../../lib/host/interrupts');
  let watcher = null;
  let InterruptLine;
  const source = () => ({ eventFd: fs.openSync('/dev/null', 'r'), release: () => {} });
  const saved = { native: require.cache[nativePath], line: require.cache[linePath] };

  before(function () {
    const fake = {
      FdWatcher: class {
        constructor(fd, onSignal) {
          this.onSignal = onSignal;
          this.watching = false;
          watcher = this;
        }

        start() { this.watching = true; }

        stop() { this.watching = false; }

        close() { this.watching = false; }
      },
    };
    delete require.cache[linePath];
    require.cache[nativePath] = { id: nativePath, filename: nativePath, loaded: true, exports: { native: () => fake } };
    ({ InterruptLine } = require(linePath));
  });

  after(function () {
    for (const [file, entry] of [[nativePath, saved.native], [linePath, saved.line]]) {
      if (entry === undefined) delete require.cache[file];
      else require.cache[file] = entry;
    }
  });

  it('two loops waiting on one line are both woken by its interrupt', async function () {
    const line = new InterruptLine(source());
    try {
      const first = line.wait(5000);
      const second = line.wait(5000);
      assert.ok(watcher.watching, 'the line watches its eventfd while waited on');
      watcher.onSignal();
      const woken = await Promise.race([Promise.all([first, second]), new Promise((r) => setTimeout(() => r('hung'), 1000))]);
      assert.deepStrictEqual(woken, [true, true]);
      assert.strictEqual(line.count, 1);
      assert.ok(!watcher.watching, 'and stops watching once nobody waits');
    } finally {
      line.close();
    }
  });

  it('a wait that times out resolves false, and cancel() ends every wait', async function () {
    const line = new InterruptLine(source());
    try {
      assert.strictEqual(await line.wait(10), false);
      const a = line.wait(5000);
      const b = line.wait(5000);
      line.cancel();
      assert.deepStrictEqual(await Promise.all([a, b]), [false, false]);
    } finally {
      line.close();
    }
  });
});

describe('idle: receive() on a device closed by the loop body', function () {
  const { ReceiveIterator } = require('../../lib/device/receive-iterator');

  it("ends the loop instead of arming a closed device's interrupt", async function () {
    // A device whose one RX queue yields one frame, then nothing; arming it once closed
    // throws, as a write to its unmapped registers would.
    const dev = {
      closed: false,
      options: {},
      rxQueues: [{ receive: () => 1 }],
      checkQueue() {},
      interrupts: () => ({ wait: () => new Promise(() => {}), cancel() {} }),
      interruptLines() { return [this.interrupts()]; }, // Device's: the one line
      armInterrupt() {
        if (this.closed) throw new TypeError("Cannot set properties of null (setting '...')");
      },
      disarmInterrupt() {},
    };
    const it = new ReceiveIterator(dev, 0, { idle: 'interrupt' });
    assert.strictEqual((await it.next()).done, false);
    dev.rxQueues[0].receive = () => 0;
    dev.closed = true; // the loop body closes the device and takes a while
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual((await it.next()).done, true);
  });
});
