'use strict';
// Tests of the 82599 device model (native/model) through lib/model.js and a
// minimal test driver (test/model-driver.js).

const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');
const { Model } = require('../lib/model');
const d = require('./model-driver');

const BIN = Model.binaryPath();
const hugeFree = () => Number(/HugePages_Free:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))[1]);

describe('device model', function () {
  this.timeout(10000);

  describe('command line', () => {
    it('rejects bad arguments with one line and exit 2, leaving nothing', () => {
      for (const args of [['--ports', '9'], ['--bogus'], ['--config', 'source 7']]) {
        const before = fs.readdirSync('/dev/shm').length;
        const r = childProcess.spawnSync(BIN, args, { encoding: 'utf8' });
        assert.strictEqual(r.status, 2);
        assert.strictEqual(r.stdout, '');
        assert.match(r.stderr, /^ixy-model: .+\n$/);
        assert.strictEqual(fs.readdirSync('/dev/shm').length, before);
      }
    });

    it('run -- shows the ports at /sys/bus/pci/devices and returns the exit status', () => {
      let r = childProcess.spawnSync(BIN, ['run', '--', 'cat', '/sys/bus/pci/devices/0000:ff:00.0/vendor'], { encoding: 'utf8' });
      assert.strictEqual(r.status, 0, r.stderr);
      assert.strictEqual(r.stdout, '0x8086\n');
      r = childProcess.spawnSync(BIN, ['run', '--', 'sh', '-c', 'ls /sys/bus/pci/devices; exit 3'], { encoding: 'utf8' });
      assert.strictEqual(r.status, 3);
      assert.deepStrictEqual(r.stdout.trim().split('\n'), ['0000:ff:00.0', '0000:ff:00.1']);
      assert.ok(fs.readdirSync('/sys/bus/pci/devices').every((a) => !a.startsWith('0000:ff:')), 'host sysfs untouched');
    });

    it('start fails with the model error line', async () => {
      await assert.rejects(Model.start({ ports: 0 }), /ixy-model: --ports must be 1\.\.8/);
    });
  });

  describe('registers and data path', () => {
    let model, dev, mem;
    beforeEach(async () => {
      model = await Model.start({ ports: 2 });
      dev = d.open(model, 0);
      mem = d.dmaMemory();
      d.busMaster(dev, true);
    });
    afterEach(async () => {
      if (mem) mem.free();
      await model.stop();
    });

    it('creates the PCI device files', () => {
      const cfg = fs.readFileSync(path.join(dev.dir, 'config'));
      assert.strictEqual(cfg.length, 4096);
      assert.strictEqual(cfg.readUInt16LE(0), 0x8086);
      assert.strictEqual(cfg.readUInt16LE(2), 0x10fb);
      assert.deepStrictEqual([...cfg.subarray(9, 12)], [0, 0, 2]);
      assert.strictEqual(fs.readFileSync(path.join(dev.dir, 'class'), 'utf8'), '0x020000\n');
      assert.ok(fs.existsSync(path.join(dev.dir, 'driver', 'unbind')));
      assert.strictEqual(fs.statSync(path.join(dev.dir, 'resource0')).size, 0x80000);
      assert.notStrictEqual(model.ports[0].mac, model.ports[1].mac);
    });

    it('resets to defaults: RST self-clears, EEC.ARD, DMAIDONE, MAC in RAL0/RAH0', async () => {
      dev.write(0x4240, 0);          // HLREG0 garbage
      dev.write(0x1234 * 4, 0xdeadbeef);
      await d.reset(dev);
      assert.strictEqual(dev.read(d.R.CTRL) & ((1 << 26) | (1 << 3)), 0);
      assert.ok(dev.read(d.R.EEC) & (1 << 9));
      assert.ok(dev.read(d.R.RDRXCTL) & (1 << 3));
      assert.strictEqual(dev.read(0x4240) & 2, 2, 'HLREG0.RXCRCSTRP default');
      assert.strictEqual(dev.read(0x1234 * 4), 0);
      const ral = dev.read(d.R.RAL0);
      const rah = dev.read(d.R.RAH0);
      const mac = [ral & 255, (ral >>> 8) & 255, (ral >>> 16) & 255, ral >>> 24, rah & 255, (rah >>> 8) & 255]
        .map((b) => b.toString(16).padStart(2, '0')).join(':');
      assert.strictEqual(mac, model.ports[0].mac);
      assert.ok(rah & 0x80000000, 'RAH.AV');
    });

    it('brings link up after AUTOC restart, forced down and up', async () => {
      await d.reset(dev);
      assert.strictEqual(dev.read(d.R.LINKS) & (1 << 30), 0);
      await d.linkUp(dev);
      assert.strictEqual((dev.read(d.R.LINKS) >>> 28) & 3, 3, '10 Gb/s');
      assert.strictEqual(dev.read(d.R.AUTOC) & (1 << 12), 0, 'restart self-clears');
      assert.strictEqual((await model.stats(0)).linkUp, true);
      await model.link(0, false);
      assert.strictEqual(dev.read(d.R.LINKS) & (1 << 30), 0);
      assert.strictEqual((await model.stats(0)).linkUp, false);
      await model.link(0, true);
      assert.ok(dev.read(d.R.LINKS) & (1 << 30));
    });

    async function rxReady(opts) {
      await d.reset(dev);
      await d.linkUp(dev);
      await d.setupRx(dev, mem, opts);
    }

    it('receives source frames with DD, EOP, length and the documented layout', async () => {
      await rxReady();
      await model.source(0, { size: 128, count: 10 });
      await model.waitFor(0, (s) => s.rxDelivered === 10);
      for (let i = 0; i < 10; i++) {
        const r = d.rxDesc(mem, i);
        assert.ok(r.dd && r.eop, `descriptor ${i} DD EOP`);
        assert.strictEqual(r.length, 128);
        const f = Buffer.from(r.data.subarray(0, 128));
        const want = Buffer.alloc(128);
        d.buildFrame(want, { size: 128, seq: i });
        assert.deepStrictEqual(f, want, `frame ${i}`);
      }
      assert.strictEqual(d.rxDesc(mem, 10).dd, false);
      await d.waitReg(dev, d.R.RDH, 0xffff, 10);
      assert.strictEqual(dev.read(d.R.GPRC), 10);
    });

    it('drops and counts frames when the ring and the packet buffer are full', async () => {
      await rxReady({ tail: 16 });
      dev.write(0x3c00, 8192);                  // RXPBSIZE(0): room for 97 60-byte frames
      await d.sleep(2);
      await model.source(0, { count: 200, rate: 1000000 });
      const s = await model.waitFor(0, (x) => x.rxOffered === 200);
      assert.strictEqual(s.rxDelivered, 16);
      assert.strictEqual(s.sourceBacklog, 97);
      assert.strictEqual(s.rxDropNoDesc, 200 - 16 - 97);
      await d.waitReg(dev, d.R.MPC0, 0xffffffff, 87);
      assert.strictEqual(dev.read(d.R.QPRDC0), 87);
      dev.write(d.R.RDT, 255);                  // room again: the waiting frames arrive
      const t = await model.waitFor(0, (x) => x.rxDelivered === 16 + 97);
      assert.strictEqual(t.sourceBacklog, 0);
    });

    it('drops frames for a foreign MAC unless FCTRL.UPE', async () => {
      await rxReady();
      await model.source(0, { count: 5, dst: '02:11:22:33:44:55' });
      let s = await model.waitFor(0, (x) => x.rxOffered === 5);
      assert.strictEqual(s.rxDropFiltered, 5);
      assert.strictEqual(s.rxDelivered, 0);
      dev.write(d.R.FCTRL, dev.read(d.R.FCTRL) | (1 << 9));
      await d.sleep(5);
      await model.source(0, { count: 5, dst: '02:11:22:33:44:55' });
      s = await model.waitFor(0, (x) => x.rxDelivered === 5);
      assert.strictEqual(s.rxDropFiltered, 5);
      await model.source(0, { count: 3, dst: 'broadcast' });   // BAM not set
      s = await model.waitFor(0, (x) => x.rxOffered === 13);
      assert.strictEqual(s.rxDropFiltered, 8);
    });

    it('drops frames larger than the buffer as oversize, never writing past it', async () => {
      await rxReady({ srrctl: (1 << 25) | 1 });                   // 1 KiB buffers
      mem.bytes.fill(0xab, d.rxBuf(0), d.rxBuf(1));
      await model.source(0, { count: 4, size: 1500 });
      const s = await model.waitFor(0, (x) => x.rxOffered === 4);
      assert.strictEqual(s.rxDropOversize, 4);
      assert.ok(mem.bytes.subarray(d.rxBuf(0), d.rxBuf(1)).every((b) => b === 0xab));
      await model.source(0, { count: 2, size: 1000 });
      await model.waitFor(0, (x) => x.rxDelivered === 2);
    });

    it('bus master off: no DMA, counted as rxDropDisabled', async () => {
      await rxReady();
      d.busMaster(dev, false);
      await d.sleep(5);
      await model.source(0, { count: 5, rate: 1000 });
      const s = await model.waitFor(0, (x) => x.rxOffered === 5);
      assert.strictEqual(s.rxDropDisabled, 5);
      assert.strictEqual(d.rxDesc(mem, 0).dd, false);
    });

    it('transmits: DD written back for RS, sink checks sequence and checksum', async () => {
      await d.reset(dev);
      await d.linkUp(dev);
      await d.setupTx(dev, mem);
      await model.sink(0, { check: true });
      for (let i = 0; i < 20; i++) {
        d.buildFrame(mem.bytes.subarray(d.txBuf(i)), { size: 100, seq: i });
        d.txDesc(mem, i, 100);
      }
      dev.write(d.R.TDT, 20);
      const s = await model.waitFor(0, (x) => x.txFrames === 20);
      assert.strictEqual(s.sinkFrames, 20);
      assert.strictEqual(s.sinkSeqErrors, 0);
      assert.strictEqual(s.sinkBadFrames, 0);
      assert.strictEqual(s.txBytes, 2000);
      for (let i = 0; i < 20; i++) assert.ok(d.txDone(mem, i), `DD ${i}`);
      await d.waitReg(dev, d.R.TDH, 0xffff, 20);
      assert.strictEqual(dev.read(d.R.GPTC), 20);
    });

    it('reports a bad DMA address in descErrors, completes it and keeps running', async () => {
      await d.reset(dev);
      await d.linkUp(dev);
      await d.setupTx(dev, mem);
      await model.sink(0);
      d.txDesc(mem, 0, 60, 0x7ff0_0000_0000);
      d.txDesc(mem, 1, 60);
      dev.write(d.R.TDT, 2);
      const s = await model.waitFor(0, (x) => x.descErrors >= 1 && x.txFrames === 1, 3000);
      assert.ok(d.txDone(mem, 0) && d.txDone(mem, 1));
      assert.strictEqual(s.sinkFrames, 1);
      assert.strictEqual((await model.stats(1)).descErrors, 0);
    });

    it('cable: TX of port 0 arrives in RX of port 1', async () => {
      const dev1 = d.open(model, 1);
      const mem1 = d.dmaMemory();
      try {
        d.busMaster(dev1, true);
        await d.reset(dev1);
        await d.linkUp(dev1);
        await d.setupRx(dev1, mem1);
        await d.reset(dev);
        await d.linkUp(dev);
        await d.setupTx(dev, mem);
        await model.cable(0, 1);
        d.buildFrame(mem.bytes.subarray(d.txBuf(0)), { size: 64, seq: 7, dst: [2, 0, 0, 0, 0xff, 1] });
        d.txDesc(mem, 0, 64);
        dev.write(d.R.TDT, 1);
        await model.waitFor(1, (x) => x.rxDelivered === 1);
        const r = d.rxDesc(mem1, 0);
        assert.strictEqual(r.length, 64);
        assert.strictEqual(Buffer.from(r.data).readUInt32BE(42), 7);
      } finally {
        mem1.free();
      }
    });
  });

  describe('lifecycle', () => {
    it('survives a driver killed mid-transfer and gives its hugepages back', async () => {
      const model = await Model.start({ ports: 1, config: ['source 0 rate=0'] });
      try {
        const before = hugeFree();
        const child = childProcess.spawn(process.execPath,
          [path.join(__dirname, 'model-child.js'), JSON.stringify({ dir: model.dir, addresses: model.addresses })],
          { stdio: ['ignore', 'pipe', 'inherit'] });
        await new Promise((resolve, reject) => {
          child.stdout.once('data', resolve);
          child.once('exit', () => reject(new Error('driver child died')));
        });
        await model.waitFor(0, (s) => s.rxDelivered > 1000, 3000);
        assert.ok(hugeFree() <= before - 5);
        child.kill('SIGKILL');
        const end = Date.now() + 3000;
        while (hugeFree() !== before && Date.now() < end) await d.sleep(20);
        assert.strictEqual(hugeFree(), before, 'hugepages returned');
        const s = await model.stats(0);
        assert.strictEqual(s.dmaOwnerPid, 0);
        assert.strictEqual(s.rxQueueActive, false);
      } finally {
        await model.stop();
      }
    });

    it('exits and removes its files when the process that started it is killed', async () => {
      // A Node process starts a model and is killed with SIGKILL: no 'exit' handler runs.
      const script = `require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'model'))}).Model.start({ ports: 1 })` +
        '.then((m) => { console.log(JSON.stringify({ pid: m.pid, dir: m.dir })); setInterval(() => {}, 1000); });';
      const parent = childProcess.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const line = await new Promise((resolve) => parent.stdout.once('data', (b) => resolve(String(b))));
      const { pid, dir } = JSON.parse(line);
      assert.ok(fs.existsSync(dir));
      parent.kill('SIGKILL');
      const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
      for (let t = 0; t < 100 && (alive() || fs.existsSync(dir)); t++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!alive(), `model ${pid} still running`);
      assert.ok(!fs.existsSync(dir), `${dir} left behind`);
    });

    it('removes its files and socket on stop, and after SIGKILL via stop()', async () => {
      let model = await Model.start({ ports: 3 });
      assert.ok(fs.existsSync(model.socket));
      await model.stop();
      assert.ok(!fs.existsSync(model.dir));
      assert.ok(!fs.readFileSync('/proc/mounts', 'utf8').includes(model.dir));
      model = await Model.start({ ports: 1 });
      process.kill(model.pid, 'SIGKILL');
      await model.stop();
      assert.ok(!fs.existsSync(model.dir));
    });
  });
});
