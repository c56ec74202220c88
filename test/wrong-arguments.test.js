'use strict';

// Every public call, given wrong arguments, fails with an IxyError (a code and one line),
// never a raw TypeError from inside; a misspelt option name is EINVAL naming the nearest
// valid one, instead of being ignored.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ixy = require('../lib');

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

  it("txBatch(0, new PacketBatch(4)) with frames but no pool is EINVAL, and sends nothing", function () {
    const batch = new ixy.PacketBatch(4);
    batch.count = 2;
    assert.throws(() => dev.txBatch(0, batch), { name: 'IxyError', code: 'EINVAL', message: /no pool: nothing was sent/ });
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
