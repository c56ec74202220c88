'use strict';

// The device handle (issue 44): ixy.open() resolves a PCI address once into one object
// (directory, identity, backend) that the driver takes. The identity is read once, the
// backend is chosen once (sysfs, the model, VFIO), and the claim and the model's interrupt
// line live in the handle and go with close().
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ixy = require('../../lib');
const { resolveDevice, DeviceHandle } = require('../../lib/host/device-handle');
const { modelForSuite, fakePciDevice } = require('../support/helpers');

describe('the device handle', function () {
  this.timeout(30000);
  const model = modelForSuite(1);

  it('open() reads the identity files once each and hands the driver the handle', async function () {
    const opened = [];
    const openSync = fs.openSync;
    fs.openSync = function (file, ...rest) {
      if (typeof file === 'string' && /\/(vendor|device|class)$/.test(file)) opened.push(path.basename(file));
      return openSync.call(this, file, ...rest);
    };
    let dev;
    try {
      dev = await ixy.open(model().addresses[0]);
    } finally {
      fs.openSync = openSync;
    }
    try {
      assert.deepStrictEqual(opened.sort(), ['class', 'device', 'vendor']);
      assert.ok(dev.handle instanceof DeviceHandle);
      assert.strictEqual(dev.handle.address, dev.address);
      assert.deepStrictEqual([dev.handle.id.vendor, dev.handle.id.device], [0x8086, 0x10fb]);
      assert.strictEqual(dev.handle.backend.kind, 'model');
      assert.strictEqual(dev.hasInterrupts(), true);
      assert.notStrictEqual(dev.handle.claimFd, null, 'the claim is the handle\'s');
    } finally {
      dev.close();
    }
    assert.strictEqual(dev.handle.claimFd, null, 'close() ended the claim');
  });

  describe('the backend, chosen once from the device directory', function () {
    let tmp;
    let saved;

    beforeEach(function () {
      saved = process.env.IXY_PCI_ROOT;
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-handle-'));
      process.env.IXY_PCI_ROOT = path.join(tmp, 'bus', 'devices');
    });

    afterEach(function () {
      process.env.IXY_PCI_ROOT = saved;
      fs.rmSync(tmp, { recursive: true, force: true });
    });

    it('sysfs: no interrupts, root needed; bound to vfio-pci: VFIO, no root needed', function () {
      const address = '0000:01:00.0';
      const dev = path.join(tmp, 'bus', 'devices', address);
      fakePciDevice(dev, { device: '0x10c9', configBytes: 256 });
      const plain = resolveDevice(address);
      assert.deepStrictEqual([plain.backend.kind, plain.canInterrupt(), plain.backend.needsRoot], ['sysfs', false, true]);
      assert.strictEqual(plain.interruptLine(() => assert.fail('no set-up without a line')), null);
      fs.mkdirSync(path.join(tmp, 'bus', 'drivers', 'vfio-pci'), { recursive: true });
      fs.symlinkSync(path.join('..', '..', 'drivers', 'vfio-pci'), path.join(dev, 'driver'));
      const viaVfio = resolveDevice(address);
      assert.deepStrictEqual([viaVfio.backend.kind, viaVfio.canInterrupt(), viaVfio.backend.needsRoot], ['vfio', true, false]);
      assert.throws(() => viaVfio.mapBar(0, 4), { code: 'ENODEV' }, 'nothing through VFIO before take()');
      assert.throws(() => DeviceHandle.forWorker(viaVfio.workerData()), { code: 'EUNSUPPORTED' });
    });
  });
});
