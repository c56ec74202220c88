'use strict';

// The VFIO backend's side that needs no IOMMU (the guest suite drives real VFIO devices:
// test/vm/guest/*-vfio*.test.js): DMA memory for a user who may not read physical
// addresses, and the one-line errors for a port bound to vfio-pci on a machine that cannot
// drive it that way. The port is a fake sysfs tree under IXY_PCI_ROOT.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const ixy = require('../../lib');
const { IXY, fakePciDevice } = require('../support/helpers');

const ADDRESS = '0000:01:00.0';
const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];

// bus/devices/ADDRESS (an 82576 bound to vfio-pci), bus/drivers/vfio-pci and, with `group`,
// an IOMMU group the device is in. Readable by everyone: a normal user opens it too.
function fakeBus(root, { group }) {
  const bus = path.join(root, 'bus');
  const dev = path.join(bus, 'devices', ADDRESS);
  fakePciDevice(dev, { device: '0x10c9', configBytes: 256 });
  fs.mkdirSync(path.join(bus, 'drivers', 'vfio-pci'), { recursive: true });
  fs.symlinkSync(path.join('..', '..', 'drivers', 'vfio-pci'), path.join(dev, 'driver'));
  if (group) {
    const groupDir = path.join(bus, 'iommu_groups', '7');
    fs.mkdirSync(path.join(groupDir, 'devices'), { recursive: true });
    fs.symlinkSync(dev, path.join(groupDir, 'devices', ADDRESS));
    fs.symlinkSync(groupDir, path.join(dev, 'iommu_group'));
  }
  for (let d = dev; d !== path.dirname(root); d = path.dirname(d)) fs.chmodSync(d, 0o755);
  return path.join(bus, 'devices');
}

describe('VFIO without an IOMMU at hand', function () {
  this.timeout(60000);
  let tmp;
  let savedRoot;

  beforeEach(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-vfio-'));
    savedRoot = process.env.IXY_PCI_ROOT;
  });

  afterEach(function () {
    if (savedRoot === undefined) delete process.env.IXY_PCI_ROOT;
    else process.env.IXY_PCI_ROOT = savedRoot;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('gives a normal user DMA memory at I/O virtual addresses, since physical ones are root\'s', function () {
    const script = `
      const { DmaMemory } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'memory', 'mempool'))});
      const m = new DmaMemory(3 << 20);
      const bytes = new Uint8Array(m.buffer);
      bytes[m.size - 1] = 7;
      console.log(JSON.stringify({ pages: m.pagePhys, size: m.size, mapped: m.iommuMapped, last: bytes[m.size - 1] }));
      m.free();`;
    const run = spawnSync('setpriv', [...NOBODY, process.execPath, '-e', script], { encoding: 'utf8' });
    assert.strictEqual(run.status, 0, run.stderr);
    const got = JSON.parse(run.stdout);
    assert.strictEqual(got.size, 2 * 2 ** 21, 'whole hugepages');
    // Counted from 4 GiB, one hugepage after another, and not yet in any IOMMU (no device).
    assert.deepStrictEqual(got.pages, [2 ** 32, 2 ** 32 + 2 ** 21]);
    assert.strictEqual(got.mapped, false);
    assert.strictEqual(got.last, 7);
  });

  it('says a port bound to vfio-pci in no IOMMU group needs the IOMMU on (ENOIOMMU)', async function () {
    process.env.IXY_PCI_ROOT = fakeBus(tmp, { group: false });
    await assert.rejects(ixy.open(ADDRESS), (err) => {
      assert.strictEqual(err.code, 'ENOIOMMU');
      assert.match(err.message, /no IOMMU group.*intel_iommu=on/);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    // The claim went with the failed open: the port can be tried again at once.
    await assert.rejects(ixy.open(ADDRESS), { code: 'ENOIOMMU' });
  });

  it('says to load vfio-pci when /dev/vfio is missing (ENOVFIO), to a normal user too (not ENOTROOT)', function () {
    if (fs.existsSync('/dev/vfio/vfio')) this.skip(); // this machine has VFIO: the group file decides
    const env = { ...process.env, IXY_PCI_ROOT: fakeBus(tmp, { group: true }) };
    for (const prefix of [[], ['setpriv', ...NOBODY]]) {
      const [command, ...args] = [...prefix, process.execPath, IXY, 'generate', ADDRESS, '--count', '1'];
      const run = spawnSync(command, args, { env, encoding: 'utf8' });
      assert.strictEqual(run.status, 1, run.stderr);
      assert.match(run.stderr, /^ixy: 0000:01:00\.0: \/dev\/vfio\/vfio does not exist: load the vfio-pci module \('modprobe vfio-pci'\)\n$/);
    }
  });
});
