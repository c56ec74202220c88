'use strict';

// The unbind guard (issue 23): ixy never takes a NIC from the kernel while the kernel's
// interface of it is up or carries addresses or routes (it may be the machine's uplink),
// unless forced. Fake trees: a device directory under IXY_PCI_ROOT with a kernel driver
// and a `net/` interface, and the kernel's address and route tables under IXY_PROC_NET.
// Forced or idle, the open goes on to unbind and then stops at a resource0 too small for
// ixgbe (EDEVFILE), which shows how far it got without a NIC.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ixy = require('../../lib');
const { runIxy, fakePciDevice } = require('../support/helpers');

const ADDRESS = '0000:00:05.0';
const IFNAME = 'ixyfake0'; // a name no real interface has: `ip` is asked about IPv4 too
const IFF_UP_RUNNING = '0x1043';
const IFF_DOWN = '0x1002';

describe('the unbind guard', function () {
  let tmp;
  let dev;
  let unbindFile;
  let procNet;
  const saved = {};

  beforeEach(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-guard-'));
    dev = path.join(tmp, 'devices', ADDRESS);
    fakePciDevice(dev);
    fs.writeFileSync(path.join(dev, 'resource0'), Buffer.alloc(4096)); // too small: stops the open after unbind
    // Bound to ixgbe, as sysfs shows it: driver -> ../../drivers/ixgbe.
    fs.mkdirSync(path.join(tmp, 'drivers', 'ixgbe'), { recursive: true });
    unbindFile = path.join(tmp, 'drivers', 'ixgbe', 'unbind');
    fs.writeFileSync(unbindFile, '');
    fs.symlinkSync('../../drivers/ixgbe', path.join(dev, 'driver'));
    procNet = path.join(tmp, 'proc-net');
    fs.mkdirSync(procNet);
    setTables({});
    for (const key of ['IXY_PCI_ROOT', 'IXY_PROC_NET', 'PATH']) saved[key] = process.env[key];
    process.env.IXY_PCI_ROOT = path.join(tmp, 'devices');
    process.env.IXY_PROC_NET = procNet;
  });

  afterEach(function () {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  // The kernel's interface of the device: `net/NAME` (virtio: `virtio0/net/NAME`).
  function addInterface(flags, { operstate = 'up', under = 'net' } = {}) {
    const dir = path.join(dev, under, IFNAME);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'flags'), `${flags}\n`);
    fs.writeFileSync(path.join(dir, 'operstate'), `${operstate}\n`);
  }

  // /proc/net/if_inet6, route and ipv6_route with the given lines for IFNAME.
  function setTables({ inet6 = 0, route = 0, route6 = 0 }) {
    const lines = (n, line) => Array.from({ length: n }, () => line).join('');
    fs.writeFileSync(path.join(procNet, 'if_inet6'), `00000000000000000000000000000001 01 80 10 80       lo\n${lines(inet6, `20010db8000000000000000000000001 07 40 00 80 ${IFNAME}\n`)}`);
    fs.writeFileSync(path.join(procNet, 'route'), `Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n${lines(route, `${IFNAME}\t001200C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n`)}`);
    fs.writeFileSync(path.join(procNet, 'ipv6_route'), lines(route6, `20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 ${IFNAME}\n`));
  }

  async function openError(options = {}) {
    try {
      (await ixy.open(ADDRESS, { linkTimeout: 100, ...options })).close();
    } catch (err) {
      return err;
    }
    return null;
  }

  async function refused(pattern, options) {
    const err = await openError(options);
    assert.ok(err, 'opened');
    assert.strictEqual(err.code, 'EACTIVE', err.stack);
    assert.match(err.message, pattern);
    assert.match(err.message, /--force \(ixy\.open\(address, \{ force: true \}\)\)/);
    assert.match(err.message, new RegExp(`ip link set ${IFNAME} down`));
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.strictEqual(fs.readFileSync(unbindFile, 'utf8'), '', 'the kernel driver was unbound');
    return err;
  }

  // Got past the guard: unbound, then stopped by the small resource0.
  async function unbound(options) {
    const err = await openError(options);
    assert.ok(err && err.code === 'EDEVFILE', err && err.stack);
    assert.strictEqual(fs.readFileSync(unbindFile, 'utf8'), ADDRESS);
  }

  it('refuses a NIC whose interface is up, and keeps no claim on it', async function () {
    addInterface(IFF_UP_RUNNING);
    await refused(new RegExp(`${ADDRESS} is the kernel's interface ${IFNAME}: up, no addresses or routes: taking it from the kernel would cut this machine off`));
    // Refused again for the same reason: the first attempt left no claim behind (not EBUSY).
    await refused(/ixyfake0: up/);
  });

  it('refuses a NIC whose interface is down but has an IPv6 address', async function () {
    addInterface(IFF_DOWN, { operstate: 'down' });
    setTables({ inet6: 1 });
    await refused(/ixyfake0: down, 1 address, 0 routes/);
  });

  it('refuses a NIC whose interface has IPv4 or IPv6 routes', async function () {
    addInterface(IFF_DOWN, { operstate: 'down' });
    setTables({ route: 2 });
    await refused(/0 addresses, 2 routes/);
    setTables({ route6: 1 });
    await refused(/0 addresses, 1 route:/);
  });

  it('refuses a NIC whose interface has an IPv4 address (from `ip -o -4 addr show`)', async function () {
    addInterface(IFF_DOWN, { operstate: 'down' });
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'ip'), `#!/bin/sh\necho '7: ${IFNAME}    inet 198.18.0.1/24 brd 198.18.0.255 scope global ${IFNAME}\\       valid_lft forever preferred_lft forever'\n`, { mode: 0o755 });
    process.env.PATH = `${bin}:${process.env.PATH}`;
    await refused(/ixyfake0: down, 1 address, 0 routes/);
  });

  it('finds a virtio NIC\'s interface under virtioN/net', async function () {
    addInterface(IFF_UP_RUNNING, { under: path.join('virtio3', 'net') });
    await refused(/ixyfake0: up/);
  });

  it('takes a NIC whose interface is down with no addresses or routes', async function () {
    addInterface(IFF_DOWN, { operstate: 'down' });
    await unbound();
  });

  it('takes a NIC in use when forced', async function () {
    addInterface(IFF_UP_RUNNING);
    setTables({ inet6: 2, route: 1, route6: 1 });
    await unbound({ force: true });
  });

  it('the CLI: one line and a non-zero exit, --force, and ixy list shows the interface', async function () {
    addInterface(IFF_UP_RUNNING);
    setTables({ inet6: 1, route: 1 });
    const env = { IXY_PCI_ROOT: process.env.IXY_PCI_ROOT, IXY_PROC_NET: procNet };
    const run = await runIxy(['generate', ADDRESS, '--link-timeout', '100'], { env });
    assert.notStrictEqual(run.code, 0);
    assert.strictEqual(run.stderr.trim().split('\n').length, 1, run.stderr);
    assert.match(run.stderr, /^ixy: 0000:00:05\.0 is the kernel's interface ixyfake0: up, 1 address, 1 route: .*--force/);
    assert.strictEqual(fs.readFileSync(unbindFile, 'utf8'), '');
    const list = await runIxy(['list'], { env });
    assert.match(list.stdout, /^0000:00:05\.0 +8086:10fb +ixgbe +ixgbe +Intel 82599ES/m);
    assert.match(list.stdout, /^ +interface ixyfake0: up, 1 address, 1 route: in use, ixy takes it only with --force$/m);
    const forced = await runIxy(['generate', ADDRESS, '--link-timeout', '100', '--force'], { env });
    assert.match(forced.stderr, /^ixy: .*resource0 has 4096 bytes/);
    assert.strictEqual(fs.readFileSync(unbindFile, 'utf8'), ADDRESS);
  });

  it('listDevices() reports each interface', function () {
    addInterface(IFF_DOWN, { operstate: 'down' });
    setTables({ route6: 3 });
    const d = ixy.listDevices().find((x) => x.address === ADDRESS);
    assert.deepStrictEqual(d.interfaces, [{ name: IFNAME, up: false, operstate: 'down', addresses: 0, routes: 3, active: true }]);
    assert.strictEqual(d.holder, null);
  });
});
