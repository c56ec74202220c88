'use strict';
// Tests of the 82599 device model (native/model): its command line, Model.attach, and the
// --device and --iommu options, through lib/model/index.js.

const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');
const { Model } = require('../lib/model');
const d = require('./support/model-driver');

const BIN = Model.binaryPath();

describe('device model: command line and device options', function () {
  this.timeout(10000);

  it('rejects bad arguments with one line and exit 2, leaving nothing', () => {
    for (const args of [['--ports', '9'], ['--bogus'], ['--config', 'source 7'], ['--device', '1234'],
      ['--device', '10fb,zz'], ['--iommu', 'bogus'], ['--config', 'source 0 size=13'], ['--config', 'source 0 udpsum=maybe']]) {
      const r = childProcess.spawnSync(BIN, args, { encoding: 'utf8' });
      assert.strictEqual(r.status, 2);
      assert.strictEqual(r.stdout, '');
      assert.match(r.stderr, /^ixy-model: .+\n$/);
      // its own directory only: other tests may start models meanwhile
      assert.ok(!fs.existsSync(`/dev/shm/ixy-model-${r.pid}`), `${args.join(' ')} left its directory`);
    }
  });

  it('run -- shows the ports at /sys/bus/pci/devices and returns the exit status', () => {
    let r = childProcess.spawnSync(BIN, ['run', '--', 'cat', '/sys/bus/pci/devices/0000:ff:00.0/vendor'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout, '0x8086\n');
    r = childProcess.spawnSync(BIN, ['run', '--', 'sh', '-c', 'ls /sys/bus/pci/devices; exit 3'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 3);
    assert.deepStrictEqual(r.stdout.trim().split('\n'), ['0000:ff:00.0', '0000:ff:00.1']);
    assert.ok(fs.readdirSync('/sys/bus/pci/devices').every((a) => !a.startsWith('0000:ff:')), 'host sysfs untouched');
  });

  it('--help prints the usage and exits 0', () => {
    const r = childProcess.spawnSync(BIN, ['--help'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: ixy-model \[--ports N\]/);
    assert.match(r.stdout, /--config "CMD; \.\."/);
    assert.strictEqual(r.stderr, '');
  });

  it('Model.attach(dir) reaches a running model from another process; stop() asks it to quit', async () => {
    const model = await Model.start({ ports: 2, config: ['source 1 rate=1000'] });
    try {
      const child = childProcess.spawnSync(process.execPath, ['-e', `
        const { Model } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'model'))});
        Model.attach(${JSON.stringify(model.dir)}).then(async (m) => {
          const s = await m.waitFor(1, (p) => p.rxOffered > 0, 5000);
          console.log(JSON.stringify({ pid: m.pid, addresses: m.addresses, mac: m.ports[1].mac, offered: s.rxOffered }));
          m.close(); // and the process ends by itself: an idle connection keeps nothing alive
        });`], { encoding: 'utf8', timeout: 10000 });
      assert.strictEqual(child.status, 0, child.stderr);
      const seen = JSON.parse(child.stdout);
      assert.deepStrictEqual([seen.pid, seen.addresses, seen.mac], [model.pid, model.addresses, model.ports[1].mac]);
      assert.ok(seen.offered > 0);

      const attached = await Model.attach(model.dir);
      await attached.stop();
      await model._exited;
      assert.ok(!fs.existsSync(model.dir), 'the model left its directory');
    } finally {
      await model.stop();
    }
    await assert.rejects(Model.attach(model.dir), { name: 'IxyError', code: 'ENOMODEL', message: /no device model answers at .*control\.sock/ });
  });

  it('start fails with the model error line', async () => {
    await assert.rejects(Model.start({ ports: 0 }), /ixy-model: --ports must be 1\.\.8/);
  });

  it('--device sets the device ID and the NVM link mode; the link needs that mode', async () => {
    const model = await Model.start({ ports: 2, device: ['10fc', '10fb'] });
    try {
      const dev = d.open(model, 0);
      const dev1 = d.open(model, 1);
      assert.strictEqual(fs.readFileSync(path.join(dev.dir, 'config')).readUInt16LE(2), 0x10fc);
      assert.strictEqual(fs.readFileSync(path.join(dev.dir, 'device'), 'utf8'), '0x10fc\n');
      assert.strictEqual(fs.readFileSync(path.join(dev1.dir, 'device'), 'utf8'), '0x10fb\n');
      assert.strictEqual((await model.stats(0)).deviceId, '10fc');
      await d.reset(dev);
      await d.reset(dev1);
      const lms = (x) => (x.read(d.R.AUTOC) >>> 13) & 7;
      assert.strictEqual(lms(dev), 1, '10fc: 10 GbE parallel (XAUI)');
      assert.strictEqual(lms(dev1), 3, '10fb: 10 GbE serial (SFI)');
      await d.linkUp(dev);                                  // LMS left alone: link
      // 10 GbE serial forced on the XAUI part: no link
      dev.write(d.R.AUTOC, (dev.read(d.R.AUTOC) & ~(7 << 13)) | (3 << 13) | (1 << 12));
      await d.sleep(100);
      assert.strictEqual(dev.read(d.R.LINKS) & (1 << 30), 0);
      assert.strictEqual((await model.stats(0)).linkUp, false);
      await d.linkUp(dev1);
    } finally {
      await model.stop();
    }
  });

  it('--iommu TYPE shows iommu_group/type in each port directory', async () => {
    let model = await Model.start({ ports: 2, iommu: 'DMA-FQ' });
    try {
      for (const a of model.addresses) {
        assert.strictEqual(fs.readFileSync(path.join(model.dir, a, 'iommu_group', 'type'), 'utf8'), 'DMA-FQ\n');
      }
    } finally {
      await model.stop();
    }
    model = await Model.start({ ports: 1 });
    try {
      assert.ok(!fs.existsSync(path.join(model.dir, model.addresses[0], 'iommu_group')));
    } finally {
      await model.stop();
    }
  });
});
