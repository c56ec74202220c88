'use strict';
// Tests of the 82599 device model (native/model): its command line, Model.attach, and the
// --device and --iommu options, through lib/model/index.js.

const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { Model } = require('../../lib/model');
const d = require('../support/model-driver');

const BIN = Model.binaryPath();

describe('device model: command line and device options', function () {
  this.timeout(10000);

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
        const { Model } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'model'))});
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

  // Issue 46: the model signalled itself on `quit` before it wrote the reply, so a busy
  // machine could end it first (about 1 in 30 rounds with a busy loop on the same CPU).
  it('quit always replies before the model closes the connection, also on a busy CPU', async () => {
    const script = `
      const net = require('net');
      const { Model } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'model'))});
      (async () => {
        let lost = 0;
        for (let i = 0; i < 100; i++) {
          const m = await Model.start({ ports: 8 });
          const got = await new Promise((resolve) => {
            const c = net.connect(m.socket);
            let text = '';
            c.on('data', (t) => { text += t; });
            c.on('close', () => resolve(text));
            c.on('error', () => {});
            c.write('quit\\n');
          });
          if (got !== '{"ok":true}\\n') lost++;
          await m._exited;
        }
        console.log(lost);
      })();`;
    const hog = childProcess.spawn('taskset', ['-c', '0', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
    try {
      const r = await new Promise((resolve, reject) => {
        const c = childProcess.execFile('taskset', ['-c', '0', process.execPath, '-e', script], { encoding: 'utf8', timeout: 50000 },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}${stderr}`)) : resolve(stdout)));
        c.on('error', reject);
      });
      assert.strictEqual(r.trim(), '0', 'rounds in which quit got no reply');
    } finally {
      hog.kill('SIGKILL');
    }
  }).timeout(60000);

  // Issue 46, 8: at its fd limit the model's accept failed (EMFILE) and its accept thread
  // ended, so no command was answered again.
  it('its control socket outlives the fd limit: once connections end, new ones are answered', async () => {
    const model = await Model.start({ ports: 1 });
    const held = [];
    try {
      const open = fs.readdirSync(`/proc/${model.pid}/fd`).length;
      childProcess.execFileSync('prlimit', ['--pid', String(model.pid), `--nofile=${open + 3}`]);
      // More connections than the model has descriptors left: the kernel queues the rest
      // (listen's backlog), and the model's accept fails with EMFILE.
      for (let i = 0; i < 8; i++) {
        held.push(await new Promise((resolve, reject) => {
          const c = net.connect(model.socket, () => resolve(c));
          c.on('error', reject);
        }));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (const c of held) c.destroy();
      const answered = Model.attach(model.dir).then((m) => { m.close(); return true; });
      const late = new Promise((resolve) => setTimeout(() => resolve(false), 5000));
      assert.ok(await Promise.race([answered, late]), 'no answer after the connections ended');
    } finally {
      for (const c of held) c.destroy();
      await model.stop();
    }
  });

  it('pcap-in refuses a FIFO at once (nobody may ever write it), and every port and command goes on', async () => {
    const model = await Model.start({ ports: 1 });
    const fifo = path.join(os.tmpdir(), `ixy-pcap-in-${process.pid}.fifo`);
    childProcess.execFileSync('mkfifo', [fifo]);
    try {
      const t0 = performance.now();
      const refused = model.pcapIn(0, fifo).then(() => null, (err) => err);
      const late = new Promise((resolve) => setTimeout(() => resolve('no answer'), 3000));
      const err = await Promise.race([refused, late]);
      assert.ok(err instanceof Error, `pcap-in of a FIFO: ${err}`);
      assert.match(err.message, /is not a regular file \(a FIFO or a device\)/);
      assert.ok(performance.now() - t0 < 3000);
      assert.strictEqual((await model.stats(0)).linkUp, false, 'the model still answers');
    } finally {
      fs.rmSync(fifo, { force: true });
      await model.stop();
    }
  });

  it('start fails with the model error line', async () => {
    await assert.rejects(Model.start({ ports: 0 }), /ixy-model: --ports must be 1\.\.8/);
  });

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
