'use strict';

// One owner per NIC (issue 23). A second opener, in this process or another, gets EBUSY
// naming the holder's pid and command, and the holder's NIC is left exactly as it was; the
// claim ends with close(), with a failed open and with the holder's death (SIGKILL too);
// `ixy list` shows who holds each port.
const assert = require('assert');
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const ixy = require('../../lib');
const claim = require('../../lib/host/claim');
const { assertIxyError, modelForSuite, runIxy } = require('../support/helpers');

// A child that opens `address` and holds it until killed; resolves once it has opened.
function startHolder(address, root, argv0 = undefined) {
  const script = `
    const ixy = require(${JSON.stringify(require.resolve('../../lib'))});
    ixy.open(process.argv[1]).then(() => { process.stdout.write('held\\n'); setInterval(() => {}, 1000); },
      (err) => { process.stderr.write(err.message + '\\n'); process.exit(2); });`;
  const child = spawn(process.execPath, ['-e', script, address], { argv0, env: { ...process.env, IXY_PCI_ROOT: root }, stdio: ['ignore', 'pipe', 'pipe'] });
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

// Characters that steer a terminal, but the newline that ends each line of output.
// eslint-disable-next-line no-control-regex
const controls = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

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
    const claimFd = claim.claimDevice(address);
    const fd = fs.openSync(path.join(model().dir, address, 'resource0'), 'r');
    try {
      assert.throws(() => lockDevice(fd, address), (err) => assertIxyError(err, 'EBUSY', new RegExp(`in use by this process \\(pid ${process.pid}\\)`)));
    } finally {
      fs.closeSync(fd);
      claim.releaseClaim(claimFd);
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

  // Issue 34, 5: whoever can open the claim's file can flock it. config is world-readable
  // in sysfs; root's claim is on resource0, which only root can open.
  it('a user who can read config cannot keep root\'s ixy out', async function () {
    const dir = model().dir;
    const mode = fs.statSync(dir).mode & 0o7777;
    fs.chmodSync(dir, 0o755); // as readable as sysfs is
    const config = path.join(dir, address, 'config');
    // its own process group, so that one kill ends flock and the shell it runs
    const squatter = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'flock', '-s', config, '-c', 'echo held; exec sleep 60'],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const gone = new Promise((resolve) => squatter.on('close', resolve));
    try {
      await new Promise((resolve, reject) => {
        squatter.stdout.on('data', (d) => { if (String(d).includes('held')) resolve(); });
        gone.then(() => reject(new Error('the other user could not lock config')));
      });
      const dev = await ixy.open(address);
      dev.close();
    } finally {
      process.kill(-squatter.pid, 'SIGKILL');
      await gone;
      fs.chmodSync(dir, mode);
    }
  });

  it('prints a holder\'s command line with its control characters escaped, in the error and in ixy list', async function () {
    const evil = '\x1b]0;owned\x07\x1b[2J\r\x9b31m';
    holder = await startHolder(address, model().dir, evil);
    await assert.rejects(ixy.open(address), (err) => {
      assertIxyError(err, 'EBUSY', /in use by pid \d+ \(\\x1b\]0;owned\\x07\\x1b\[2J .?\\x9b31m -e /);
      assert.ok(!controls.test(err.message), JSON.stringify(err.message));
      return true;
    });
    const env = { IXY_PCI_ROOT: model().dir };
    const run = await runIxy(['pcap', address, '/dev/null', '1'], { env });
    assert.match(run.stderr, /^ixy: .*in use by pid .*\\x1b\]0;owned/);
    assert.ok(!controls.test(run.stderr), JSON.stringify(run.stderr));
    const list = await runIxy(['list'], { env });
    assert.match(list.stdout, /held by pid \d+: .*\\x1b\]0;owned/);
    assert.ok(!controls.test(list.stdout), JSON.stringify(list.stdout));
  });

  it('prints interface and driver names someone planted with control characters escaped in ixy list', async function () {
    const net = path.join(model().dir, model().addresses[1], 'net', 'eth\x1b[31m0\x9b');
    fs.mkdirSync(net, { recursive: true });
    try {
      fs.writeFileSync(path.join(net, 'flags'), '0x1002\n');
      fs.writeFileSync(path.join(net, 'operstate'), 'down\x1b[8m\n');
      const list = await runIxy(['list'], { env: { IXY_PCI_ROOT: model().dir } });
      assert.strictEqual(list.code, 0, list.stderr);
      assert.match(list.stdout, /interface eth\\x1b\[31m0\\x9b: down \(operstate down\\x1b\[8m\)/);
      assert.ok(!controls.test(list.stdout), JSON.stringify(list.stdout));
    } finally {
      fs.rmSync(path.join(model().dir, model().addresses[1], 'net'), { recursive: true, force: true });
    }
  });
});
