'use strict';

// `ixy bind` and `ixy unbind` (issue 23) against a fake sysfs tree: what they write to
// driver/unbind, driver_override and drivers_probe, in which order, and what they refuse
// (a missing driver, a NIC in use by the kernel or held by an ixy process, a driver that
// did not take the device). test/support/fake-kernel.js plays the kernel's part of each write.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { bind, unbind } = require('../../lib/rebind');
const fakeKernel = require('../support/fake-kernel');
const { assertIxyError, runIxy, fakePciDevice } = require('../support/helpers');

const ADDRESS = '0000:00:05.0';
const PAST = new Date('2001-02-03T04:05:06Z');

describe('ixy bind and ixy unbind', function () {
  this.timeout(30000);
  let tmp;
  let dev;
  const saved = {};

  beforeEach(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-bind-'));
    dev = path.join(tmp, 'devices', ADDRESS);
    fakePciDevice(dev);
    fs.writeFileSync(path.join(dev, 'driver_override'), '(null)\n');
    fs.mkdirSync(path.join(tmp, 'kernel', 'iommu_groups', '7'), { recursive: true });
    fs.symlinkSync('../../kernel/iommu_groups/7', path.join(dev, 'iommu_group'));
    addDriver('ixgbe', '8086 10fb\n');
    addDriver('vfio-pci', '');
    fs.writeFileSync(path.join(tmp, 'drivers_probe'), '');
    fs.symlinkSync('../../drivers/ixgbe', path.join(dev, 'driver'));
    for (const key of ['IXY_PCI_ROOT', 'IXY_PROC_NET']) saved[key] = process.env[key];
    process.env.IXY_PCI_ROOT = path.join(tmp, 'devices');
    process.env.IXY_PROC_NET = path.join(tmp, 'proc-net'); // empty: no addresses or routes
    for (const file of writable()) fs.utimesSync(file, PAST, PAST);
    fakeKernel.install();
  });

  afterEach(function () {
    fakeKernel.uninstall();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function addDriver(name, ids) {
    const dir = path.join(tmp, 'drivers', name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'unbind'), '');
    fs.writeFileSync(path.join(dir, 'bind'), '');
    fs.writeFileSync(path.join(dir, 'ids'), ids);
  }

  // Every file a bind or unbind may write.
  function writable() {
    const drivers = fs.readdirSync(path.join(tmp, 'drivers')).flatMap((d) => ['unbind', 'bind'].map((f) => path.join(tmp, 'drivers', d, f)));
    return [path.join(dev, 'driver_override'), path.join(tmp, 'drivers_probe'), ...drivers];
  }

  function assertNothingWritten() {
    for (const file of writable()) assert.strictEqual(fs.statSync(file).mtimeMs, PAST.getTime(), `${file} was written`);
  }

  const read = (...parts) => fs.readFileSync(path.join(tmp, ...parts), 'utf8');
  const boundTo = () => path.basename(fs.readlinkSync(path.join(dev, 'driver')));

  function assertRefused(fn, code, pattern) {
    assert.throws(fn, (err) => assertIxyError(err, code, pattern));
  }

  it('binds to vfio-pci: unbinds ixgbe, sets driver_override, probes', function () {
    assert.deepStrictEqual(bind(ADDRESS), { address: ADDRESS, from: 'ixgbe', to: 'vfio-pci', iommuGroup: '7', groupPeers: [] });
    assert.strictEqual(read('drivers', 'ixgbe', 'unbind'), ADDRESS);
    assert.strictEqual(read('devices', ADDRESS, 'driver_override'), 'vfio-pci\n');
    assert.strictEqual(read('drivers_probe'), ADDRESS);
    assert.strictEqual(boundTo(), 'vfio-pci');
  });

  it('hands it back: unbinds vfio-pci, clears driver_override, probes, and ixgbe takes it', function () {
    bind(ADDRESS);
    fs.writeFileSync(path.join(tmp, 'drivers_probe'), '');
    assert.deepStrictEqual(unbind(ADDRESS), { address: ADDRESS, from: 'vfio-pci', to: 'ixgbe' });
    assert.strictEqual(read('drivers', 'vfio-pci', 'unbind'), ADDRESS);
    assert.strictEqual(read('devices', ADDRESS, 'driver_override'), '\n');
    assert.strictEqual(read('drivers_probe'), ADDRESS);
    assert.strictEqual(boundTo(), 'ixgbe');
  });

  it('binds an unbound device (ixy took it from the kernel) without unbinding anything, and --driver names another driver', function () {
    fs.rmSync(path.join(dev, 'driver'));
    addDriver('uio_pci_generic', '');
    fs.utimesSync(path.join(tmp, 'drivers', 'uio_pci_generic', 'unbind'), PAST, PAST);
    assert.strictEqual(bind(ADDRESS, { driver: 'uio_pci_generic' }).from, null);
    assert.strictEqual(boundTo(), 'uio_pci_generic');
    for (const d of ['ixgbe', 'uio_pci_generic']) assert.strictEqual(read('drivers', d, 'unbind'), '');
  });

  it('names the other devices of the IOMMU group that keep VFIO from opening it', async function () {
    const group = path.join(tmp, 'kernel', 'iommu_groups', '7', 'devices');
    fs.mkdirSync(group);
    fs.symlinkSync(dev, path.join(group, ADDRESS));
    for (const [peer, driver] of [['0000:00:05.1', 'ixgbe'], ['0000:00:05.2', null], ['0000:00:05.3', 'pci-stub']]) {
      const dir = path.join(tmp, 'devices', peer);
      fs.mkdirSync(dir);
      if (driver) fs.symlinkSync(`../../drivers/${driver}`, path.join(dir, 'driver'));
      fs.symlinkSync(dir, path.join(group, peer));
    }
    assert.deepStrictEqual(bind(ADDRESS).groupPeers, [{ address: '0000:00:05.1', driver: 'ixgbe' }]);
    fakeKernel.uninstall();
    const run = await runIxy(['bind', ADDRESS], { env: { IXY_PCI_ROOT: process.env.IXY_PCI_ROOT, IXY_PROC_NET: process.env.IXY_PROC_NET } });
    assert.strictEqual(run.stdout, `${ADDRESS} is already bound to vfio-pci; IOMMU group 7: a user given /dev/vfio/7 may drive it\n` +
      'IOMMU group 7 also holds 0000:00:05.1 (ixgbe): VFIO opens none of the group until they are bound to vfio-pci too (ixy bind ADDRESS) or to no driver\n');
  });

  it('does nothing when the device already has that driver, or its kernel driver', function () {
    assert.deepStrictEqual(unbind(ADDRESS), { address: ADDRESS, from: 'ixgbe', to: 'ixgbe' });
    assertNothingWritten();
    bind(ADDRESS);
    for (const file of writable()) fs.utimesSync(file, PAST, PAST);
    assert.strictEqual(bind(ADDRESS).from, 'vfio-pci');
    assertNothingWritten();
  });

  it('refuses when vfio-pci is not loaded, or the driver name is not one', function () {
    fs.rmSync(path.join(tmp, 'drivers', 'vfio-pci'), { recursive: true });
    assertRefused(() => bind(ADDRESS), 'ENODRIVER', /the kernel has no driver vfio-pci .*'modprobe vfio-pci'/);
    assertRefused(() => bind(ADDRESS, { driver: '../ixgbe' }), 'EINVAL', /"\.\.\/ixgbe" is not a kernel driver name/);
    assertNothingWritten();
  });

  it('refuses a device whose kernel interface is in use, unless forced', function () {
    const net = path.join(dev, 'net', 'ixyfake0');
    fs.mkdirSync(net, { recursive: true });
    fs.writeFileSync(path.join(net, 'flags'), '0x1003\n');
    fs.writeFileSync(path.join(net, 'operstate'), 'up\n');
    assertRefused(() => bind(ADDRESS), 'EACTIVE', /interface ixyfake0: up, .*--force/);
    assertNothingWritten();
    assert.strictEqual(bind(ADDRESS, { force: true }).to, 'vfio-pci');
    assert.ok(!fs.existsSync(path.join(dev, 'net')), 'the fake kernel removes the interface on unbind');
  });

  it('says when the driver did not take the device, and when no kernel driver takes it back', function () {
    fakeKernel.uninstall(); // a kernel whose vfio-pci refuses the device: nothing changes
    assertRefused(() => bind(ADDRESS), 'EBIND', /vfio-pci did not take 0000:00:05\.0 \(it is bound to ixgbe\).*dmesg.*IOMMU/);
    fakeKernel.install();
    fs.rmSync(path.join(dev, 'driver'));
    fs.writeFileSync(path.join(tmp, 'drivers', 'ixgbe', 'ids'), ''); // the ixgbe module not loaded
    assertRefused(() => unbind(ADDRESS), 'EBIND', /no kernel driver took 0000:00:05\.0: is its module loaded\? \('modprobe ixgbe'\)/);
  });

  // Issue 34, 12: a bind that fails once the device left its driver puts it back.
  it('a driver that does not take the device: gives it back to its driver, driver_override as it was', function () {
    fs.writeFileSync(path.join(tmp, 'drivers', 'vfio-pci', 'refuses'), '');
    assertRefused(() => bind(ADDRESS), 'EBIND', /vfio-pci did not take 0000:00:05\.0 \(it is bound to no driver\).*; gave it back to ixgbe, driver_override as it was$/);
    assert.strictEqual(boundTo(), 'ixgbe');
    assert.ok(['', '(null)'].includes(read('devices', ADDRESS, 'driver_override').trim()), read('devices', ADDRESS, 'driver_override'));
    // An override of its own, which the failed bind also leaves as it found it.
    fs.writeFileSync(path.join(dev, 'driver_override'), 'ixgbe\n');
    assertRefused(() => bind(ADDRESS), 'EBIND', /gave it back to ixgbe, driver_override as it was$/);
    assert.strictEqual(boundTo(), 'ixgbe');
    assert.strictEqual(read('devices', ADDRESS, 'driver_override').trim(), 'ixgbe');
  });

  it('a device that cannot be given back: the message says how to undo what is left', function () {
    fs.writeFileSync(path.join(tmp, 'drivers', 'vfio-pci', 'refuses'), '');
    fs.writeFileSync(path.join(tmp, 'drivers', 'ixgbe', 'refuses'), '');
    assertRefused(() => bind(ADDRESS), 'EBIND', new RegExp(`could not put it back as it was \\(it is bound to no driver\\); to undo: echo '' > ${dev.replace(/\./g, '\\.')}/driver_override; echo 0000:00:05\\.0 > ${tmp}/drivers/ixgbe/bind$`));
  });

  it('writes through no link planted as driver_override or drivers_probe', function () {
    for (const file of [path.join(dev, 'driver_override'), path.join(tmp, 'drivers_probe')]) {
      const victim = path.join(tmp, 'victim');
      fs.writeFileSync(victim, 'system file\n');
      fs.utimesSync(victim, PAST, PAST);
      fs.rmSync(file);
      fs.symlinkSync(victim, file);
      assertRefused(() => bind(ADDRESS, { force: true }), 'EDEVFILE', /is a symbolic link; sysfs makes none there/);
      assert.strictEqual(fs.readFileSync(victim, 'utf8'), 'system file\n');
      assert.strictEqual(fs.statSync(victim).mtimeMs, PAST.getTime());
      assert.strictEqual(read('drivers', 'ixgbe', 'unbind'), '', 'unbound before the refusal');
      fs.rmSync(file);
      fs.writeFileSync(file, '');
      fs.rmSync(victim);
    }
  });

  it('refuses a device an ixy process holds', async function () {
    const script = `require(${JSON.stringify(require.resolve('../../lib/host/claim'))}).claimDevice(process.argv[1]); process.stdout.write('held\\n'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['-e', script, ADDRESS], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve, reject) => {
        child.stdout.on('data', resolve);
        child.on('exit', reject);
      });
      assertRefused(() => bind(ADDRESS), 'EBUSY', new RegExp(`in use by pid ${child.pid} `));
      assertRefused(() => unbind(ADDRESS), 'EBUSY', new RegExp(`in use by pid ${child.pid} `));
      assertNothingWritten();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('the CLI: bind and unbind print what changed; errors are one line with a non-zero exit', async function () {
    const env = {
      IXY_PCI_ROOT: process.env.IXY_PCI_ROOT,
      IXY_PROC_NET: process.env.IXY_PROC_NET,
      IXY_FAKE_KERNEL: '1',
      NODE_OPTIONS: `--require ${require.resolve('../support/fake-kernel')}`,
    };
    let run = await runIxy(['bind', ADDRESS], { env });
    assert.strictEqual(run.code, 0, run.stderr);
    assert.strictEqual(run.stdout, `${ADDRESS}: ixgbe -> vfio-pci; IOMMU group 7: a user given /dev/vfio/7 may drive it\n`);
    run = await runIxy(['unbind', ADDRESS], { env });
    assert.strictEqual(run.stdout, `${ADDRESS}: vfio-pci -> ixgbe\n`);
    run = await runIxy(['bind', ADDRESS, '--driver', 'nosuchdriver'], { env });
    assert.notStrictEqual(run.code, 0);
    assert.strictEqual(run.stderr, "ixy: the kernel has no driver nosuchdriver (nothing in " + path.join(tmp, 'drivers') + "): load it first ('modprobe nosuchdriver')\n");
    run = await runIxy(['bind', '0000:00:05'], { env });
    assert.notStrictEqual(run.code, 0);
    assert.match(run.stderr, /^ixy: '0000:00:05' is not a PCI address[^\n]*\n$/);
  });
});
