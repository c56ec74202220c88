'use strict';

// The library API tool authors use: packet helpers, buffer ownership checks, the async
// receive iterator (against the device model), and the TypeScript declarations.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const ixy = require('../../lib');
const { packet } = ixy;
const { assertIxyError } = require('../support/helpers');

describe('mempool', function () {
  it('keeps each buffer\'s physical address as low and high words, side by side', function () {
    const pool = new ixy.Mempool({ entries: 2048, bufferSize: 2048 }); // two hugepages
    try {
      for (const id of [0, 1, 1023, 1024, 2047]) {
        const phys = pool.memory.physOf(id * pool.bufferSize); // what the addon says
        assert.strictEqual(pool.physOf(id), phys);
        assert.strictEqual(pool.phys[2 * id], phys % 2 ** 32);
        assert.strictEqual(pool.phys[2 * id + 1], Math.floor(phys / 2 ** 32));
      }
    } finally {
      pool.close();
    }
  });

  it('allocMany() hands out no more buffers than the array holds, and loses none', function () {
    const pool = new ixy.Mempool({ entries: 8 });
    try {
      const ids = new Uint32Array(2);
      assert.strictEqual(pool.allocMany(ids, 5), 2);
      assert.strictEqual(pool.freeCount, 6, 'a buffer was taken off the free stack but not handed out');
      const rest = new Uint32Array(8);
      assert.strictEqual(pool.allocMany(rest, 8), 6, 'no more than are free');
      assert.deepStrictEqual([...ids, ...rest.subarray(0, 6)].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
      assert.strictEqual(pool.allocMany(rest, 8), 0);
    } finally {
      pool.close();
    }
  });
});

describe('packet helpers', function () {
  it('builds Ethernet/IPv4/UDP header by header and parses it back without allocating', function () {
    const b = new Uint8Array(128);
    let at = packet.writeEthernetHeader(b, '02:00:00:00:00:02', '02:00:00:00:00:01');
    at = packet.writeIpv4Header(b, at, { srcIp: '192.168.1.2', dstIp: 0x0a000001, totalLength: 20 + 8 + 10, ttl: 7 });
    at = packet.writeUdpHeader(b, at, 1234, 53, 8 + 10);
    assert.strictEqual(at, 42);
    assert.strictEqual(packet.internetChecksum(b, 14, 20), 0, 'IPv4 header checksum');
    assert.ok(packet.isValidUdp(b, 52));

    const info = new packet.FrameInfo();
    assert.strictEqual(packet.parseFrame(b, 52, info), packet.IPPROTO_UDP);
    assert.strictEqual(packet.ipToString(info.srcIp), '192.168.1.2');
    assert.strictEqual(packet.ipToString(info.dstIp), '10.0.0.1');
    assert.deepStrictEqual([info.srcPort, info.dstPort, info.ttl, info.payload, info.payloadLength, info.vlan], [1234, 53, 7, 42, 10, -1]);
    packet.swapMacs(b);
    assert.strictEqual(packet.macToString(b, 0), '02:00:00:00:00:01');
    assert.strictEqual(packet.macToString(b, 6), '02:00:00:00:00:02');

    // Not IPv4, and too short: -1, and nothing read past `length`.
    b[12] = 0x86;
    b[13] = 0xdd;
    assert.strictEqual(packet.parseFrame(b, 52, info), -1);
    assert.strictEqual(info.etherType, 0x86dd);
    packet.writeUdpFrame(b, { size: 60 });
    assert.strictEqual(packet.parseFrame(b, 20, info), -1);
  });

  it('parses through an 802.1Q tag', function () {
    const plain = new Uint8Array(64);
    packet.writeUdpFrame(plain, { size: 60, dstPort: 4789 });
    const tagged = new Uint8Array(68);
    tagged.set(plain.subarray(0, 12), 0);
    tagged.set([0x81, 0x00, 0x00, 0x2a], 12);
    tagged.set(plain.subarray(12, 60), 16);
    const info = new packet.FrameInfo();
    assert.strictEqual(packet.parseFrame(tagged, 64, info), 17);
    assert.deepStrictEqual([info.vlan, info.l3, info.dstPort], [42, 18, 4789]);
  });
});

describe('buffer ownership checks', function () {
  it('a checked mempool catches double frees, also within one freeMany, and frees nothing then', function () {
    const pool = new ixy.Mempool({ entries: 64, debug: true });
    try {
      assert.ok(pool instanceof ixy.CheckedMempool);
      const id = pool.alloc();
      pool.free(id);
      assert.throws(() => pool.free(id), { name: 'IxyError', code: 'EDOUBLEFREE', message: new RegExp(`buffer ${id} freed twice`) });
      const ids = new Uint32Array(4);
      assert.strictEqual(pool.allocMany(ids, 3), 3);
      ids[3] = ids[1]; // the same buffer twice in one call
      const free = pool.freeCount;
      assert.throws(() => pool.freeMany(ids, 0, 4), { code: 'EDOUBLEFREE' });
      assert.strictEqual(pool.freeCount, free, 'a failed freeMany freed some buffers');
      pool.freeMany(ids, 0, 3); // still the application's: fine
      assert.throws(() => pool.free(64), { code: 'EINVAL' });
      assert.strictEqual(pool.freeCount, pool.entries);
    } finally {
      pool.close();
    }
  });

  it('an unchecked mempool is a plain Mempool with nothing added to its hot path', function () {
    const pool = new ixy.Mempool({ entries: 64, debug: false });
    try {
      assert.strictEqual(Object.getPrototypeOf(pool), ixy.Mempool.prototype);
      assert.strictEqual(pool.owner, undefined);
    } finally {
      pool.close();
    }
  });
});

describe('the library on the device model', function () {
  let Model;
  let model;

  before(async function () {
    ({ Model } = require('../../lib/model'));
    model = await Model.start({ ports: 1 });
    process.env.IXY_PCI_ROOT = model.dir;
  });

  after(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
  });

  // Opens port 0 with a ring that absorbs long pauses of a busy test machine.
  function openPort(options = {}) {
    return ixy.open(model.addresses[0], { rxRingSize: 4096, mempoolEntries: 8192, ...options });
  }

  it('a device offers mac, linkSpeed, promiscuous, stats() and close()', async function () {
    const dev = await openPort();
    try {
      assert.ok(dev instanceof ixy.Device);
      assert.strictEqual(dev.mac, model.ports[0].mac);
      assert.strictEqual(dev.linkSpeed, 10000);
      assert.strictEqual(dev.promiscuous, true);
      dev.promiscuous = false;
      assert.strictEqual(dev.promiscuous, false);
      assert.deepStrictEqual(Object.keys(dev.stats()).sort(), ['rxBytes', 'rxErrors', 'rxMissed', 'rxPackets', 'rxQueues', 'txBytes', 'txDropped', 'txPackets', 'txQueues']);
    } finally {
      dev.close();
      dev.close();
    }
  });

  it('a closed device throws ECLOSED from everything that needs the NIC; stop(), close() and check() stay safe', async function () {
    const dev = await openPort();
    dev.close();
    const batch = new ixy.PacketBatch(4);
    const uses = {
      rxBatch: () => dev.rxBatch(0, batch),
      txBatch: () => dev.txBatch(0, batch),
      stats: () => dev.stats(),
      receive: () => dev.receive(0),
      'promiscuous (set)': () => { dev.promiscuous = true; },
      'promiscuous (get)': () => dev.promiscuous,
      mac: () => dev.mac,
      linkSpeed: () => dev.linkSpeed,
    };
    for (const [what, use] of Object.entries(uses)) {
      assert.throws(use, { name: 'IxyError', code: 'ECLOSED', message: /which is closed/ }, what);
    }
    dev.stop();
    dev.close();
    assert.deepStrictEqual(dev.check(), []);
  });

  it('a queue index that does not exist or is not an integer is EINVAL, naming the queue', async function () {
    const dev = await openPort({ txQueues: 1 });
    const batch = new ixy.PacketBatch(4);
    try {
      assert.throws(() => dev.rxBatch(3, batch), { name: 'IxyError', code: 'EINVAL', message: /^RX queue 3 does not exist: 0000:ff:00\.0 has 1 RX queue$/ });
      assert.throws(() => dev.txBatch(-1, batch), { code: 'EINVAL', message: /^TX queue -1 does not exist/ });
      assert.throws(() => dev.rxBatch(0.5, batch), { code: 'EINVAL', message: /^the RX queue index must be an integer, got 0\.5$/ });
      assert.throws(() => dev.receive('0'), { code: 'EINVAL', message: /^the RX queue index must be an integer, got '0' \(a string\)$/ });
      assert.strictEqual(dev.rxBatch(0, batch), 0, 'queue 0 still works');
    } finally {
      dev.close();
    }
  });

  it('open() options of the wrong type say what was given', async function () {
    const refused = {
      rxQueues: ['2', /^rxQueues must be an integer, got '2' \(a string\)$/],
      txQueues: [65, /^txQueues must be 0\.\.64, got 65$/],
      rxRingSize: [null, /^rxRingSize must be an integer, got null$/],
      bufferSize: ['2048', /got '2048' \(a string\)$/],
      linkTimeout: ['1s', /^linkTimeout \(ms\) must be an integer, got '1s' \(a string\)$/],
      promiscuous: [1, /^promiscuous must be true or false, got 1$/],
      mempoolEntries: [[8192], /got \[ 8192 \] \(an object\)$/],
    };
    for (const [key, [value, message]] of Object.entries(refused)) {
      await assert.rejects(openPort({ [key]: value }), { name: 'IxyError', code: 'EINVAL', message }, key);
    }
    // An option given as undefined is one left out: it takes its default.
    const dev = await openPort({ linkTimeout: undefined, promiscuous: undefined });
    try {
      assert.strictEqual(dev.promiscuous, true);
    } finally {
      dev.close();
    }
  });

  it('receive() ends when its AbortSignal aborts, at once when it already has, and leaves no listener', async function () {
    const { getEventListeners } = require('events');
    const dev = await openPort();
    const pool = dev.pools[0];
    try {
      await model.clear(0);
      await model.source(0, { rate: 20000, size: 60 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      let frames = 0;
      for await (const batch of dev.receive(0, { signal: controller.signal })) frames += batch.count;
      assert.ok(frames > 0, 'frames arrived before the abort');
      assert.ok(!dev.closed);

      let steps = 0;
      for await (const batch of dev.receive(0, { signal: AbortSignal.abort() })) steps += batch.count >= 0;
      assert.strictEqual(steps, 0, 'an aborted signal yields no batch');

      const idle = new AbortController();
      for await (const batch of dev.receive(0, { signal: idle.signal })) if (batch.count > 0) break;
      assert.strictEqual(getEventListeners(idle.signal, 'abort').length, 0, 'break removed the abort listener');
      assert.throws(() => dev.receive(0, { signal: 'stop' }), { code: 'EINVAL', message: /signal must be an AbortSignal, got 'stop' \(a string\)/ });
    } finally {
      await model.sourceOff(0);
      dev.close();
    }
    assert.strictEqual(pool.freeCount, pool.entries);
  });

  // Issue 46, 10: closing a pool under frames still on a running TX ring let the NIC fetch
  // them from memory that was unmapped.
  it('Mempool.close() is refused (EBUSY) while its buffers are on a running ring, and works once the device stopped', async function () {
    const dev = await openPort();
    const pool = new ixy.Mempool({ entries: 64 });
    const batch = new ixy.PacketBatch(16);
    try {
      await model.stall(0, 5000); // the NIC takes no TX descriptor meanwhile
      batch.count = pool.allocMany(batch.ids, 16);
      batch.pool = pool;
      for (let i = 0; i < batch.count; i++) batch.lengths[i] = 60;
      assert.strictEqual(dev.txBatch(0, batch), 16);
      assert.throws(() => pool.close(), (err) => assertIxyError(err, 'EBUSY', /^cannot close a mempool while 16 of its buffers are on a running queue's ring: stop or close the device first/));
      assert.strictEqual(pool.buffers[0].length, 2048, 'its memory is still mapped');
      dev.stop();
      pool.close();
      assert.strictEqual(pool.buffers[0], null);
    } finally {
      await model.stall(0, 0);
      dev.close();
    }
  });

  it('debug mode catches use after free, sending twice and freeing a sent buffer; close returns every buffer', async function () {
    const dev = await openPort({ debug: true });
    const pool = dev.pools[0];
    const batch = new ixy.PacketBatch(8);
    try {
      await model.clear(0);
      await model.source(0, { rate: 0, size: 60, count: 20 });
      await model.waitFor(0, (s) => s.rxDelivered === 20, 5000);
      assert.strictEqual(dev.rxBatch(0, batch), 8);

      // Freed, then sent: caught, and nothing reaches the TX ring.
      const id = batch.ids[0];
      pool.free(id);
      assert.throws(() => dev.txBatch(0, batch), { name: 'IxyError', code: 'EUSEAFTERFREE', message: new RegExp(`buffer ${id} sent after it was freed`) });
      assert.strictEqual(dev.stats().txPackets, 0);
      assert.throws(() => pool.free(id), { code: 'EDOUBLEFREE' });

      // The other seven are still ours: send them, then try again.
      batch.ids.copyWithin(0, 1, 8);
      batch.lengths.copyWithin(0, 1, 8);
      batch.count = 7;
      assert.strictEqual(dev.txBatch(0, batch), 7);
      assert.throws(() => dev.txBatch(0, batch), { code: 'EUSEAFTERFREE', message: /sent twice/ });
      assert.throws(() => batch.freeFrom(0), { code: 'EDOUBLEFREE', message: /freed after it was sent/ });
      batch.release(); // sent = 7 = count: nothing left to free
      assert.strictEqual(batch.count, 0);
      await model.waitFor(0, (s) => s.txFrames === 7, 5000);

      // What the iterator hands out is checked too, and freed exactly once.
      for await (const b of dev.receive(0, { batchSize: 4 })) {
        assert.ok(b.count > 0);
        break;
      }
    } finally {
      dev.close();
    }
    assert.strictEqual(pool.freeCount, pool.entries, 'a buffer did not come back');
  });

  it('receive(): every offered frame arrives, in order, while a 10 ms timer keeps its schedule', async function () {
    const N = 20000;
    const dev = await openPort();
    const pool = dev.pools[0];
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 10);
    // What the machine took: the time this thread waited for a CPU (/proc/self/schedstat),
    // when neither the loop nor the timer could run.
    const cpuWaitMs = () => Number(fs.readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1e6;
    const waitedBefore = cpuWaitMs();
    const start = performance.now();
    let received = 0;
    let outOfOrder = 0;
    let batches = 0;
    try {
      await model.clear(0);
      // A rate the driver takes easily: the test is about not losing frames and not
      // starving timers, not about speed.
      await model.source(0, { rate: 50000, size: 60, count: N });
      for await (const batch of dev.receive(0, { batchSize: 32 })) {
        batches++;
        assert.ok(batch.count >= 1 && batch.count <= 32);
        for (let i = 0; i < batch.count; i++) {
          if (packet.readSeq(batch.data(i)) !== received) outOfOrder++;
          received++;
        }
        if (received >= N) break;
      }
      const elapsed = performance.now() - start;
      const ran = elapsed - (cpuWaitMs() - waitedBefore);
      clearInterval(timer);
      const m = await model.stats(0);
      assert.strictEqual(m.rxOffered, N);
      assert.strictEqual(m.rxDropNoDesc, 0);
      assert.strictEqual(received, N);
      assert.strictEqual(outOfOrder, 0);
      const expected = ran / 10;
      assert.ok(ticks >= expected * 0.5, `timer fired ${ticks} times in ${elapsed.toFixed(0)} ms, ${ran.toFixed(0)} of them on a CPU (expected about ${expected.toFixed(0)}): the loop starved it`);
      assert.ok(batches > 1);
      // The loop ended with break: the last batch went back, only the ring holds buffers.
      assert.strictEqual(pool.freeCount, pool.entries - 4096);
    } finally {
      clearInterval(timer);
      dev.close();
    }
    assert.strictEqual(pool.freeCount, pool.entries);
  });

  it('receive() ends when the device is closed, and a partly sent batch is freed exactly once', async function () {
    const dev = await openPort({ debug: true });
    const pool = dev.pools[0];
    let frames = 0;
    try {
      await model.clear(0);
      await model.source(0, { rate: 20000, size: 60 });
      setTimeout(() => dev.close(), 300);
      for await (const batch of dev.receive(0)) {
        frames += batch.count;
        // Reflect half of each batch; the iterator frees the other half.
        const half = batch.count >> 1;
        const count = batch.count;
        batch.count = half;
        dev.txBatch(0, batch);
        batch.count = count;
      }
      assert.ok(dev.closed);
      assert.ok(frames > 0);
    } finally {
      await model.sourceOff(0);
      dev.close();
    }
    assert.strictEqual(pool.freeCount, pool.entries);
  });
});

describe('the examples on the device model', function () {
  const { spawn } = require('child_process');
  const fs = require('fs');
  const os = require('os');
  let model;
  let tmp;

  before(async function () {
    model = await require('../../lib/model').Model.start({ ports: 1 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-examples-'));
  });

  after(async function () {
    if (model) await model.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // Runs examples/<name> on port 0; `whenReady(output)` runs once it has printed its first
  // line, `until(stdout)` says when to send SIGINT. Resolves with { code, stdout, stderr }.
  function runExample(name, args, whenReady, until) {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'examples', name), model.addresses[0], ...args], {
        env: { ...process.env, IXY_PCI_ROOT: model.dir }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let ready = false;
      let interrupted = false;
      const killer = setTimeout(() => child.kill('SIGKILL'), 30000);
      child.stdout.on('data', async (d) => {
        stdout += d;
        if (!ready) {
          ready = true;
          try {
            await whenReady();
          } catch (err) {
            stderr += `test: ${err.message}\n`;
            child.kill('SIGKILL');
            return;
          }
        }
        if (!interrupted && until(stdout)) {
          interrupted = true;
          child.kill('SIGINT');
        }
      });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(killer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  // Starts the model's source once the example polls, waits until the model has offered
  // all N frames and returns how many it delivered to the driver (on a loaded machine a few
  // may be dropped when the example's 512-descriptor ring overflows; the model counts them).
  async function offer(N, extra = () => true) {
    await model.source(0, { rate: 10000, size: 60, count: N });
    const s = await model.waitFor(0, (m) => m.rxOffered >= N && extra(m), 20000);
    assert.strictEqual(s.rxDelivered + s.rxDropNoDesc, N);
    return s.rxDelivered;
  }

  it('count-protocols counts every UDP frame the driver received', async function () {
    const N = 2000;
    await model.clear(0);
    let delivered = -1;
    const run = await runExample('count-protocols.js', [], async () => { delivered = await offer(N); }, (out) => delivered > 0 && out.includes(`udp ${delivered}`));
    assert.strictEqual(run.code, 0, run.stderr);
    assert.ok(delivered >= N * 0.9, `the model delivered only ${delivered} of ${N} frames`);
    assert.match(run.stdout, new RegExp(`^total: udp ${delivered}$`, 'm'));
  });

  it('reflector sends every frame back with the MACs swapped, in debug mode; its counts agree with the model', async function () {
    const N = 2000;
    const capture = path.join(tmp, 'reflected.pcap');
    await model.clear(0);
    await model.pcapOut(0, capture);
    let delivered = -1;
    const run = await runExample('reflector.js', ['--debug'], async () => {
      const got = await offer(N);
      // Let the reflector finish with the last frames before it is interrupted.
      await new Promise((resolve) => setTimeout(resolve, 300));
      delivered = got;
    }, () => delivered > 0);
    await model.pcapOut(0, null);
    assert.strictEqual(run.code, 0, run.stderr);
    assert.ok(delivered >= N * 0.9, `the model delivered only ${delivered} of ${N} frames`);
    // Frames that find the TX ring full are dropped and counted, never lost unaccounted.
    const [, received, reflected, dropped] = /received (\d+), reflected (\d+), dropped (\d+)/.exec(run.stdout).map(Number);
    assert.strictEqual(received, delivered);
    assert.strictEqual(reflected + dropped, received);
    assert.ok(reflected >= received * 0.9, `only ${reflected} of ${received} reflected`);
    const m = await model.stats(0);
    assert.strictEqual(m.txFrames, reflected);
    const { frames } = ixy.readPcap(capture);
    assert.strictEqual(frames.length, reflected);
    const mac = model.ports[0].mac;
    let last = -1;
    frames.forEach((f, i) => {
      assert.strictEqual(packet.macToString(f.data, 6), mac, `frame ${i}: source MAC`);
      assert.notStrictEqual(packet.macToString(f.data, 0), mac, `frame ${i}: destination MAC`);
      const seq = packet.readSeq(f.data);
      assert.ok(seq > last, `frame ${i}: sequence number ${seq} after ${last}`);
      last = seq;
    });
  });
});

describe('the package', function () {
  const fs = require('fs');
  const root = path.join(__dirname, '..', '..');
  const read = (file) => fs.readFileSync(path.join(root, file), 'utf8');

  // Every .js file under lib/, with its path.
  function libFiles(dir = path.join(root, 'lib')) {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return libFiles(p);
      return e.name.endsWith('.js') ? [p] : [];
    });
  }

  it('the README lists every error code the library and the addon throw', function () {
    const codes = new Set();
    for (const file of libFiles()) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/IxyError\('(E[A-Z]+)'/g)) codes.add(m[1]);
      for (const m of text.matchAll(/modelError\([^;]*'(E[A-Z]+)'\)/g)) codes.add(m[1]);
    }
    for (const file of fs.readdirSync(path.join(root, 'native')).filter((f) => f.endsWith('.cc'))) {
      for (const m of read(`native/${file}`).matchAll(/ThrowCode\([^;]*"(E[A-Z]+)"\);/g)) codes.add(m[1]);
    }
    assert.ok(codes.has('ECLOSED') && codes.has('ENOHUGEPAGES') && codes.has('ENOMODEL'), [...codes].join(' '));
    const readme = read('README.md');
    const errors = readme.slice(readme.indexOf('### Errors'), readme.indexOf('\n### ', readme.indexOf('### Errors') + 1));
    const missing = [...codes].filter((code) => !errors.includes(`\`${code}\``));
    assert.deepStrictEqual(missing, [], 'codes missing from the README\'s Errors section');
  });

  it('holds a LICENSE and every file the README and index.d.ts point at', function () {
    this.timeout(30000);
    // --ignore-scripts: not prepack's build of the prebuild (test/project/install.test.js packs it).
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))[0].files.map((f) => f.path);
    assert.ok(packed.includes('LICENSE'));
    assert.match(read('LICENSE'), new RegExp(`^${JSON.parse(read('package.json')).license} License`));
    // Paths of this repository named in the text (`lib/host/jit.js`, [..](docs/api.md)),
    // except build/, which npm install makes, and the tests, CI and benchmarks, which the
    // README runs from a clone and the package leaves out (test/project/install.test.js).
    const named = new Set();
    for (const m of (read('README.md') + read('index.d.ts')).matchAll(/[`(\s]((?:\.?[\w-]+\/)+[\w.-]*)/g)) {
      if (/^(build|test|bench|\.ci)\//.test(m[1])) continue;
      if (fs.existsSync(path.join(root, m[1]))) named.add(m[1].replace(/\/$/, ''));
    }
    assert.ok(named.has('native/model/README.md') && named.has('examples/reflector.js'), [...named].join(' '));
    const missing = [...named].filter((p) => !packed.some((f) => f === p || f.startsWith(`${p}/`)));
    assert.deepStrictEqual(missing, [], 'named in README.md or index.d.ts but not in the package (package.json "files")');
  });
});

describe('ES modules', function () {
  const fs = require('fs');
  const os = require('os');

  it("import { ... } from 'ixy' gives every name index.d.ts declares: the objects require('ixy') gives", function () {
    const declared = fs.readFileSync(path.join(__dirname, '..', '..', 'index.d.ts'), 'utf8');
    const names = [...declared.matchAll(/^export (?:class|function|namespace|const) (\w+)/gm)].map((m) => m[1]);
    assert.ok(names.includes('Model') && names.includes('IxgbeDevice'), names.join(' '));
    // A project that depends on ixy: node_modules/ixy is this package.
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-esm-'));
    try {
      fs.mkdirSync(path.join(project, 'node_modules'));
      fs.symlinkSync(path.join(__dirname, '..', '..'), path.join(project, 'node_modules', 'ixy'));
      const script = path.join(project, 'names.mjs');
      fs.writeFileSync(script, [
        `import ixy, { ${names.join(', ')} } from 'ixy';`,
        "import { createRequire } from 'module';",
        "const cjs = createRequire(import.meta.url)('ixy');",
        `const imported = { ${names.join(', ')} };`,
        'const wrong = Object.keys(imported).filter((n) => imported[n] === undefined || imported[n] !== cjs[n]);',
        'process.stdout.write(JSON.stringify({ wrong, sameDefault: ixy === cjs }));',
      ].join('\n'));
      const out = execFileSync(process.execPath, [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      assert.deepStrictEqual(JSON.parse(out), { wrong: [], sameDefault: true });
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });
});

describe('the package surface', function () {
  // package.json "exports": '.' and './package.json' only; what docs/api.md documents
  // comes from 'ixy' itself (issue 44), not from a path into lib/.
  it("exports '.' and './package.json' only: a path into lib/ is refused, the generator comes from 'ixy'", function () {
    const fs = require('fs');
    const os = require('os');
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-surface-'));
    try {
      fs.mkdirSync(path.join(project, 'node_modules'));
      fs.symlinkSync(path.join(__dirname, '..', '..'), path.join(project, 'node_modules', 'ixy'));
      const script = path.join(project, 'surface.js');
      fs.writeFileSync(script, [
        "const ixy = require('ixy');",
        "let deep = 'loaded';",
        "try { require('ixy/lib/traffic/generator'); } catch (err) { deep = err.code; }",
        "const version = require('ixy/package.json').version;",
        'const names = [ixy.Generator, ixy.FrameRecipe, ixy.parseRate, ixy.SoftwarePacer, ixy.generate, ixy.replay].map((x) => typeof x);',
        'process.stdout.write(JSON.stringify({ deep, version: typeof version, names, seqAt: new ixy.FrameRecipe().seqAt }));',
      ].join('\n'));
      const out = execFileSync(process.execPath, [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      assert.deepStrictEqual(JSON.parse(out), {
        deep: 'ERR_PACKAGE_PATH_NOT_EXPORTED', version: 'string', names: ['function', 'function', 'function', 'function', 'function', 'function'], seqAt: 42,
      });
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });
});

describe('TypeScript declarations', function () {
  it('declare what the library exports at run time', function () {
    const declared = require('fs').readFileSync(path.join(__dirname, '..', '..', 'index.d.ts'), 'utf8');
    for (const [, name] of declared.matchAll(/^export (?:class|function|namespace) (\w+)/gm)) {
      assert.notStrictEqual(ixy[name], undefined, `index.d.ts declares ${name}, lib/index.js does not export it`);
    }
    const inPacket = declared.slice(declared.indexOf('export namespace packet'));
    for (const [, name] of inPacket.matchAll(/^ {2}(?:function|const|class) (\w+)/gm)) {
      assert.notStrictEqual(packet[name], undefined, `packet.${name} is declared but not exported`);
    }
  });

  it('the example in test/types compiles against index.d.ts', function () {
    this.timeout(120000);
    const tsc = require.resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '--noEmit', '-p', path.join(__dirname, '..', 'types')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  });

  it('tsc rejects a misuse, so the check above can fail', function () {
    this.timeout(120000);
    const tsc = require.resolve('typescript/bin/tsc');
    assert.throws(
      () => execFileSync(process.execPath, [tsc, '--noEmit', '-p', path.join(__dirname, '..', 'types', 'bad')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
      (err) => {
        const out = String(err.stdout);
        assert.match(out, /TS2\d{3}/);
        // Each AF_XDP mode misspelt is one error of its own: their types are closed.
        assert.match(out, /Type '"skb"' is not assignable to type 'XdpAttachMode/);
        assert.match(out, /Type '"zero-copy"' is not assignable to type 'XdpBindMode/);
        return true;
      },
    );
  });
});
