'use strict';
// Real traffic through the driver: the kernel's ARP, ICMP and TCP in two network namespaces,
// each behind a TAP wired to one port of the device model, with `ixy forward` between the
// two ports (lib/apps/demo/real-net.js). Programs nobody here wrote (ping, curl, python3's
// http.server) talk through the JavaScript driver; the test checks what arrives, and that
// the driver's, the model's and the kernel's counts of every frame agree.

const assert = require('assert');
const childProcess = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { RealNet } = require('../../lib/apps/demo/real-net');
const { account } = require('../../lib/apps/demo/frame-account');
const { isAlive } = require('../../lib/apps/demo/netns');
const { runIxy } = require('../support/helpers');

const FILE_BYTES = 24 << 20; // "at least 20 MB"
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

const namespacesNow = () => childProcess.execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });

// Waits until nothing of a RealNet is left: its namespaces, processes and directories.
async function assertNothingLeft(where, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  const left = () => [
    ...where.namespaces.filter((ns) => namespacesNow().includes(ns)).map((ns) => `namespace ${ns}`),
    ...Object.entries(where.pids).filter(([, pid]) => pid && isAlive(pid)).map(([what, pid]) => `${what} (pid ${pid})`),
    ...where.dirs.filter((dir) => fs.existsSync(dir)),
  ];
  while (left().length && Date.now() < end) await sleep(50);
  assert.deepStrictEqual(left(), [], 'left behind');
}

function leftovers(net) {
  return {
    namespaces: [...net.namespaces],
    pids: { forwarder: net.forwarder && net.forwarder.pid, model: net.model && net.model.pid, server: net.server && net.server.pid },
    dirs: [net.tmp, net.model && net.model.dir].filter(Boolean),
  };
}

describe('real traffic: the kernel on both sides of ixy forward', function () {
  this.timeout(120000);

  describe('ping, a download, faults, and the counts', () => {
    let net, url, file, where;
    before(async () => {
      net = await RealNet.start();
      where = leftovers(net);
    });
    after(async () => {
      if (!net) return;
      where = leftovers(net);
      await net.stop();
      await assertNothingLeft(where);
    });

    it('ping (ICMP, and ARP first) across the forwarder, every reply back, both ways', async () => {
      for (const from of [0, 1]) {
        const r = await net.ping(5, { from });
        const arp = childProcess.execFileSync('ip', ['-n', net.namespaces[from], 'neigh'], { encoding: 'utf8' });
        assert.strictEqual(r.sent, 5, r.output);
        assert.strictEqual(r.received, 5, `${r.output}ARP table of ${net.namespaces[from]}: ${arp}`);
      }
      // ARP resolved each side's address to the other TAP's MAC, through the forwarder.
      const macOf = (side) => JSON.parse(childProcess.execFileSync('ip', ['-n', net.namespaces[side], '-j', 'link', 'show', 'dev', net.tap]))[0].address;
      for (const side of [0, 1]) {
        const [entry] = JSON.parse(childProcess.execFileSync('ip', ['-n', net.namespaces[side], '-j', 'neigh', 'show', net.ips[1 - side]]));
        assert.strictEqual(entry && entry.lladdr, macOf(1 - side), `ARP entry in ${net.namespaces[side]}`);
      }
    });

    it(`a ${FILE_BYTES >> 20} MiB file from python3 -m http.server, fetched with curl: SHA-256 equal`, async () => {
      file = net.makeFile('big.bin', FILE_BYTES);
      url = await net.serve(1);
      const r = await net.download(`${url}/big.bin`, 'got.bin');
      assert.strictEqual(r.bytes, FILE_BYTES);
      assert.strictEqual(sha256(r.file), sha256(file));
      const cpu = Object.entries(r.cpu).map(([k, s]) => `${k} ${(s / r.seconds * 100).toFixed(0)}%`).join(', ');
      console.log(`      download: ${r.bytes} bytes in ${r.seconds.toFixed(2)} s = ${r.mbits.toFixed(0)} Mbit/s (CPU of one core while it ran: ${cpu})`);
    });

    it('the same download while port 0 loses its link for 300 ms and then stalls TX for 300 ms: TCP recovers, file intact', async () => {
      const got = path.join(net.tmp, 'got-faults.bin');
      const size = () => (fs.existsSync(got) ? fs.statSync(got).size : 0);
      let ended = false;
      const download = net.download(`${url}/big.bin`, 'got-faults.bin').finally(() => { ended = true; });
      download.catch(() => {}); // awaited below; this keeps a failure from being reported early
      const at = [];
      // The faults come while the data flows: at a quarter and at two thirds of the file.
      const waitFor = async (bytes) => { while (size() < bytes && !ended) await sleep(5); };
      await waitFor(FILE_BYTES / 4);
      at.push(size());
      await net.model.link(0, false);
      await sleep(300);
      await net.model.link(0, true);
      await waitFor((FILE_BYTES * 2) / 3);
      at.push(size());
      await net.model.stall(0, 300);
      const r = await download;
      assert.ok(at.every((bytes) => bytes < FILE_BYTES), `faults at ${at} of ${FILE_BYTES} bytes`);
      assert.strictEqual(r.bytes, FILE_BYTES);
      assert.strictEqual(sha256(r.file), sha256(file));
      console.log(`      with faults: ${r.seconds.toFixed(2)} s = ${r.mbits.toFixed(0)} Mbit/s`);
      // Both faults cut the path to curl (nothing leaves port 0 while its link is down or
      // its TX stalls) while the file was incomplete: the download cannot have been faster.
      assert.ok(r.seconds >= 0.6, `the download took ${r.seconds} s, less than the 600 ms of faults`);
    });

    it("the driver's counts agree with the model's and with the kernel's counters of both TAPs", async () => {
      const report = await net.finish();
      for (const dir of account(report, net.model.addresses)) {
        const name = `${net.namespaces[dir.from]} -> ${net.namespaces[dir.to]}`;
        console.log(`      ${name}: the kernel sent ${dir.kernelSent}, the driver received ${dir.driverReceived} ` +
          `(missed ${dir.driverMissed}, not received ${dir.notReceived}) and sent ${dir.driverSent} ` +
          `(dropped on the way out ${dir.txDropped}), the kernel received ${dir.kernelReceived} (TAP refused ${dir.tapRefused})`);
        for (const [what, left, right] of dir.checks) assert.strictEqual(left, right, `${name}: ${what}`);
      }
      // The server's side sent at least two files' worth of full frames.
      assert.ok(report.kernel[1].txPackets > (2 * FILE_BYTES) / 1514, `the server's kernel sent ${report.kernel[1].txPackets} frames`);
    });
  });

  describe('ixy demo --real', () => {
    it('pings, downloads and accounts for every frame through the command', async () => {
      const r = await runIxy(['demo', '--real'], { timeoutMs: 60000 });
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stdout, /3 packets transmitted, 3 received, 0% packet loss/);
      assert.match(r.stdout, /8388608 bytes in [\d.]+ s: \d+ Mbit\/s, SHA-256 equal to the file served/);
      assert.strictEqual((r.stdout.match(/the kernel in ixy-\d+-[ab] received +\d+/g) || []).length, 2, r.stdout);
      assert.doesNotMatch(r.stdout, /disagree/);
      assert.strictEqual(r.stderr, '');
    });

    it('bad input and missing tools: one line, exit 1, nothing made', async () => {
      let r = await runIxy(['demo', '--real', '--rate', '5']);
      assert.strictEqual(r.code, 1);
      assert.strictEqual(r.stderr, 'ixy: --real takes only --seconds: its traffic comes from ping and curl\n');
      // A PATH with every tool but curl.
      const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-nocurl-'));
      try {
        for (const tool of ['ip', 'ping', 'python3', 'setpriv']) {
          const found = childProcess.execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
          fs.symlinkSync(found, path.join(bin, tool));
        }
        r = await runIxy(['demo', '--real'], { env: { PATH: bin } });
        assert.strictEqual(r.code, 1);
        assert.strictEqual(r.stderr, 'ixy: real traffic needs curl: install them (apt-get install curl)\n');
        assert.strictEqual(r.stdout, '');
      } finally {
        fs.rmSync(bin, { recursive: true, force: true });
      }
    });
  });

  describe('nothing is left behind', () => {
    // A child process that sets up a RealNet with a server, prints where everything is as
    // one JSON line, and then ends as `how` says.
    const CHILD = `
      const { RealNet } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'apps', 'demo', 'real-net'))});
      (async () => {
        const net = await RealNet.start();
        await net.serve(1);
        console.log(JSON.stringify({ namespaces: net.namespaces, dirs: [net.tmp, net.model.dir],
          pids: { forwarder: net.forwarder.pid, model: net.model.pid, server: net.server.pid } }));
        if (process.argv[1] === 'throw') setTimeout(() => { throw new Error('on purpose'); }, 10);
        else if (process.argv[1] === 'exit') process.exit(3);
        else setInterval(() => {}, 1000);
      })();`;

    function startChild(how) {
      // detached: a process group of its own, so that a signal to the group is a Ctrl-C
      const child = childProcess.spawn(process.execPath, ['-e', CHILD, how], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let out = '';
      let err = '';
      child.stderr.on('data', (x) => { err += x; });
      const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, err })));
      const ready = new Promise((resolve, reject) => {
        child.stdout.on('data', (x) => {
          out += x;
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
        });
        exited.then((r) => reject(new Error(`child ended first: ${r.code ?? r.signal} ${r.err}`)));
      });
      return { child, ready, exited };
    }

    it('Ctrl-C (SIGINT to the process group): removed, and the signal ends the process', async () => {
      const { child, ready, exited } = startChild('wait');
      const where = await ready;
      assert.ok(namespacesNow().includes(where.namespaces[0]));
      process.kill(-child.pid, 'SIGINT');
      const r = await exited;
      assert.strictEqual(r.signal, 'SIGINT', r.err);
      await assertNothingLeft(where);
    });

    it('SIGTERM to the process alone', async () => {
      const { child, ready, exited } = startChild('wait');
      const where = await ready;
      child.kill('SIGTERM');
      assert.strictEqual((await exited).signal, 'SIGTERM');
      await assertNothingLeft(where);
    });

    it('an uncaught exception, and process.exit()', async () => {
      for (const [how, code] of [['throw', 1], ['exit', 3]]) {
        const { ready, exited } = startChild(how);
        const where = await ready;
        const r = await exited;
        assert.strictEqual(r.code, code, `${how}: ${r.err}`);
        await assertNothingLeft(where);
      }
    });

    // Issue 34, 9: namespaces it did not make are not its to delete.
    it('a namespace of its name that exists already: one clear error, and it is left alone', async () => {
      const ns = `ixy-${process.pid}-a`;
      childProcess.execFileSync('ip', ['netns', 'add', ns]);
      try {
        await assert.rejects(RealNet.start(), (err) => {
          assert.strictEqual(err.name, 'IxyError', err.stack);
          assert.strictEqual(err.code, 'EEXIST');
          assert.strictEqual(err.message, `network namespace ${ns} exists already, and not by this process: remove it ('ip netns del ${ns}') if nothing uses it, then try again`);
          return true;
        });
        assert.ok(namespacesNow().split('\n').some((l) => l.split(' ')[0] === ns), `${ns} was deleted`);
        assert.ok(!namespacesNow().includes(`ixy-${process.pid}-b`), 'made one and left it');
      } finally {
        childProcess.execFileSync('ip', ['netns', 'del', ns]);
      }
    });

    it('sweeps no namespace that only looks like its own (a user\'s ixy-999999-lab)', async () => {
      let pid = 999999;
      while (isAlive(pid)) pid--;
      const ns = `ixy-${pid}-lab`;
      childProcess.execFileSync('ip', ['netns', 'add', ns]);
      try {
        RealNet.removeStale(); // what RealNet.start() does first
        assert.ok(namespacesNow().split('\n').some((l) => l.split(' ')[0] === ns), `${ns} was deleted`);
      } finally {
        childProcess.execFileSync('ip', ['netns', 'del', ns]);
      }
    });

    it('SIGKILL: the processes follow at once, the namespaces go at the next start', async () => {
      const { child, ready, exited } = startChild('wait');
      const where = await ready;
      child.kill('SIGKILL');
      await exited;
      // the model (--parent), the server (pdeathsig), the forwarder (its device is gone)
      await assertNothingLeft({ ...where, namespaces: [], dirs: [] });
      assert.ok(namespacesNow().includes(where.namespaces[0]), 'SIGKILL cannot be caught');
      RealNet.removeStale(); // what RealNet.start() does first
      await assertNothingLeft(where);
    });
  });
});
