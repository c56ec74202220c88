'use strict';

// One owner per NIC (issue 23). A second opener, in this process or another, gets EBUSY
// naming the holder's pid and command, and the holder's NIC is left exactly as it was; the
// claim ends with close(), with a failed open and with the holder's death (SIGKILL too);
// `ixy list` shows who holds each port.
const assert = require('assert');
const { spawn } = require('child_process');
const ixy = require('../lib');
const claim = require('../lib/host/claim');
const { assertIxyError, modelForSuite, runIxy } = require('./support/helpers');

// A child that opens `address` and holds it until killed; resolves once it has opened.
function startHolder(address, root) {
  const script = `
    const ixy = require(${JSON.stringify(require.resolve('../lib'))});
    ixy.open(process.argv[1]).then(() => { process.stdout.write('held\\n'); setInterval(() => {}, 1000); },
      (err) => { process.stderr.write(err.message + '\\n'); process.exit(2); });`;
  const child = spawn(process.execPath, ['-e', script, address], { env: { ...process.env, IXY_PCI_ROOT: root }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.stdout.on('data', (d) => {
      if (String(d).includes('held')) resolve({ child, exited });
    });
    exited.then(({ code }) => reject(new Error(`holder exited with ${code}: ${stderr}`)));
  });
}

describe('one owner per NIC', function () {
  this.timeout(60000);
  const model = modelForSuite(2);
  let address;
  let holder = null;

  before(function () {
    address = model().addresses[0];
  });

  afterEach(async function () {
    if (holder) {
      holder.child.kill('SIGKILL');
      await holder.exited;
      holder = null;
    }
  });

  it('refuses a second open in the same process, and opens again once the first is closed', async function () {
    const first = await ixy.open(address);
    try {
      await assert.rejects(ixy.open(address), (err) => assertIxyError(err, 'EBUSY', new RegExp(`${address} is already open in this process \\(pid ${process.pid}\\)`)));
      // The first Device still works: its link and MAC are what they were.
      assert.strictEqual(first.linkSpeed, 10000);
    } finally {
      first.close();
    }
    (await ixy.open(address)).close();
  });

  it('a device class opened directly (IxgbeDevice.open) claims the NIC as ixy.open() does', async function () {
    const first = await ixy.IxgbeDevice.open(address);
    try {
      await assert.rejects(ixy.open(address), (err) => assertIxyError(err, 'EBUSY', new RegExp(`${address} is already open in this process`)));
    } finally {
      first.close();
    }
    (await ixy.open(address)).close();
  });

  it('refuses a second claim through another open file in the same process (the flock itself)', function () {
    const { lockDevice } = claim;
    const fs = require('fs');
    const path = require('path');
    const key = claim.claimDevice(address);
    const fd = fs.openSync(path.join(model().dir, address, 'config'), 'r');
    try {
      assert.throws(() => lockDevice(fd, address), (err) => assertIxyError(err, 'EBUSY', new RegExp(`in use by this process \\(pid ${process.pid}\\)`)));
    } finally {
      fs.closeSync(fd);
      claim.releaseDevice(address, key);
    }
  });

  it('ends the claim when open fails after taking it', async function () {
    await assert.rejects(ixy.open(address, { rxQueues: 999 }), { code: 'EINVAL' });
    await assert.rejects(ixy.open(address, { linkTimeout: 0, force: 'yes' }), { code: 'EINVAL' });
    (await ixy.open(address)).close();
  });

  it('ends the claim at close() even when IXY_PCI_ROOT changed since the open', async function () {
    const dev = await ixy.open(address);
    process.env.IXY_PCI_ROOT = '/nonexistent';
    try {
      dev.close();
    } finally {
      process.env.IXY_PCI_ROOT = model().dir;
    }
    assert.strictEqual(claim.deviceHolder(address), null);
    (await ixy.open(address)).close();
  });

  it('refuses an opener in another process, naming the holder, and leaves the holder\'s NIC as it was', async function () {
    holder = await startHolder(address, model().dir);
    const before = await model().stats(0);
    assert.strictEqual(before.dmaOwnerPid, holder.child.pid);
    await assert.rejects(ixy.open(address), (err) => assertIxyError(err, 'EBUSY', new RegExp(`${address} is in use by pid ${holder.child.pid} \\(.*node -e .*\\): one program at a time`)));
    const after = await model().stats(0);
    assert.strictEqual(after.busMaster, true);
    assert.strictEqual(after.rxQueueActive, true);
    assert.strictEqual(after.dmaOwnerPid, holder.child.pid);
    // The other port is free.
    (await ixy.open(model().addresses[1])).close();
  });

  it('the CLI says so in one line and exits non-zero; ixy list names the holder', async function () {
    holder = await startHolder(address, model().dir);
    const env = { IXY_PCI_ROOT: model().dir };
    const run = await runIxy(['pcap', address, '/dev/null', '1'], { env });
    assert.notStrictEqual(run.code, 0);
    assert.strictEqual(run.stderr.trim().split('\n').length, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`^ixy: ${address} is in use by pid ${holder.child.pid} `));
    const list = await runIxy(['list'], { env });
    assert.strictEqual(list.code, 0, list.stderr);
    const lines = list.stdout.split('\n');
    const row = lines.findIndex((l) => l.startsWith(address));
    assert.match(lines[row + 1], new RegExp(`^\\s+held by pid ${holder.child.pid}: .*node -e`));
    assert.ok(!lines.some((l) => l.startsWith(model().addresses[1]) && /held/.test(l)));
    const listed = ixy.listDevices().find((d) => d.address === address);
    assert.strictEqual(listed.holder.pid, holder.child.pid);
  });

  it('the claim goes with a killed holder: the port opens again at once', async function () {
    holder = await startHolder(address, model().dir);
    await assert.rejects(ixy.open(address), { code: 'EBUSY' });
    holder.child.kill('SIGKILL');
    const { signal } = await holder.exited;
    holder = null;
    assert.strictEqual(signal, 'SIGKILL');
    assert.strictEqual(claim.deviceHolder(address), null);
    (await ixy.open(address)).close();
  });
});
