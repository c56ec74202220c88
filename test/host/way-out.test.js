'use strict';

// Every way a process can leave a busy NIC: afterwards the NIC does no DMA (Bus Master
// off, RX and TX queues disabled, receive off), the exit status is the one that way out
// gives, and the port opens again at once. A child process (test/support/way-out-child.js) drives
// port 0 of the device model while the model offers 200,000 frames/s.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const ixy = require('../../lib');
const { Model } = require('../../lib/model');
const R = require('../../lib/intel/ixgbe/registers');

const CHILD = path.join(__dirname, '..', 'support', 'way-out-child.js');

// Runs the child with core dumps off (SIGQUIT, SIGSEGV and SIGABRT dump core by default);
// exec keeps the child's own exit status. `signal`: sent once the child prints "ready".
function runChild(mode, address, root, { signal = null, timeoutMs = 30000, args = [] } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'ulimit -c 0; exec "$@"', 'sh', process.execPath, CHILD, mode, address, ...args], {
      env: { ...process.env, IXY_PCI_ROOT: root },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (signal && stdout.includes('ready\n')) {
        child.kill(signal);
        signal = null;
      }
    });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      resolve({ code, signal: sig, stdout, stderr });
    });
  });
}

describe('every way out stops the NIC', function () {
  this.timeout(60000);
  let model;
  let address;

  before(async function () {
    model = await Model.start({ ports: 1 });
    address = model.addresses[0];
    process.env.IXY_PCI_ROOT = model.dir;
  });

  after(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
  });

  // The 82599's registers as the model holds them (resource0 is a shared file).
  function register(offset) {
    const fd = fs.openSync(path.join(model.dir, address, 'resource0'), 'r');
    try {
      const buf = Buffer.alloc(4);
      fs.readSync(fd, buf, 0, 4, offset);
      return buf.readUInt32LE(0);
    } finally {
      fs.closeSync(fd);
    }
  }

  // The model's truth, then the registers: the NIC can do no DMA and no queue is on (nor
  // left enabled over memory the process gave back, where the model reports that).
  const stopped = (x) => !x.busMaster && !x.rxQueueActive && x.txQueuesActive === 0 &&
    !x.rxQueueReleased && !x.txQueuesReleased;
  async function assertStopped(what) {
    let s;
    try {
      s = await model.waitFor(0, stopped, 3000);
    } catch (err) {
      assert.fail(`${what}: the NIC was left running: ${err.message}`);
    }
    assert.strictEqual(register(R.RXCTRL) & R.RXCTRL_RXEN, 0, `${what}: RXCTRL.RXEN still set`);
    assert.strictEqual(register(R.RXDCTL(0)) & R.RXDCTL_ENABLE, 0, `${what}: RXDCTL(0).ENABLE still set`);
    assert.strictEqual(register(R.TXDCTL(0)) & R.TXDCTL_ENABLE, 0, `${what}: TXDCTL(0).ENABLE still set`);
    // The model's count of what the NIC would have written after the driver's memory went
    // away (where the model has it): give it time to see the process gone, then it must be 0.
    await new Promise((resolve) => setTimeout(resolve, 250));
    s = await model.stats(0);
    if ('dmaAfterRelease' in s) assert.strictEqual(s.dmaAfterRelease, 0, `${what}: DMA after release`);
    return s;
  }

  async function assertOpensAgain() {
    const dev = await ixy.open(address, { linkTimeout: 5000 });
    try {
      assert.strictEqual(dev.linkSpeed, 10000);
    } finally {
      dev.close();
    }
    await assertStopped('close() after reopening');
  }

  // One way out: the model busy, the child run, its status, then the NIC and a reopen.
  async function wayOut(mode, expected, options = {}) {
    await model.clear(0);
    await model.source(0, { rate: 200000 });
    let run;
    try {
      run = await runChild(mode, address, model.dir, options);
    } finally {
      await model.sourceOff(0);
    }
    assert.deepStrictEqual({ code: run.code, signal: run.signal }, expected, `exit status; stderr: ${run.stderr}`);
    assert.ok(!/way-out-child:/.test(run.stderr), run.stderr);
    const s = await model.stats(0);
    assert.ok(s.rxDelivered > 0 && s.txFrames > 0, `the NIC was not busy: ${JSON.stringify(s)}`);
    await assertStopped(mode + (options.signal ? ` ${options.signal}` : ''));
    await assertOpensAgain();
    return run;
  }

  it('close() ends with Bus Master off', async function () {
    await wayOut('close', { code: 0, signal: null });
  });

  it('a program that ends without close()', async function () {
    await wayOut('end', { code: 0, signal: null });
  });

  it('process.exit(3) keeps its exit code', async function () {
    await wayOut('exit3', { code: 3, signal: null });
  });

  it('process.exit(3) with \'exit\' listeners of the program\'s own that throw, before and after open', async function () {
    const run = await wayOut('exit-throws', { code: 3, signal: null });
    assert.match(run.stderr, /an exit listener that throws first/);
  });

  it('an uncaught exception (exit code 1)', async function () {
    const run = await wayOut('throw', { code: 1, signal: null });
    assert.match(run.stderr, /an exception nobody catches/);
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) {
    it(`${signal} with no handler: the process still dies of ${signal}`, async function () {
      await wayOut('wait', { code: null, signal }, { signal });
    });
  }

  it('SIGSEGV: the process still dies of it', async function () {
    await wayOut('segv', { code: null, signal: 'SIGSEGV' });
  });

  it('process.abort(): the process still dies of SIGABRT', async function () {
    await wayOut('abort', { code: null, signal: 'SIGABRT' });
  });

  it('a SIGINT listener of the program\'s own runs instead (ixy leaves the signal alone)', async function () {
    const run = await wayOut('listener', { code: 7, signal: null }, { signal: 'SIGINT' });
    assert.match(run.stdout, /listener/);
  });

  it('SIGINT after the program removed its last listener: guarded again', async function () {
    await wayOut('unlistened', { code: null, signal: 'SIGINT' }, { signal: 'SIGINT' });
  });

  // Another directory with a device of the same address, Bus Master on: a release that
  // looked the device up again after IXY_PCI_ROOT changed would clear the bit there.
  describe('with IXY_PCI_ROOT pointed elsewhere after open', function () {
    let other;
    let otherConfig;

    beforeEach(function () {
      other = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-other-root-'));
      fs.mkdirSync(path.join(other, address));
      otherConfig = path.join(other, address, 'config');
      const config = Buffer.alloc(4096);
      config[4] = 0x06; // memory space and Bus Master on
      fs.writeFileSync(otherConfig, config);
    });

    afterEach(function () {
      process.env.IXY_PCI_ROOT = model.dir;
      fs.rmSync(other, { recursive: true, force: true });
    });

    it('close() clears Bus Master of the device it opened, not of the one there now', async function () {
      const dev = await ixy.open(address);
      process.env.IXY_PCI_ROOT = other;
      dev.close();
      process.env.IXY_PCI_ROOT = model.dir;
      assert.strictEqual(fs.readFileSync(otherConfig)[4], 0x06, 'the other device lost Bus Master');
      await assertStopped('close() after IXY_PCI_ROOT changed');
    });

    it('so does the exit guard', async function () {
      await wayOut('reroot', { code: 0, signal: null }, { args: [other] });
      assert.strictEqual(fs.readFileSync(otherConfig)[4], 0x06, 'the other device lost Bus Master');
    });
  });
});
