'use strict';

// Issue 46, 3: `ixy forward --workers` is watched as the single-thread command is: link
// lines, TX-hang recovery (by the worker that owns the queue), a removed port ends it with
// EDEVICELOST after the totals; and its workers nap between bursts ('backoff', their
// default) instead of spinning on rings they have just emptied.
const assert = require('assert');
const { assertForwardAccounts, modelForSuite, runIxy } = require('../support/helpers');
const { parseTotals } = require('../../lib/apps/demo/frame-account');
const { Napper, workerIdle } = require('../../lib/loop/worker-loop');
const { sleep } = require('../../lib/host/register-access');

describe('ixy forward --workers: the device watch and the idle modes', function () {
  this.timeout(60000);
  const model = modelForSuite(2);
  const env = () => ({ IXY_PCI_ROOT: model().dir });
  const started = () => model().waitFor(1, (s) => s.txQueuesActive === 2, 10000);

  it('tells link changes as the single thread does', async () => {
    const run = await runIxy(['forward', ...model().addresses, '--workers', '2'], {
      env: env(),
      onStart: async (child) => {
        await started();
        await model().link(1, false);
        await sleep(1500);
        await model().link(1, true);
        await sleep(1500);
        child.kill('SIGINT');
      },
    });
    assert.strictEqual(run.code, 0, run.stderr);
    const b = model().addresses[1];
    assert.ok(run.stdout.includes(`[${b}] link down\n`), run.stdout);
    assert.ok(run.stdout.includes(`[${b}] link up at 10000 Mb/s\n`), run.stdout);
  });

  it('a hung TX queue is reset by its worker, told, and its frames counted as dropped', async () => {
    const [a, b] = model().addresses;
    await model().clear(0);
    await model().clear(1);
    let run;
    try {
      run = await runIxy(['forward', a, b, '--workers', '2'], {
        env: env(),
        onStart: async (child) => {
          await started();
          await model().source(0, { rate: 20000, flows: 64 });
          await sleep(500);
          await model().stall(1, 6000); // found 2 to 3 s into the stall
          await sleep(5000);
          await model().sourceOff(0);
          await model().stall(1, 0);
          await sleep(500);
          child.kill('SIGINT');
        },
      });
    } finally {
      await model().sourceOff(0);
    }
    assert.match(run.stdout, new RegExp(`\\[${b.replace(/\./g, '\\.')}\\] TX queue [01] hung \\(frames pending, none sent for 2 s with the link up\\): reset it, [1-9]\\d* frames dropped`), run.stdout);
    const totals = await assertForwardAccounts(run, model(), a, b);
    assert.ok(totals[b].txDropped > 0, run.stdout);
  });

  it("--idle interrupt with workers on the model: one line and exit 1, as on every device the kernel does not fill; a bad mode is EINVAL", async () => {
    const run = await runIxy(['forward', ...model().addresses, '--workers', '2', '--idle', 'interrupt'], { env: env() });
    assert.strictEqual(run.code, 1);
    assert.match(run.stderr, /^ixy: idle 'interrupt' is not offered with workers on devices ixy drives itself .*AF_XDP/);
    assert.strictEqual(run.stderr.trim().split('\n').length, 1, run.stderr);
    assert.strictEqual(workerIdle(undefined), 'backoff');
    assert.throws(() => workerIdle('interrupt'), { code: 'EUNSUPPORTED' });
    assert.throws(() => workerIdle('nap'), { code: 'EINVAL' });
    // Where the kernel fills every device's rings (AF_XDP) it is offered, and the default.
    assert.strictEqual(workerIdle(undefined, true), 'interrupt');
    assert.strictEqual(workerIdle('interrupt', true), 'interrupt');
    assert.strictEqual(workerIdle('backoff', true), 'backoff');
    assert.throws(() => workerIdle('nap', true), { code: 'EINVAL' });
  });

  it('a backoff worker naps between partial batches, never longer than half of what its ring holds', async () => {
    const napper = new Napper({ batchSize: 32, ringHold: 384 });
    const bound = (384 / 1e6) * 1000 * 0.5; // ms, at the 1 Mpps the bound assumes at least
    assert.strictEqual(napper.after(32), 0, 'a full batch: poll again at once');
    let naps = 0;
    const end = performance.now() + 30;
    while (performance.now() < end) {
      const nap = napper.after(4); // frames trickle in: 4 every 20 us at most, 200 kpps
      for (const t = performance.now() + 0.02; performance.now() < t;) { /* the next 4 frames' time */ }
      assert.ok(nap <= bound + 1e-9, `nap ${nap} ms`);
      if (nap > 0) naps++;
    }
    assert.ok(naps > 0, 'it napped while frames came in small numbers');
    const idleEnd = performance.now() + 30;
    let last = 0;
    while (performance.now() < idleEnd) last = napper.after(0);
    assert.ok(last > 0 && last <= bound + 1e-9, `idle nap ${last} ms`);
  });
  it('rxDropWhenFull: worker queues hold by default (forward and pcap --workers pass nothing), several queues of one thread drop; either when asked, EINVAL otherwise', async () => {
    const ixy = require('../../lib');
    const R = require('../../lib/intel/ixgbe/registers');
    const dropEn = async (options) => {
      const dev = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2, workers: true, ...options });
      try {
        const pair = ixy.attachQueue(dev.workerHandle(), 1);
        const bit = (pair.regs[R.SRRCTL(1) >> 2] & R.SRRCTL_DROP_EN) !== 0;
        pair.close();
        return bit;
      } finally {
        dev.close();
      }
    };
    assert.strictEqual(await dropEn({}), false);
    assert.strictEqual(await dropEn({ rxDropWhenFull: true }), true);
    assert.strictEqual(await dropEn({ rxDropWhenFull: false }), false);
    const single = await ixy.open(model().addresses[0], { rxQueues: 2, txQueues: 2 });
    try {
      assert.strictEqual((single.regs[R.SRRCTL(1) >> 2] & R.SRRCTL_DROP_EN) !== 0, true);
    } finally {
      single.close();
    }
    await assert.rejects(ixy.open(model().addresses[0], { rxDropWhenFull: 'no' }), { code: 'EINVAL', message: /rxDropWhenFull must be true or false/ });
  });

  // Last: a removed port stays removed in this suite's model.
  it('a removed port ends it with EDEVICELOST (one line, exit 1) after the totals', async () => {
    const run = await runIxy(['forward', ...model().addresses, '--workers', '2'], {
      env: env(),
      timeoutMs: 30000,
      onStart: async () => {
        await started();
        await sleep(500);
        await model().command('remove 1');
      },
    });
    assert.strictEqual(run.code, 1, run.stdout);
    assert.match(run.stderr, /^ixy: 0000:ff:00\.1 stopped answering \(its registers read all ones\): the NIC was removed, powered off or reset by someone else\n$/);
    assert.deepStrictEqual(Object.keys(parseTotals(run.stdout)).sort(), [...model().addresses].sort(), run.stdout);
  });
});
