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
      for (const args of [['--ports', '9'], ['--bogus'], ['--config', 'source 7'], ['--device', '1234'],
        ['--device', '10fb,zz'], ['--iommu', 'bogus'], ['--config', 'source 0 size=13'], ['--config', 'source 0 udpsum=maybe']]) {
        const r = childProcess.spawnSync(BIN, args, { encoding: 'utf8' });
        assert.strictEqual(r.status, 2);
        assert.strictEqual(r.stdout, '');
        assert.match(r.stderr, /^ixy-model: .+\n$/);
        // its own directory only: other tests may start models meanwhile
        const left = fs.readdirSync('/dev/shm').filter((n) => n.startsWith(`ixy-model-${r.pid}-`));
        assert.deepStrictEqual(left, [], `${args.join(' ')} left its directory`);
      }
    });

    // Issue 34, 3 and 4: the model's directory is its own, made by it where nobody can have
    // made it first, and it removes only what it made there.
    it('makes its default directory afresh and private (0700), not at a name others can take first', async () => {
      const model = await Model.start({ ports: 1 });
      try {
        assert.notStrictEqual(model.dir, `/dev/shm/ixy-model-${model.pid}`);
        const st = fs.lstatSync(model.dir);
        assert.ok(st.isDirectory());
        assert.strictEqual(st.mode & 0o7777, 0o700);
        assert.strictEqual(st.uid, process.getuid());
      } finally {
        await model.stop();
      }
      assert.ok(!fs.existsSync(model.dir), 'left its directory');
    });

    it('--dir refuses a path that exists (an empty directory, /dev/shm) and touches nothing there', () => {
      const empty = fs.mkdtempSync('/tmp/ixy-model-dir-');
      try {
        for (const dir of [empty, '/dev/shm']) {
          const before = fs.readdirSync(dir).sort();
          const r = childProcess.spawnSync(BIN, ['--dir', dir], { encoding: 'utf8', timeout: 10000 });
          assert.strictEqual(r.status, 2, r.stderr);
          assert.match(r.stderr, /^ixy-model: '.*' exists: the model makes its own directory, give a path that does not exist yet\n$/);
          assert.deepStrictEqual(fs.readdirSync(dir).sort().filter((n) => before.includes(n) || !n.startsWith('ixy-model-')), before);
        }
      } finally {
        fs.rmSync(empty, { recursive: true, force: true });
      }
    });

    it('on stop removes what it made in --dir DIR, and leaves a file another program put there', async () => {
      const parent = fs.mkdtempSync('/tmp/ixy-model-dir-');
      const dir = path.join(parent, 'model');
      try {
        const model = await Model.start({ ports: 2, dir });
        assert.strictEqual(fs.statSync(dir).mode & 0o7777, 0o700);
        fs.writeFileSync(path.join(dir, 'not-the-models'), 'kept\n');
        await model.stop();
        assert.deepStrictEqual(fs.readdirSync(dir), ['not-the-models']);
        assert.strictEqual(fs.readFileSync(path.join(dir, 'not-the-models'), 'utf8'), 'kept\n');
      } finally {
        fs.rmSync(parent, { recursive: true, force: true });
      }
    });

    it('sweeps no stale-looking directory that is not provably its own user\'s model\'s', async () => {
      const planted = ['/dev/shm/ixy-model-999999', '/dev/shm/ixy-model-999998-abcdef', '/dev/shm/ixy-model-999997-ghijkl'];
      fs.mkdirSync(planted[0], { mode: 0o700 });
      fs.mkdirSync(planted[1], { mode: 0o700 });
      fs.chownSync(planted[1], 65534, 65534); // another user's
      fs.mkdirSync(planted[2]);
      fs.chmodSync(planted[2], 0o755); // not made as the model makes its own
      for (const d of planted) fs.writeFileSync(path.join(d, 'file'), 'x');
      const stale = '/dev/shm/ixy-model-999996-mnopqr'; // as a model of this user leaves it when killed
      fs.mkdirSync(stale, { mode: 0o700 });
      try {
        const model = await Model.start({ ports: 1 });
        await model.stop();
        for (const d of planted) assert.ok(fs.existsSync(path.join(d, 'file')), `${d} swept`);
        assert.ok(!fs.existsSync(stale), 'a stale directory of its own left');
      } finally {
        for (const d of [...planted, stale]) fs.rmSync(d, { recursive: true, force: true });
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

    it('--help prints the usage and exits 0', () => {
      const r = childProcess.spawnSync(BIN, ['--help'], { encoding: 'utf8' });
      assert.strictEqual(r.status, 0, r.stderr);
      assert.match(r.stdout, /^usage: ixy-model \[--ports N\]/);
      assert.match(r.stdout, /--config "CMD; \.\."/);
      assert.strictEqual(r.stderr, '');
    });

    it('Model.attach(dir) reaches a running model from another process; stop() asks it to quit', async () => {
      const model = await Model.start({ ports: 2, config: ['source 1 rate=1000'] });
      try {
        const child = childProcess.spawnSync(process.execPath, ['-e', `
          const { Model } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'model'))});
          Model.attach(${JSON.stringify(model.dir)}).then(async (m) => {
            const s = await m.waitFor(1, (p) => p.rxOffered > 0, 5000);
            console.log(JSON.stringify({ pid: m.pid, addresses: m.addresses, mac: m.ports[1].mac, offered: s.rxOffered }));
            m.close(); // and the process ends by itself: an idle connection keeps nothing alive
          });`], { encoding: 'utf8', timeout: 10000 });
        assert.strictEqual(child.status, 0, child.stderr);
        const seen = JSON.parse(child.stdout);
        assert.deepStrictEqual([seen.pid, seen.addresses, seen.mac], [model.pid, model.addresses, model.ports[1].mac]);
        assert.ok(seen.offered > 0);

        const attached = await Model.attach(model.dir);
        await attached.stop();
        await model._exited;
        assert.ok(!fs.existsSync(model.dir), 'the model left its directory');
      } finally {
        await model.stop();
      }
      await assert.rejects(Model.attach(model.dir), { name: 'IxyError', code: 'ENOMODEL', message: /no device model answers at .*control\.sock/ });
    });

    it('start fails with the model error line', async () => {
      await assert.rejects(Model.start({ ports: 0 }), /ixy-model: --ports must be 1\.\.8/);
    });
  });

  describe('registers and data path', () => {
    let model, dev, mem;
    beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0)); });
    afterEach(() => d.stopPort({ model, mem }));

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
      assert.strictEqual(await d.collectStat(dev, d.R.GPRC, 10), 10);
    });

    it('without SRRCTL.DROP_EN frames wait in the packet buffer; what overflows counts in MPC', async () => {
      await rxReady({ tail: 16, srrctl: (1 << 25) | 2 });
      dev.write(d.R.RXPBSIZE0, 8192);           // RXPBSIZE(0): room for 97 60-byte frames
      await d.sleep(2);
      await model.source(0, { count: 200, rate: 1000000 });
      const s = await model.waitFor(0, (x) => x.rxOffered === 200);
      assert.strictEqual(s.rxDelivered, 16);
      assert.strictEqual(s.sourceBacklog, 97);
      assert.strictEqual(s.rxDropNoDesc, 200 - 16 - 97);
      assert.strictEqual(await d.collectStat(dev, d.R.MPC0, 87), 87);
      await d.sleep(5);
      assert.strictEqual(d.readStat(dev, d.R.QPRDC0), 0);
      dev.write(d.R.RDT, 255);                  // room again: the waiting frames arrive
      const t = await model.waitFor(0, (x) => x.rxDelivered === 16 + 97);
      assert.strictEqual(t.sourceBacklog, 0);
    });

    it('with SRRCTL.DROP_EN a frame without a descriptor is dropped at once and counted in QPRDC', async () => {
      await rxReady({ tail: 16 });              // setupRx sets DROP_EN by default
      await model.source(0, { count: 200, rate: 1000000 });
      const s = await model.waitFor(0, (x) => x.rxOffered === 200);
      assert.strictEqual(s.rxDelivered, 16);
      assert.strictEqual(s.sourceBacklog, 0);
      assert.strictEqual(s.rxDropNoDesc, 184);
      assert.strictEqual(await d.collectStat(dev, d.R.QPRDC0, 184), 184);
      await d.sleep(5);
      assert.strictEqual(d.readStat(dev, d.R.MPC0), 0);
      dev.write(d.R.RDT, 255);                  // nothing was kept back
      await d.sleep(10);
      assert.strictEqual((await model.stats(0)).rxDelivered, 16);
    });

    it('a source does not offer frames for the time the model itself was stopped', async () => {
      // With DROP_EN and 255 free descriptors, 10 kpps would fill the ring in 25 ms; the
      // 300 ms the model is stopped for would otherwise arrive at once as ~2,700 drops.
      await rxReady({ tail: 255 });
      await model.source(0, { rate: 10000 });
      process.kill(model.pid, 'SIGSTOP');
      await d.sleep(300);
      process.kill(model.pid, 'SIGCONT');
      const s = await model.waitFor(0, (x) => x.sourcePausedUs > 0);
      assert.ok(s.sourcePausedUs >= 299000, `paused ${s.sourcePausedUs} us`);
      assert.strictEqual(s.rxDropNoDesc, 0);
      assert.ok(s.rxOffered < 255, `offered ${s.rxOffered}`);
    });

    it('hands statistics over only into registers that read 0 (clear-on-read emulation)', async () => {
      await rxReady();
      await model.source(0, { count: 10 });
      await model.waitFor(0, (x) => x.rxDelivered === 10);
      await d.waitReg(dev, d.R.RDH, 0xffff, 10);
      const first = dev.read(d.R.GPRC);
      assert.ok(first > 0 && first <= 10, `GPRC ${first}`);
      await model.source(0, { count: 10 });
      await model.waitFor(0, (x) => x.rxDelivered === 20);
      await d.sleep(5);
      assert.strictEqual(dev.read(d.R.GPRC), first, 'a register never cleared keeps its first value');
      // a driver that clears after reading sees each frame exactly once
      assert.strictEqual(await d.collectStat(dev, d.R.GPRC, 20), 20);
      assert.strictEqual(await d.collectStat(dev, d.R.QPRC0, 20), 20);
      assert.strictEqual(await d.collectStat(dev, d.R.TPR, 20), 20);
      // GORC (36 bits, FCS counted): both halves must read 0 before new counts arrive
      let octets = 0;
      const end = Date.now() + 1000;
      while (octets < 20 * 64 && Date.now() < end) {
        const lo = dev.read(d.R.GORCL);
        const hi = dev.read(d.R.GORCH);
        if (lo || hi) { octets += hi * 2 ** 32 + lo; dev.write(d.R.GORCL, 0); dev.write(d.R.GORCH, 0); }
        await d.sleep(1);
      }
      assert.strictEqual(octets, 20 * 64);
      await d.sleep(5);
      assert.strictEqual(d.readStat(dev, d.R.GPRC), 0, 'nothing counted twice');
    });

    it('reports packet type and checksums in the write-back: IPCS, L4CS/UDPCS, IPE, L4E', async () => {
      await rxReady();
      const { RXD } = d;
      const CS = RXD.IPCS | RXD.L4CS | RXD.UDPCS | RXD.DD | RXD.EOP;
      const cases = [
        ['udpsum=good', CS, 0],
        ['udpsum=zero', CS, RXD.TCPE],            // 82599 erratum: UDP checksum 0 reported as L4E
        ['udpsum=bad', CS, RXD.TCPE],
        ['ipsum=bad udpsum=good', CS, RXD.IPE],
        ['ipsum=bad udpsum=bad', CS, (RXD.IPE | RXD.TCPE) >>> 0],
      ];
      let at = 0;
      for (const [opts, status, errors] of cases) {
        await model.command(`source 0 count=4 size=301 flows=3 ${opts}`);
        await model.waitFor(0, (x) => x.rxDelivered === at + 4);
        for (let i = at; i < at + 4; i++) {
          const r = d.rxDesc(mem, i);
          assert.strictEqual(r.pktType, RXD.PKT_IPV4 | RXD.PKT_UDP, `${opts} packet type`);
          assert.strictEqual(r.status, status, `${opts} status of frame ${i - at}`);
          assert.strictEqual(r.errors, errors, `${opts} errors of frame ${i - at}`);
          const f = r.data;
          const ip = d.csumFold(d.csumAdd(f, 14, 34));
          const udp = d.csumFold(d.csumAdd(f, 34, 301, d.csumAdd(f, 26, 34, 17 + 301 - 34)));
          assert.strictEqual(ip === 0xffff, !(errors & RXD.IPE), `${opts}: IPv4 checksum as reported`);
          if (opts.includes('udpsum=good')) assert.strictEqual(udp, 0xffff, `${opts}: UDP checksum of frame ${i - at}`);
          if (opts.includes('udpsum=bad')) assert.notStrictEqual(udp, 0xffff);
          assert.strictEqual(Buffer.from(f).readUInt32BE(42), i - at, 'sequence number');
        }
        at += 4;
      }
    });

    it('checks TCP, leaves fragments and non-IP frames alone (frames from a pcap file)', async () => {
      await rxReady();
      const frames = [];
      const ipv4 = (proto, payload, { frag = false } = {}) => {
        const f = Buffer.alloc(34 + payload.length);
        f.set([2, 0, 0, 0, 0xff, 0, 2, 0, 0, 0, 0xee, 9, 8, 0], 0);
        f.set([0x45, 0, 0, 20 + payload.length, 0, 0, frag ? 0x20 : 0, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 1, 0, 1], 14);
        f.writeUInt16BE(~d.csumFold(d.csumAdd(f, 14, 34)) & 0xffff, 24);
        payload.copy(f, 34);
        return f;
      };
      const tcp = Buffer.alloc(40);
      tcp.writeUInt16BE(1234, 0); tcp.writeUInt16BE(80, 2); tcp[12] = 0x50;
      for (let k = 20; k < 40; k++) tcp[k] = k;
      const good = ipv4(6, tcp);
      good.writeUInt16BE(~d.csumFold(d.csumAdd(good, 34, 74, d.csumAdd(good, 26, 34, 6 + 40))) & 0xffff, 50);
      const bad = Buffer.from(good);
      bad[60] ^= 1;
      const udp = Buffer.alloc(30);
      udp.writeUInt16BE(7, 0); udp.writeUInt16BE(9, 2); udp.writeUInt16BE(30, 4); udp.writeUInt16BE(0x1234, 6);
      const arp = Buffer.alloc(60);
      arp.set([2, 0, 0, 0, 0xff, 0, 2, 0, 0, 0, 0xee, 9, 8, 6], 0);
      frames.push(good, bad, ipv4(17, udp, { frag: true }), arp);
      const file = path.join(fs.mkdtempSync('/tmp/ixy-model-'), 'in.pcap');
      const head = Buffer.alloc(24);
      head.writeUInt32LE(0xa1b2c3d4, 0); head.writeUInt16LE(2, 4); head.writeUInt16LE(4, 6);
      head.writeUInt32LE(65535, 16); head.writeUInt32LE(1, 20);
      const recs = frames.map((f) => { const h = Buffer.alloc(16); h.writeUInt32LE(f.length, 8); h.writeUInt32LE(f.length, 12); return Buffer.concat([h, f]); });
      fs.writeFileSync(file, Buffer.concat([head, ...recs]));
      try {
        await model.pcapIn(0, file);
        await model.waitFor(0, (x) => x.rxDelivered === 4);
      } finally {
        fs.rmSync(path.dirname(file), { recursive: true });
      }
      const { RXD } = d;
      const got = [0, 1, 2, 3].map((i) => d.rxDesc(mem, i));
      assert.deepStrictEqual(got.map((r) => r.pktType), [RXD.PKT_IPV4 | RXD.PKT_TCP, RXD.PKT_IPV4 | RXD.PKT_TCP, RXD.PKT_IPV4, 0]);
      const base = RXD.DD | RXD.EOP;
      assert.deepStrictEqual(got.map((r) => r.status),
        [base | RXD.IPCS | RXD.L4CS, base | RXD.IPCS | RXD.L4CS, base | RXD.IPCS, base]);
      assert.deepStrictEqual(got.map((r) => r.errors), [0, RXD.TCPE, 0, 0]);
    });

    it('bad FCS and runts: counted (CRCERRS, RUC) and dropped, or kept with RXE under FCTRL.SBP', async () => {
      await rxReady();
      await model.command('source 0 count=5 fcs=bad');
      let s = await model.waitFor(0, (x) => x.rxOffered === 5);
      assert.strictEqual(s.rxDropCrc, 5);
      await model.command('source 0 count=3 size=40');
      s = await model.waitFor(0, (x) => x.rxOffered === 8);
      assert.strictEqual(s.rxDropRunt, 3);
      assert.strictEqual(s.rxDelivered, 0);
      assert.strictEqual(d.rxDesc(mem, 0).dd, false);
      assert.strictEqual(await d.collectStat(dev, d.R.CRCERRS, 5), 5);
      assert.strictEqual(await d.collectStat(dev, d.R.RUC, 3), 3);
      assert.strictEqual(d.readStat(dev, d.R.GPRC), 0);

      dev.write(d.R.FCTRL, dev.read(d.R.FCTRL) | 2);      // SBP: store bad packets
      await d.sleep(5);
      await model.command('source 0 count=2 fcs=bad udpsum=good');
      await model.waitFor(0, (x) => x.rxDelivered === 2);
      await model.command('source 0 count=2 size=40');
      await model.waitFor(0, (x) => x.rxDelivered === 4);
      await model.command('source 0 count=2 size=20 fcs=bad');  // a runt with a bad FCS: RFC
      s = await model.waitFor(0, (x) => x.rxDelivered === 6);
      const { RXD } = d;
      for (const [i, len] of [[0, 60], [1, 60], [2, 40], [3, 40], [4, 20], [5, 20]]) {
        const r = d.rxDesc(mem, i);
        assert.ok(r.dd && r.eop);
        assert.strictEqual(r.length, len);
        assert.strictEqual(r.errors & RXD.RXE, RXD.RXE, `RXE on frame ${i}`);
      }
      assert.strictEqual(d.rxDesc(mem, 0).status & RXD.L4CS, RXD.L4CS, 'checksums reported too');
      assert.strictEqual(s.rxDropCrc, 5);
      assert.strictEqual(s.rxDropRunt, 3);
      assert.strictEqual(await d.collectStat(dev, d.R.CRCERRS, 2), 2);
      assert.strictEqual(await d.collectStat(dev, d.R.RUC, 2), 2);
      assert.strictEqual(await d.collectStat(dev, d.R.RFC, 2), 2);
      await d.sleep(5);
      assert.strictEqual(d.readStat(dev, d.R.GPRC), 0, 'bad frames are not good frames');
    });

    it('drops frames over the maximum frame size (ROC), even with SBP; JUMBOEN raises it to MFS', async () => {
      await rxReady();
      dev.write(d.R.FCTRL, dev.read(d.R.FCTRL) | 2);
      await d.sleep(2);
      await model.command('source 0 count=3 size=1515');      // 1519 bytes with FCS
      let s = await model.waitFor(0, (x) => x.rxOffered === 3);
      assert.strictEqual(s.rxDropOversize, 3);
      assert.strictEqual(await d.collectStat(dev, d.R.ROC, 3), 3);
      await model.command('source 0 count=1 size=1514');
      await model.waitFor(0, (x) => x.rxDelivered === 1);
      dev.write(d.R.HLREG0, dev.read(d.R.HLREG0) | 4);        // JUMBOEN
      dev.write(d.R.MAXFRS, 2000 << 16);
      await d.sleep(2);
      await model.command('source 0 count=1 size=1996');
      await model.command('source 0 count=1 size=1997');
      s = await model.waitFor(0, (x) => x.rxOffered === 6);
      assert.strictEqual(s.rxDelivered, 2);
      assert.strictEqual(s.rxDropOversize, 4);
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

    it('spreads a frame larger than one buffer over descriptors, never writing past a buffer', async () => {
      await rxReady({ srrctl: (1 << 25) | (1 << 28) | 1 });      // 1 KiB buffers
      dev.write(d.R.HLREG0, dev.read(d.R.HLREG0) | 4);           // JUMBOEN, MFS 9018
      dev.write(d.R.MAXFRS, 9018 << 16);
      mem.bytes.fill(0xab, d.rxBuf(0), d.rxBuf(8));
      await d.sleep(2);
      await model.source(0, { count: 2, size: 3000 });
      const s = await model.waitFor(0, (x) => x.rxDelivered === 2);
      assert.strictEqual(s.rxBytes, 6000);
      const { RXD } = d;
      for (let f = 0; f < 2; f++) {
        const want = Buffer.alloc(3000);
        d.buildFrame(want, { size: 3000, seq: f });
        const parts = [];
        for (let k = 0; k < 3; k++) {
          const r = d.rxDesc(mem, 3 * f + k);
          const last = k === 2;
          assert.strictEqual(r.length, last ? 952 : 1024, `PKT_LEN of part ${k}`);
          assert.ok(r.dd, `DD on part ${k}`);
          assert.strictEqual(r.eop, last, `EOP only on the last part (${k})`);
          assert.strictEqual(r.status & RXD.IPCS, last ? RXD.IPCS : 0, 'status only on the last part');
          assert.strictEqual(r.pktType, last ? RXD.PKT_IPV4 | RXD.PKT_UDP : 0);
          parts.push(Buffer.from(r.data.subarray(0, r.length)));
          assert.ok(r.data.subarray(r.length, 2048).every((b) => b === 0xab), `nothing past part ${k}`);
        }
        assert.deepStrictEqual(Buffer.concat(parts), want, `frame ${f}`);
      }
      assert.strictEqual(d.rxDesc(mem, 6).dd, false);
      // the FCS kept: the output stream (frame + 4 FCS bytes) is spread the same way
      dev.write(d.R.RDRXCTL, dev.read(d.R.RDRXCTL) & ~2);
      dev.write(d.R.HLREG0, dev.read(d.R.HLREG0) & ~2);
      await d.sleep(2);
      await model.source(0, { count: 1, size: 2046 });          // 2050 bytes: 1024 + 1024 + 2
      await model.waitFor(0, (x) => x.rxDelivered === 3);
      const parts = [6, 7, 8].map((i) => d.rxDesc(mem, i));
      assert.deepStrictEqual(parts.map((r) => r.length), [1024, 1024, 2]);
      const out = Buffer.concat(parts.map((r) => Buffer.from(r.data.subarray(0, r.length))));
      assert.strictEqual(out.readUInt32LE(2046), require('zlib').crc32(out.subarray(0, 2046)));
    });

    it('drops a multi-buffer frame the ring has too few descriptors for; BSIZEPACKET 0 is an error', async () => {
      await rxReady({ srrctl: (1 << 25) | (1 << 28) | 1, tail: 2 });
      dev.write(d.R.HLREG0, dev.read(d.R.HLREG0) | 4);
      dev.write(d.R.MAXFRS, 9018 << 16);
      await d.sleep(2);
      await model.source(0, { count: 1, size: 3000, rate: 1000 });
      let s = await model.waitFor(0, (x) => x.rxOffered === 1);
      assert.strictEqual(s.rxDropNoDesc, 1);
      assert.strictEqual(d.rxDesc(mem, 0).dd, false);
      dev.write(d.R.SRRCTL, (1 << 25) | (1 << 28));              // BSIZEPACKET 0: not allowed
      dev.write(d.R.RDT, 255);
      await d.sleep(2);
      await model.source(0, { count: 2 });
      s = await model.waitFor(0, (x) => x.rxOffered === 3);
      assert.strictEqual(s.descErrors, 2);
      assert.strictEqual(s.rxDelivered, 0);
      assert.strictEqual(d.rxDesc(mem, 0).dd, false);
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

    it('a TX queue turned off and on between two scans starts again from the TDH software wrote', async () => {
      await d.reset(dev);
      await d.linkUp(dev);
      await d.setupTx(dev, mem);
      for (let i = 0; i < 5; i++) d.txDesc(mem, i, 100);
      dev.write(d.R.TDT, 5);
      await d.waitReg(dev, d.R.TDH, 0xffff, 5); // sent, and TDH published
      await model.stall(0, 300);
      for (let i = 5; i < 8; i++) d.txDesc(mem, i, 100);
      dev.write(d.R.TDT, 8);
      await d.sleep(20);
      const before = (await model.stats(0)).txFrames;
      // Off, rewound and on again at once, as a driver recovering from a hang does: far
      // quicker than the model's scan, so only the rewritten TDH tells it.
      dev.write(d.R.TXDCTL, dev.read(d.R.TXDCTL) & ~(1 << 25));
      mem.u32.fill(0, (64 * 1024) / 4, (64 * 1024 + 256 * 16) / 4);
      dev.write(d.R.TDH, 0);
      dev.write(d.R.TDT, 0);
      dev.write(d.R.TXDCTL, dev.read(d.R.TXDCTL) | (1 << 25));
      for (let i = 0; i < 2; i++) d.txDesc(mem, i, 100);
      dev.write(d.R.TDT, 2);
      const s = await model.waitFor(0, (x) => x.txFrames >= before + 2, 2000);
      await d.sleep(50);
      assert.strictEqual((await model.stats(0)).txFrames, before + 2, 'exactly the two new frames, from descriptor 0');
      assert.strictEqual(s.descErrors, 0);
      assert.ok(d.txDone(mem, 0) && d.txDone(mem, 1));
      await d.waitReg(dev, d.R.TDH, 0xffff, 2);
    });

    it('does not send frames shorter than 17 or longer than 1514 bytes, but completes them', async () => {
      await d.reset(dev);
      await d.linkUp(dev);
      await d.setupTx(dev, mem);
      await model.sink(0);
      const lens = [16, 60, 1515, 17, 1514];
      lens.forEach((len, i) => d.txDesc(mem, i, len));
      d.txDesc(mem, 5, 10, undefined, false);       // 10 + 6 bytes over two descriptors
      d.txDesc(mem, 6, 6);
      d.txDesc(mem, 7, 1000, undefined, false);     // 1000 + 515 bytes
      d.txDesc(mem, 8, 515);
      dev.write(d.R.TDT, 9);
      const s = await model.waitFor(0, (x) => x.txFrames + x.txDropBadLength === 7);
      assert.strictEqual(s.txFrames, 3);
      assert.strictEqual(s.txBytes, 60 + 17 + 1514);
      assert.strictEqual(s.txDropBadLength, 4);
      for (let i = 0; i < 9; i++) assert.ok(d.txDone(mem, i), `DD ${i}`);
      assert.strictEqual(await d.collectStat(dev, d.R.GPTC, 3), 3);
      // with jumbo frames the limit is MFS - 4
      dev.write(d.R.HLREG0, dev.read(d.R.HLREG0) | 4);
      dev.write(d.R.MAXFRS, 3000 << 16);
      // The model takes MAXFRS in its slow scan, where it also answers commands: after two
      // answers a whole scan has passed since the write.
      await model.stats(0);
      await model.stats(0);
      d.txDesc(mem, 9, 2996);
      d.txDesc(mem, 10, 2997);
      dev.write(d.R.TDT, 11);
      const t = await model.waitFor(0, (x) => x.txFrames + x.txDropBadLength === 9);
      assert.strictEqual(t.txFrames, 4);
      assert.strictEqual(t.txDropBadLength, 5);
    });

    it('RAL/RAH 0 at the 82598 offsets 0x5400/0x5404 alias 0xA200/0xA204', async () => {
      await d.reset(dev);
      assert.strictEqual(dev.read(d.R.RAL0_82598), dev.read(d.R.RAL0));
      assert.strictEqual(dev.read(d.R.RAH0_82598), dev.read(d.R.RAH0));
      assert.strictEqual(dev.read(d.R.RAL0_82598), 0x00000002);   // 02:00:00:00:ff:00
      assert.strictEqual(dev.read(d.R.RAH0_82598), (0x80000000 | 0xff) >>> 0);
      dev.write(d.R.RAL0_82598, 0x44332211);
      await d.waitReg(dev, d.R.RAL0, 0xffffffff, 0x44332211);
      dev.write(d.R.RAH0, 0x80006655);
      await d.waitReg(dev, d.R.RAH0_82598, 0xffffffff, 0x80006655);
      assert.strictEqual(dev.read(d.R.RAL0_82598), 0x44332211);
    });

    it('remove PORT: every register and config byte reads all-ones, the port is gone', async () => {
      await rxReady();
      await model.source(0, { rate: 1000 });
      await model.command('remove 0');
      for (const off of [d.R.CTRL, d.R.LINKS, d.R.RDH, d.R.GPRC, 0x7fffc]) assert.strictEqual(dev.read(off), 0xffffffff);
      const cfg = fs.readFileSync(path.join(dev.dir, 'config'));
      assert.ok(cfg.every((b) => b === 0xff));
      dev.write(d.R.CTRL, 1 << 26);                           // writes go nowhere
      await d.sleep(30);
      assert.strictEqual(dev.read(d.R.CTRL), 0xffffffff);
      assert.strictEqual(dev.read(d.R.EEC), 0xffffffff);
      const s = await model.stats(0);
      assert.strictEqual(s.removed, true);
      assert.strictEqual(s.linkUp, false);
      await assert.rejects(model.source(0, {}), /port removed/);
      // stopping the model removes every port the same way
      const dev1 = d.open(model, 1);
      assert.strictEqual(dev1.read(d.R.EEC) & (1 << 9), 1 << 9);
      await model.stop();
      assert.strictEqual(dev1.read(d.R.EEC), 0xffffffff);
      assert.strictEqual(dev1.read(d.R.RAL0), 0xffffffff);
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

  describe('device IDs, link modes and IOMMU', () => {
    it('--device sets the device ID and the NVM link mode; the link needs that mode', async () => {
      const model = await Model.start({ ports: 2, device: ['10fc', '10fb'] });
      try {
        const dev = d.open(model, 0);
        const dev1 = d.open(model, 1);
        assert.strictEqual(fs.readFileSync(path.join(dev.dir, 'config')).readUInt16LE(2), 0x10fc);
        assert.strictEqual(fs.readFileSync(path.join(dev.dir, 'device'), 'utf8'), '0x10fc\n');
        assert.strictEqual(fs.readFileSync(path.join(dev1.dir, 'device'), 'utf8'), '0x10fb\n');
        assert.strictEqual((await model.stats(0)).deviceId, '10fc');
        await d.reset(dev);
        await d.reset(dev1);
        const lms = (x) => (x.read(d.R.AUTOC) >>> 13) & 7;
        assert.strictEqual(lms(dev), 1, '10fc: 10 GbE parallel (XAUI)');
        assert.strictEqual(lms(dev1), 3, '10fb: 10 GbE serial (SFI)');
        await d.linkUp(dev);                                  // LMS left alone: link
        // 10 GbE serial forced on the XAUI part: no link
        dev.write(d.R.AUTOC, (dev.read(d.R.AUTOC) & ~(7 << 13)) | (3 << 13) | (1 << 12));
        await d.sleep(100);
        assert.strictEqual(dev.read(d.R.LINKS) & (1 << 30), 0);
        assert.strictEqual((await model.stats(0)).linkUp, false);
        await d.linkUp(dev1);
      } finally {
        await model.stop();
      }
    });

    it('--iommu TYPE shows iommu_group/type in each port directory', async () => {
      let model = await Model.start({ ports: 2, iommu: 'DMA-FQ' });
      try {
        for (const a of model.addresses) {
          assert.strictEqual(fs.readFileSync(path.join(model.dir, a, 'iommu_group', 'type'), 'utf8'), 'DMA-FQ\n');
        }
      } finally {
        await model.stop();
      }
      model = await Model.start({ ports: 1 });
      try {
        assert.ok(!fs.existsSync(path.join(model.dir, model.addresses[0], 'iommu_group')));
      } finally {
        await model.stop();
      }
    });
  });

  describe('lifecycle', () => {
    // A raw driver in a child process sets up RX (256 descriptors, 255 free, none
    // refilled), optionally stops DMA (`stop`), then exits without cleaning up.
    async function driverExits(model, stop) {
      const script = `
        const d = require(${JSON.stringify(path.join(__dirname, 'model-driver'))});
        (async () => {
          const model = JSON.parse(process.argv[1]);
          const dev = d.open(model, 0);
          const mem = d.dmaMemory();
          d.busMaster(dev, true);
          await d.reset(dev);
          await d.linkUp(dev);
          await d.setupRx(dev, mem);
          if (process.argv[2] === 'tx') {       // 10 frames queued while the model stalls TX
            await d.setupTx(dev, mem);
            for (let i = 0; i < 10; i++) d.txDesc(mem, i, 60);
            dev.write(d.R.TDT, 10);
          }
          if (process.argv[2] === 'rxdctl') dev.write(d.R.RXDCTL, dev.read(d.R.RXDCTL) & ~(1 << 25));
          if (process.argv[2] === 'rxen') dev.write(d.R.RXCTRL, 0);
          if (process.argv[2] === 'busmaster') d.busMaster(dev, false);
          await d.sleep(5);
          process.exit(0);
        })().catch((e) => { console.error(e); process.exit(1); });`;
      const child = childProcess.spawn(process.execPath, ['-e', script, JSON.stringify({ dir: model.dir, addresses: model.addresses }), stop],
        { stdio: ['ignore', 'inherit', 'inherit'] });
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.strictEqual(code, 0);
    }

    it('a NIC left running writes on into released memory: counted in dmaAfterRelease', async () => {
      const model = await Model.start({ ports: 1, config: ['source 0 rate=1000'] });
      try {
        await driverExits(model, 'none');
        const s = await model.waitFor(0, (x) => x.dmaOwnerPid === 0 && x.rxDropNoDesc > 0, 3000);
        assert.ok(s.dmaAfterRelease > 0, JSON.stringify(s));
        assert.strictEqual(s.rxQueueReleased, true);
        assert.strictEqual(s.rxQueueActive, false);
        assert.strictEqual(s.rxDelivered + s.dmaAfterRelease, 255, 'every free descriptor used once');
      } finally {
        await model.stop();
      }
    });

    it('counts TX descriptors it would fetch from released memory', async () => {
      const model = await Model.start({ ports: 1 });
      try {
        await model.stall(0, 1500);        // longer than the driver lives
        await driverExits(model, 'tx');
        const s = await model.waitFor(0, (x) => x.dmaOwnerPid === 0 && x.dmaAfterRelease === 10, 3000);
        assert.strictEqual(s.txFrames, 0);
        assert.strictEqual(s.txQueuesReleased, 1);
      } finally {
        await model.stop();
      }
    });

    for (const stop of ['rxdctl', 'rxen', 'busmaster']) {
      it(`no DMA after release when the driver stopped it first (${stop})`, async () => {
        const model = await Model.start({ ports: 1, config: ['source 0 rate=1000'] });
        try {
          await driverExits(model, stop);
          await model.waitFor(0, (x) => x.dmaOwnerPid === 0, 3000);
          await d.sleep(300);
          const s = await model.stats(0);
          assert.strictEqual(s.dmaAfterRelease, 0);
          if (stop !== 'rxen') assert.strictEqual(s.rxQueueReleased, false);
          assert.ok(s.rxDropDisabled > 0);
        } finally {
          await model.stop();
        }
      });
    }

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
