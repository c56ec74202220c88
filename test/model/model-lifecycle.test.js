'use strict';
// Tests of the 82599 device model's lifecycle (native/model): DMA into released memory,
// drivers that die, and the model's own exit and clean-up.

const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');
const { Model } = require('../../lib/model');
const d = require('../support/model-driver');

const { hugepageBytes, hugepageMappings } = require('../support/helpers');

const HUGE_PAGE = 2 * 1024 * 1024;

describe('device model: lifecycle', function () {
  this.timeout(10000);

  // A raw driver in a child process sets up RX (256 descriptors, 255 free, none
  // refilled), optionally stops DMA (`stop`), then exits without cleaning up.
  async function driverExits(model, stop) {
    const script = `
      const d = require(${JSON.stringify(path.join(__dirname, '..', 'support', 'model-driver'))});
      (async () => {
        const model = JSON.parse(process.argv[1]);
        const dev = d.open(model, 0);
        const mem = d.dmaMemory();
        d.busMaster(dev, true);
        await d.readyRx(dev, mem);
        if (process.argv[2] === 'tx') {       // 10 frames queued while the model stalls TX
          await d.setupTx(dev, mem);
          for (let i = 0; i < 10; i++) d.txDesc(mem, i, 60);
          dev.write(d.R.TDT, 10);
        }
        if (process.argv[2] === 'rxdctl') dev.write(d.R.RXDCTL, dev.read(d.R.RXDCTL) & ~(1 << 25));
        if (process.argv[2] === 'rxen') dev.write(d.R.RXCTRL, 0);
        if (process.argv[2] === 'busmaster') d.busMaster(dev, false);
        await d.sleep(5);
        process.exit(0);
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const child = childProcess.spawn(process.execPath, ['-e', script, JSON.stringify({ dir: model.dir, addresses: model.addresses }), stop],
      { stdio: ['ignore', 'inherit', 'inherit'] });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.strictEqual(code, 0);
  }

  it('a NIC left running writes on into released memory: counted in dmaAfterRelease', async () => {
    const model = await Model.start({ ports: 1, config: ['source 0 rate=1000'] });
    try {
      await driverExits(model, 'none');
      const s = await model.waitFor(0, (x) => x.dmaOwnerPid === 0 && x.rxDropNoDesc > 0, 3000);
      assert.ok(s.dmaAfterRelease > 0, JSON.stringify(s));
      assert.strictEqual(s.rxQueueReleased, true);
      assert.strictEqual(s.rxQueueActive, false);
      assert.strictEqual(s.rxDelivered + s.dmaAfterRelease, 255, 'every free descriptor used once');
    } finally {
      await model.stop();
    }
  });

  it('counts TX descriptors it would fetch from released memory', async () => {
    const model = await Model.start({ ports: 1 });
    try {
      await model.stall(0, 1500);        // longer than the driver lives
      await driverExits(model, 'tx');
      const s = await model.waitFor(0, (x) => x.dmaOwnerPid === 0 && x.dmaAfterRelease === 10, 3000);
      assert.strictEqual(s.txFrames, 0);
      assert.strictEqual(s.txQueuesReleased, 1);
    } finally {
      await model.stop();
    }
  });

  for (const stop of ['rxdctl', 'rxen', 'busmaster']) {
    it(`no DMA after release when the driver stopped it first (${stop})`, async () => {
      const model = await Model.start({ ports: 1, config: ['source 0 rate=1000'] });
      try {
        await driverExits(model, stop);
        await model.waitFor(0, (x) => x.dmaOwnerPid === 0, 3000);
        await d.sleep(300);
        const s = await model.stats(0);
        assert.strictEqual(s.dmaAfterRelease, 0);
        if (stop !== 'rxen') assert.strictEqual(s.rxQueueReleased, false);
        assert.ok(s.rxDropDisabled > 0);
      } finally {
        await model.stop();
      }
    });
  }

  // Its hugepages, as this test can own them: what the child maps, what the model maps of
  // the child's files, and the child's files in /mnt/huge (the machine's free count is
  // everyone's). Once the child is gone and nothing maps its files, its pages are free.
  it('survives a driver killed mid-transfer and gives its hugepages back', async () => {
    const model = await Model.start({ ports: 1, config: ['source 0 rate=0'] });
    let child = null;
    try {
      child = childProcess.spawn(process.execPath,
        [path.join(__dirname, '..', 'support', 'model-child.js'), JSON.stringify({ dir: model.dir, addresses: model.addresses })],
        { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await new Promise((resolve, reject) => {
        child.stdout.once('data', resolve);
        child.once('exit', () => reject(new Error('driver child died')));
      });
      await model.waitFor(0, (s) => s.rxDelivered > 1000, 3000);
      assert.ok(hugepageBytes(child.pid) >= 5 * HUGE_PAGE, 'the driver holds its hugepages');
      assert.ok(hugepageMappings(model.pid, child.pid) > 0, 'the model maps the driver\'s pages for DMA');
      child.kill('SIGKILL');
      await exited;
      const end = Date.now() + 3000;
      while (hugepageMappings(model.pid, child.pid) > 0 && Date.now() < end) await d.sleep(20);
      assert.strictEqual(hugepageMappings(model.pid, child.pid), 0, 'the model still maps the dead driver\'s hugepages');
      assert.deepStrictEqual(fs.readdirSync('/mnt/huge').filter((f) => f.startsWith(`ixy-${child.pid}-`)), [], 'files of the driver left');
      const s = await model.stats(0);
      assert.strictEqual(s.dmaOwnerPid, 0);
      assert.strictEqual(s.rxQueueActive, false);
    } finally {
      if (child) child.kill('SIGKILL');
      await model.stop();
    }
  });

  it('exits and removes its files when the process that started it is killed', async () => {
    // A Node process starts a model and is killed with SIGKILL: no 'exit' handler runs.
    const script = `require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'model'))}).Model.start({ ports: 1 })` +
      '.then((m) => { console.log(JSON.stringify({ pid: m.pid, dir: m.dir })); setInterval(() => {}, 1000); });';
    const parent = childProcess.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let pid = null;
    try {
      const line = await new Promise((resolve) => parent.stdout.once('data', (b) => resolve(String(b))));
      const started = JSON.parse(line);
      pid = started.pid;
      assert.ok(fs.existsSync(started.dir));
      parent.kill('SIGKILL');
      const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
      for (let t = 0; t < 100 && (alive() || fs.existsSync(started.dir)); t++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!alive(), `model ${pid} still running`);
      assert.ok(!fs.existsSync(started.dir), `${started.dir} left behind`);
    } finally {
      parent.kill('SIGKILL');
      if (pid !== null) try { process.kill(pid, 'SIGKILL'); } catch { /* gone, as it should be */ }
    }
  });

  it('removes its files and socket on stop, and after SIGKILL via stop()', async () => {
    let model = await Model.start({ ports: 3 });
    assert.ok(fs.existsSync(model.socket));
    await model.stop();
    assert.ok(!fs.existsSync(model.dir));
    assert.ok(!fs.readFileSync('/proc/mounts', 'utf8').includes(model.dir));
    model = await Model.start({ ports: 1 });
    process.kill(model.pid, 'SIGKILL');
    await model.stop();
    assert.ok(!fs.existsSync(model.dir));
  });
});
