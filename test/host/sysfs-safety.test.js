'use strict';

// The driver writes device files as root. A device directory that is not what sysfs makes
// (links planted in it, files of the wrong kind or size, malformed identity files) must be
// refused with a clear error before anything is written, and every file such a link points
// to must stay exactly as it was. Then the IOMMU check: translating IOMMU groups are refused
// before the device is touched.
const assert = require('assert');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const ixy = require('../../lib');
const pci = require('../../lib/host/pci');
const safety = require('../../lib/host/sysfs-safety');
const { resolveDevice } = require('../../lib/host/device-handle');
const { Model } = require('../../lib/model');
const { assertIxyError } = require('../support/helpers');

const ADDRESS = '0000:00:05.0';
const PAST = new Date('2001-02-03T04:05:06Z');

describe('device directories that are not what sysfs makes', function () {
  let tmp; // holds the fake root and the files an attacker would want written
  let root;
  let dev;

  beforeEach(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-sysfs-'));
    root = path.join(tmp, 'root');
    dev = path.join(root, ADDRESS);
    fs.mkdirSync(dev, { recursive: true });
    // An 82599 as far as its identity goes, with plain files everywhere.
    fs.writeFileSync(path.join(dev, 'vendor'), '0x8086\n');
    fs.writeFileSync(path.join(dev, 'device'), '0x10fb\n');
    fs.writeFileSync(path.join(dev, 'class'), '0x020000\n');
    fs.writeFileSync(path.join(dev, 'config'), Buffer.alloc(4096));
    fs.writeFileSync(path.join(dev, 'resource0'), Buffer.alloc(512 << 10));
    process.env.IXY_PCI_ROOT = root;
  });

  afterEach(function () {
    delete process.env.IXY_PCI_ROOT;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  // A file outside the device directory, dated in the past so that any write shows.
  function victim(name, content) {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, content);
    fs.utimesSync(file, PAST, PAST);
    return { file, content: Buffer.from(content) };
  }

  function assertUntouched({ file, content }) {
    assert.deepStrictEqual(fs.readFileSync(file), content, `${file} was written`);
    assert.strictEqual(fs.statSync(file).mtimeMs, PAST.getTime(), `${file} was written (mtime)`);
  }

  function replaceWithLink(name, target) {
    fs.rmSync(path.join(dev, name), { recursive: true, force: true });
    fs.symlinkSync(target, path.join(dev, name));
  }

  // Tries to open the fake device; returns what it threw. Checked after the files, so that
  // a driver that writes through a link fails on the write, whatever it throws later.
  async function openError() {
    try {
      (await ixy.open(ADDRESS, { linkTimeout: 100 })).close();
    } catch (err) {
      return err;
    }
    return null;
  }

  function assertRefused(err, code, pattern) {
    assert.ok(err, 'opened');
    assertIxyError(err, code, pattern);
  }

  async function refuses(code, pattern) {
    assertRefused(await openError(), code, pattern);
  }

  it('refuses a driver link that leads outside /sys/bus/pci/drivers, and writes no unbind file', async function () {
    const driver = path.join(tmp, 'not-a-driver');
    fs.mkdirSync(driver);
    const unbind = victim('not-a-driver/unbind', 'system file\n');
    replaceWithLink('driver', driver);
    const err = await openError();
    assertUntouched(unbind);
    assertRefused(err, 'EDEVFILE', /driver leads to .*not-a-driver, not to a driver in .*drivers: refusing/);
  });

  // Issue 34, 2: the fake tree is all a fake device may reach. The address is none this
  // machine has, so that a driver without the check writes only what the kernel refuses.
  describe('links that leave the tree IXY_PCI_ROOT names', function () {
    const NOWHERE = '0000:ee:1f.7';
    let fake;

    beforeEach(function () {
      fake = path.join(root, NOWHERE);
      fs.renameSync(dev, fake);
    });

    it('refuses a driver link into the real /sys/bus/pci/drivers, before the unbind write', async function () {
      const real = fs.readdirSync('/sys/bus/pci/drivers').find((d) => fs.existsSync(path.join('/sys/bus/pci/drivers', d, 'unbind')));
      if (!real) this.skip();
      fs.symlinkSync(path.join('/sys/bus/pci/drivers', real), path.join(fake, 'driver'));
      assert.throws(() => safety.unbindDriver(NOWHERE, pci.deviceDir(NOWHERE), true), (err) => {
        assertIxyError(err, 'EDEVFILE', new RegExp(`driver leads to /sys/bus/pci/drivers/${real}, outside ${tmp} where IXY_PCI_ROOT points`));
        return true;
      });
    });

    it('refuses a device directory that is a link to a real device', function () {
      const real = fs.readdirSync('/sys/bus/pci/devices')[0];
      if (!real) this.skip();
      fs.rmSync(fake, { recursive: true });
      fs.symlinkSync(path.join('/sys/bus/pci/devices', real), fake);
      assert.throws(() => pci.readIdentity(NOWHERE), (err) => {
        assertIxyError(err, 'EDEVFILE', /0000:ee:1f\.7 leads to \/sys\/devices\/.*, outside .* where IXY_PCI_ROOT points/);
        return true;
      });
    });

    it('refuses an iommu_group that leads out of the tree, whatever type it shows', function () {
      const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-group-'));
      try {
        fs.writeFileSync(path.join(elsewhere, 'type'), 'identity\n');
        fs.symlinkSync(elsewhere, path.join(fake, 'iommu_group'));
        assert.throws(() => safety.checkIommu(NOWHERE, pci.deviceDir(NOWHERE)), (err) => {
          assertIxyError(err, 'EDEVFILE', /iommu_group leads to .*ixy-group-.*, outside .* where IXY_PCI_ROOT points/);
          return true;
        });
      } finally {
        fs.rmSync(elsewhere, { recursive: true, force: true });
      }
    });

    it('takes no interrupt line through a control.sock that is a link to another socket', async function () {
      const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-socket-'));
      const heard = [];
      const server = net.createServer((c) => c.on('data', (d) => heard.push(String(d))));
      try {
        await new Promise((resolve) => server.listen(path.join(elsewhere, 'some-service.sock'), resolve));
        fs.symlinkSync(path.join(elsewhere, 'some-service.sock'), path.join(root, 'control.sock'));
        const handle = resolveDevice(NOWHERE);
        assert.strictEqual(handle.backend.kind, 'sysfs');
        assert.strictEqual(handle.canInterrupt(), false);
        assert.strictEqual(handle.interruptLine(() => {}), null);
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.deepStrictEqual(heard, [], 'a line was sent to the socket the link leads to');
      } finally {
        server.close();
        fs.rmSync(elsewhere, { recursive: true, force: true });
      }
    });
  });

  it('refuses driver/unbind when it is a link', async function () {
    const target = victim('passwd', 'root:x:0:0::/root:/bin/sh\n');
    fs.mkdirSync(path.join(dev, 'driver'));
    fs.symlinkSync(target.file, path.join(dev, 'driver', 'unbind'));
    const err = await openError();
    assertUntouched(target);
    assertRefused(err, 'EDEVFILE', /unbind is a symbolic link/);
  });

  it('refuses config when it is a link, and writes nothing through it', async function () {
    const target = victim('config-copy', Buffer.alloc(4096));
    replaceWithLink('config', target.file);
    const err = await openError();
    assertUntouched(target);
    assertRefused(err, 'EDEVFILE', /config is a symbolic link/);
  });

  it('refuses resource0 when it is a link, and maps nothing through it', async function () {
    const target = victim('resource-copy', Buffer.alloc(512 << 10));
    replaceWithLink('resource0', target.file);
    const err = await openError();
    assertUntouched(target);
    assertRefused(err, 'EDEVFILE', /resource0 is a symbolic link/);
  });

  it('refuses a resource0 smaller than the registers ixgbe touches', async function () {
    fs.writeFileSync(path.join(dev, 'resource0'), Buffer.alloc(4096));
    await refuses('EDEVFILE', /resource0 has 4096 bytes, fewer than the 131072/);
  });

  it('refuses a resource0 that is not a regular file (a FIFO)', async function () {
    fs.rmSync(path.join(dev, 'resource0'));
    execFileSync('mkfifo', [path.join(dev, 'resource0')]);
    await refuses('EDEVFILE', /resource0 is not a regular file/);
  });

  it('refuses identity files that are links', async function () {
    const target = victim('vendor-elsewhere', '0x8086\n');
    replaceWithLink('vendor', target.file);
    const err = await openError();
    assertUntouched(target);
    assertRefused(err, 'EDEVFILE', /vendor is a symbolic link/);
  });

  for (const [name, text] of [['vendor', '0x8086 and more\n'], ['device', '0x10FB\n'], ['device', '10fb\n'], ['class', '0x0200\n'], ['class', '0x020000\n\n']]) {
    it(`refuses a malformed ${name} file (${JSON.stringify(text)}) as ENODEV`, async function () {
      fs.writeFileSync(path.join(dev, name), text);
      await refuses('ENODEV', new RegExp(`${name} is malformed .*sysfs writes 0x and ${name === 'class' ? 6 : 4} lower-case hex digits`));
    });
  }

  it('follows a device directory that is itself a link, as /sys/bus/pci/devices/X is', function () {
    const real = path.join(tmp, 'devices', 'pci0000:00', ADDRESS);
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.renameSync(dev, real);
    fs.symlinkSync(real, dev);
    assert.deepStrictEqual(pci.readIdentity(ADDRESS), { address: ADDRESS, vendor: 0x8086, device: 0x10fb, class: 0x020000 });
    assert.strictEqual(pci.deviceDir(ADDRESS), real);
  });

  it('unbinds through a driver link to a real directory inside the device directory', function () {
    fs.mkdirSync(path.join(dev, 'drivers-here', 'ixgbe'), { recursive: true });
    fs.writeFileSync(path.join(dev, 'drivers-here', 'ixgbe', 'unbind'), '');
    fs.symlinkSync('drivers-here/ixgbe', path.join(dev, 'driver'));
    safety.unbindDriver(ADDRESS, pci.deviceDir(ADDRESS));
    assert.strictEqual(fs.readFileSync(path.join(dev, 'drivers-here', 'ixgbe', 'unbind'), 'utf8'), ADDRESS);
  });

  it('the minimum BAR sizes cover every register each driver names', function () {
    for (const [driver, maxQueues] of [['ixgbe', 64], ['igb', 16]]) {
      const R = require(`../../lib/intel/${driver}/registers`);
      let highest = 0;
      for (const [name, value] of Object.entries(R)) {
        // Registers are upper-case names (bits carry an underscore, CTRL_EXT aside) or
        // functions of a queue or table index.
        if (typeof value === 'function') {
          for (let i = 0; i < maxQueues; i++) highest = Math.max(highest, value(i));
        } else if (typeof value === 'number' && (/^[A-Z0-9]+$/.test(name) || name === 'CTRL_EXT')) {
          highest = Math.max(highest, value);
        }
      }
      assert.ok(highest + 4 <= R.MIN_BAR_BYTES, `${driver}: register at 0x${highest.toString(16)} beyond the minimum BAR of ${R.MIN_BAR_BYTES}`);
      assert.ok(R.MIN_BAR_BYTES / 2 < highest + 4, `${driver}: the minimum is not the next power of two`);
    }
  });
});

describe('the IOMMU check', function () {
  let model = null;

  afterEach(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
    model = null;
  });

  // A one-port model whose port shows iommu_group/type = `type`: the model's --iommu option
  // where it has one, else the file written into the port directory before opening.
  async function modelBehindIommu(type) {
    try {
      model = await Model.start({ ports: 1, iommu: type });
    } catch {
      model = await Model.start({ ports: 1 });
    }
    const group = path.join(model.dir, model.addresses[0], 'iommu_group');
    if (!fs.existsSync(path.join(group, 'type'))) {
      fs.mkdirSync(group, { recursive: true });
      fs.writeFileSync(path.join(group, 'type'), `${type}\n`);
    }
    process.env.IXY_PCI_ROOT = model.dir;
    return path.join(model.dir, model.addresses[0]);
  }

  for (const type of ['DMA', 'DMA-FQ']) {
    it(`refuses a device in a ${type} group before touching it`, async function () {
      const dir = await modelBehindIommu(type);
      const unbind = path.join(dir, 'driver', 'unbind');
      fs.utimesSync(unbind, PAST, PAST);
      const config = fs.readFileSync(path.join(dir, 'config'));
      await assert.rejects(ixy.open(model.addresses[0]), (err) => {
        assert.strictEqual(err.code, 'EIOMMU', err.stack);
        assert.match(err.message, new RegExp(`IOMMU in "${type}" mode .*vfio-pci.*iommu=pt`));
        assert.ok(!err.message.includes('\n'), 'one line');
        return true;
      });
      assert.deepStrictEqual(fs.readFileSync(path.join(dir, 'config')), config, 'config space written');
      assert.strictEqual(fs.statSync(unbind).mtimeMs, PAST.getTime(), 'driver unbound');
      const s = await model.stats(0);
      assert.strictEqual(s.busMaster, false);
    });
  }

  it('opens a device in an identity (passthrough) group', async function () {
    await modelBehindIommu('identity');
    const dev = await ixy.open(model.addresses[0]);
    try {
      assert.strictEqual(dev.linkSpeed, 10000);
    } finally {
      dev.close();
    }
  });
});
