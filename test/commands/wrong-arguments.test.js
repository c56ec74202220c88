'use strict';

// Every public call, given wrong arguments, fails with an IxyError (a code and one line),
// never a raw TypeError from inside; a misspelt option name is EINVAL naming the nearest
// valid one, instead of being ignored.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ixy = require('../../lib');

// Values a caller may pass by mistake.
const WRONG = [undefined, null, 'x', {}, [], -1, 1.5, 99, () => 1, Symbol('s'), 2n, new ixy.PacketBatch(4)];
const label = (v) => (typeof v === 'symbol' ? 'Symbol' : typeof v === 'bigint' ? `${v}n` : typeof v === 'function' ? 'a function' : JSON.stringify(v) ?? String(v));

describe('wrong arguments', function () {
  this.timeout(120000);
  let model;
  let dev;
  let tmp;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-wrong-'));
    model = await ixy.Model.start({ ports: 2 });
    process.env.IXY_PCI_ROOT = model.dir;
    dev = await ixy.open(model.addresses[0]);
  });

  after(async function () {
    if (dev) dev.close();
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  // Calls f with every wrong value (and, for two arguments, every pair); returns what
  // threw something other than an IxyError.
  async function raw(name, f, arity) {
    const found = [];
    const seconds = arity === 2 ? [undefined, ...WRONG] : [undefined];
    for (const a of WRONG) {
      for (const b of seconds) {
        try {
          await f(a, b);
        } catch (err) {
          if (!(err instanceof ixy.IxyError)) found.push(`${name}(${label(a)}, ${label(b)}): ${err.name}: ${err.message}`);
        }
      }
    }
    return found;
  }

  it('no public call throws anything but an IxyError', async function () {
    const pool = dev.pools[0];
    const small = new ixy.Mempool({ entries: 8 }); // every wrong id is outside it
    const calls = {
      rxBatch: [(a, b) => dev.rxBatch(a, b), 2],
      'rxBatch(0, x)': [(a) => dev.rxBatch(0, a), 1],
      'txBatch(0, x)': [(a) => dev.txBatch(0, a), 1],
      receive: [(a, b) => dev.receive(a, b), 2],
      frames: [(a, b) => dev.frames(a, b), 2],
      createReadStream: [(a, b) => dev.createReadStream(a, b).destroy(), 2],
      'new PacketBatch': [(a, b) => new ixy.PacketBatch(a, b), 2],
      'new PacketBatch(4, null, x)': [(a) => new ixy.PacketBatch(4, null, a), 1],
      'new Mempool': [(a) => new ixy.Mempool(a).close(), 1],
      'pool.allocMany': [(a, b) => small.allocMany(a, b), 2],
      'pool.free': [(a) => small.free(a), 1],
      open: [(a, b) => ixy.open(a, b), 2],
      'open(address, x)': [(a) => ixy.open(model.addresses[1], a).then((d) => d.close()), 1],
      readPcap: [(a) => ixy.readPcap(a), 1],
      // A string is a file name: 'x' goes to a directory of the test's own.
      'new PcapWriter': [(a, b) => new ixy.PcapWriter(a === 'x' ? path.join(tmp, 'x') : a, b).close(), 2],
      warmUp: [(a, b) => ixy.warmUp(a, b).close(), 2],
      run: [(a, b) => ixy.run(a, b), 2],
      bind: [(a, b) => ixy.bind(a, b), 2],
      unbind: [(a, b) => ixy.unbind(a, b), 2],
      promiscuous: [(a) => { dev.promiscuous = a; }, 1],
      'model.source': [(a, b) => model.source(a, b), 2],
    };
    for (const [k, f] of Object.entries(ixy.packet)) if (typeof f === 'function' && f !== ixy.packet.FrameInfo) calls[`packet.${k}`] = [f, 2];
    const found = [];
    for (const [name, [f, arity]] of Object.entries(calls)) found.push(...await raw(name, f, arity));
    assert.deepStrictEqual(found.slice(0, 20), [], `${found.length} calls threw something else`);
    assert.strictEqual(pool.freeCount, pool.entries - 512, 'a wrong call took or gave back buffers');
    assert.strictEqual(small.freeCount, 8, 'a wrong call took or gave back buffers');
    small.close();
  });

  // Issue 46, 12: a fresh batch (no frames, no pool) threw a raw TypeError.
  it('txBatch(0, new PacketBatch(4)), with frames or without, but no pool, is EINVAL saying how to fill it, and sends nothing', function () {
    for (const count of [0, 2]) {
      const batch = new ixy.PacketBatch(4);
      batch.count = count;
      assert.throws(() => dev.txBatch(0, batch), { name: 'IxyError', code: 'EINVAL', message: /^the batch has no pool: fill it with rxBatch\(\), or from a Mempool .*: nothing was sent$/ });
    }
    assert.strictEqual(dev.stats().txPackets, 0);
  });

  // Issue 46, 12: the small ones.
  it("open()'s debug is true or false, as force is; a long address is not echoed whole", async function () {
    await assert.rejects(ixy.open(model.addresses[1], { debug: 'yes' }), { code: 'EINVAL', message: "debug must be true or false, got 'yes' (a string)" });
    await assert.rejects(ixy.open(model.addresses[1], { force: 1 }), { code: 'EINVAL', message: 'force must be true or false, got 1' });
    const long = `0000:ff:00.0${'x'.repeat(100000)}`;
    await assert.rejects(ixy.open(long), (err) => {
      assert.strictEqual(err.code, 'EBADADDR');
      assert.ok(err.message.length < 300, `${err.message.length} characters`);
      assert.match(err.message, /^'0000:ff:00\.0x+\.\.\.' \(100012 characters\) is not a PCI address/);
      return true;
    });
  });

  it('attachQueue() takes ring sizes as open() does: a handle asking for a ring of 3 is EINVAL', async function () {
    const other = await ixy.open(model.addresses[1], { workers: true });
    try {
      const handle = { ...other.workerHandle(), rxRingSize: 3 };
      assert.throws(() => ixy.attachQueue(handle, 0), { code: 'EINVAL', message: /rxRingSize must be 64\.\.8192, got 3/ });
      assert.throws(() => ixy.attachQueue({ ...other.workerHandle(), txRingSize: 96 }, 0), { code: 'EINVAL', message: /txRingSize must be a power of two from 64 to 8192, got 96/ });
    } finally {
      other.close();
    }
  });

  it('a work that closes its device makes run() reject with ECLOSED, not a TypeError', async function () {
    const other = await ixy.open(model.addresses[1]);
    try {
      await assert.rejects(ixy.run(() => { other.close(); }, { paths: [[other.rxQueues[0], other.txQueues[0]]], devices: [other], warmUp: false }),
        { name: 'IxyError', code: 'ECLOSED', message: /^0000:ff:00\.1 was closed while run\(\) was running it: close devices after run\(\) has resolved/ });
    } finally {
      other.close();
    }
  });

  it("AF_XDP's own options on a device ixy drives itself are EUNSUPPORTED, naming them and their flags", async function () {
    await assert.rejects(ixy.open(model.addresses[1], { xdpMode: 'generic' }), { code: 'EUNSUPPORTED', message: /^xdpMode \(--xdp-mode\) is an option of AF_XDP devices \(xdp:<interface>\), not of 0000:ff:00\.1/ });
    await assert.rejects(ixy.open(model.addresses[1], { mode: 'copy' }), { code: 'EUNSUPPORTED', message: /^mode \(--xdp-bind\) is an option of AF_XDP devices/ });
  });

  it('a misspelt option is EINVAL naming it and the nearest valid one', async function () {
    await assert.rejects(ixy.open(model.addresses[1], { rxRingsize: 100 }), { code: 'EINVAL', message: /open\(\) has no option 'rxRingsize': did you mean 'rxRingSize'\?/ });
    assert.throws(() => dev.receive(0, { batchsize: 64 }), { code: 'EINVAL', message: /receive\(\) has no option 'batchsize': did you mean 'batchSize'\?/ });
    assert.throws(() => new ixy.Mempool({ entires: 64 }), { code: 'EINVAL', message: /did you mean 'entries'/ });
    assert.throws(() => new ixy.PacketBatch(4, null, { stauts: true }), { code: 'EINVAL', message: /did you mean 'status'/ });
    assert.throws(() => model.source(0, { rat: 5 }), { code: 'EINVAL', message: /source\(\) has no option 'rat': did you mean 'rate'\?/ });
    assert.throws(() => ixy.Model.start({ port: 1 }), { code: 'EINVAL', message: /Model\.start\(\) has no option 'port': did you mean 'ports'\?/ });
    // Nothing near: the valid names are listed.
    assert.throws(() => dev.receive(0, { colour: 'red' }), { code: 'EINVAL', message: /has no option 'colour' \(options: batchSize, / });
  });
});
