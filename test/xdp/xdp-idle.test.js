'use strict';
// idle 'interrupt' on AF_XDP (lib/xdp/rx-queue.js interruptLine()): once idle, a loop sleeps
// on its sockets' fds until the kernel puts frames on an RX ring. Bursts sent after
// idleness all arrive, in order, and an idle second costs the process next to no CPU
// (real kernel, veth pairs in namespaces).

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const veth = require('../support/veth');
const { readPcap } = require('../../lib/pcap-file');
const { cpuShare } = require('../support/helpers');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CHILD = path.join(__dirname, '..', 'support', 'xdp-idle-child.js');
const BURST = 200; // frames sent back to back: fewer than veth's ring (256) holds
// An idle loop of 'interrupt' wakes once a second; 'backoff' wakes every few ms and 'spin'
// never sleeps. A bound between them, generous for 'interrupt': a twentieth of a core.
const IDLE_CPU = 0.05;
// A loop that polls a ring again and again takes a core (half of one, were another busy
// process on its CPU); one that sleeps between the frames of a thousand a second, a few %.
const STEADY_CPU = 0.3;

describe('AF_XDP: idle \'interrupt\' sleeps on the sockets', function () {
  this.timeout(90000);
  let ns1, ns2, ns3, ns4, tmp;

  before(function () {
    veth.skipWithoutXdp(this);
    ns1 = veth.namespace('i1');
    ns2 = veth.namespace('i2');
    veth.vethPair(ns1, 'i1', ns2, 'i2', { addresses: { a: '10.79.0.1/24', b: '10.79.0.2/24' } });
    veth.ip('-n', ns1, 'neigh', 'replace', '10.79.0.2', 'lladdr', veth.mac(ns2, 'i2'), 'dev', 'i1');
    ns3 = veth.namespace('i3');
    ns4 = veth.namespace('i4');
    veth.vethPair(ns3, 'i3', ns4, 'i4', { queues: 2, addresses: { a: '10.79.1.1/24', b: '10.79.1.2/24' } });
    veth.ip('-n', ns3, 'neigh', 'replace', '10.79.1.2', 'lladdr', veth.mac(ns4, 'i4'), 'dev', 'i3');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-xdp-idle-'));
  });

  after(() => {
    veth.removeAll();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // BURST UDP datagrams to port 7000 as fast as the kernel takes them, numbered from
  // `first`, from `sockets` sockets (veth.numberedDatagrams()).
  async function burst(ns, to, first, sockets = 1) {
    const send = veth.numberedDatagrams({ to, port: 7000, count: BURST, first, sockets });
    const r = await veth.runIn(ns, 'python3', ['-c', send]);
    assert.strictEqual(r.code, 0, r.stderr);
  }

  it('ixy pcap --idle interrupt captures every frame of bursts sent after idleness, and idles on almost no CPU', async () => {
    const file = path.join(tmp, 'bursts.pcap');
    let capture;
    const run = veth.runIxyIn(ns2, ['pcap', 'xdp:i2', file, String(3 * BURST), 'udp dst port 7000', '--idle', 'interrupt'], { onStart: (c) => { capture = c; } });
    try {
      await veth.until(() => veth.xdpAttached(ns2, 'i2'), 20000, 'ixy pcap\'s XDP program');
      await sleep(1500); // warm-up polling, then idle
      const shares = [await cpuShare(() => sleep(1000), capture.pid)];
      for (let b = 0; b < 3; b++) {
        await burst(ns1, '10.79.0.2', b * BURST);
        await sleep(1500);
        if (b === 0) shares.push(await cpuShare(() => sleep(1000), capture.pid));
      }
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      const seqs = readPcap(fs.readFileSync(file)).frames.map((f) => f.data.readUInt32BE(42));
      assert.deepStrictEqual(seqs, Array.from({ length: 3 * BURST }, (_, i) => i));
      for (const share of shares) assert.ok(share < IDLE_CPU, `idle ixy pcap used ${(share * 100).toFixed(1)}% of a CPU`);
      console.log(`      idle CPU: ${shares.map((s) => `${(s * 100).toFixed(1)}%`).join(', ')}`);
    } finally {
      if (capture && capture.exitCode === null) capture.kill('SIGKILL');
    }
  });

  // A frame every millisecond never leaves the loop idle for IDLE_AFTER_MS: a loop that
  // polled again after each empty poll would take a whole core (and the kernel's NAPI poll,
  // which fills the ring, would wait for it where they share one).
  it('ixy pcap under steady traffic sleeps on the socket between frames: every frame, on a fraction of a core', async () => {
    const file = path.join(tmp, 'steady.pcap');
    const frames = 2500;
    const send = veth.numberedDatagrams({ to: '10.79.0.2', port: 7001, count: frames, gapMs: 1 });
    let capture;
    const run = veth.runIxyIn(ns2, ['pcap', 'xdp:i2', file, String(frames), 'udp dst port 7001'], { onStart: (c) => { capture = c; } });
    try {
      await veth.until(() => veth.xdpAttached(ns2, 'i2'), 20000, 'ixy pcap\'s XDP program');
      await sleep(1000);
      const sender = veth.runIn(ns1, 'python3', ['-c', send]);
      await sleep(300);
      const share = await cpuShare(() => sleep(1000), capture.pid);
      assert.strictEqual((await sender).code, 0);
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      const seqs = readPcap(fs.readFileSync(file)).frames.map((f) => f.data.readUInt32BE(42));
      assert.deepStrictEqual(seqs, Array.from({ length: frames }, (_, i) => i));
      assert.ok(share < STEADY_CPU, `ixy pcap used ${(share * 100).toFixed(1)}% of a CPU for a frame a millisecond`);
      console.log(`      CPU under a frame a millisecond: ${(share * 100).toFixed(1)}%`);
    } finally {
      if (capture && capture.exitCode === null) capture.kill('SIGKILL');
    }
  });

  // The child (test/support/xdp-idle-child.js) in ns, receiving `want` frames `way`; burst(n)
  // sends burst n. Resolves with its report and the CPU shares of its idle seconds.
  async function idleChild(ns, address, want, way, rxQueues, send) {
    let child;
    const run = veth.runIn(ns, process.execPath, [CHILD, address, String(want), way, String(rxQueues)], { onStart: (c) => { child = c; } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    try {
      await veth.until(() => out.includes('\n') || child.exitCode !== null, 20000, `the child to open ${address}`);
      const ready = JSON.parse(out.split('\n')[0]);
      assert.ok(ready.ready, out);
      assert.strictEqual(ready.lines.length, rxQueues, out);
      assert.deepStrictEqual(ready.lines, ready.sockets, 'each RX queue\'s line is its socket\'s fd');
      await sleep(1500);
      const shares = [await cpuShare(() => sleep(1000), child.pid)];
      for (let b = 0; b * BURST < want; b++) {
        await send(b);
        await sleep(1500);
        if (b === 0) shares.push(await cpuShare(() => sleep(1000), child.pid));
      }
      const r = await run;
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      return { got: JSON.parse(r.stdout.split('\n')[1]), shares };
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }

  for (const way of ['receive', 'run']) {
    it(`${way === 'receive' ? 'receive()' : 'ixy.run()'} with idle 'interrupt' gets every frame of bursts after idleness, on little CPU`, async () => {
      const { got, shares } = await idleChild(ns2, 'xdp:i2', 2 * BURST, way, 1, (b) => burst(ns1, '10.79.0.2', b * BURST));
      assert.deepStrictEqual(got.seqs, Array.from({ length: 2 * BURST }, (_, i) => i));
      // Each burst woke the sleeping loop through the socket's fd, not its safety timeout.
      assert.ok(got.wakes[0] >= 2, `woken ${got.wakes[0]} times`);
      assert.strictEqual(got.linesClosed, true);
      for (const share of shares) assert.ok(share < IDLE_CPU, `idle ${way} used ${(share * 100).toFixed(1)}% of a CPU`);
    });
  }

  for (const way of ['receive', 'run']) {
    it(`two RX queues, a socket each: ${way === 'receive' ? 'receive() per queue sleeps on its own' : 'ixy.run() sleeps on both'}, and every frame arrives`, async () => {
      const { got, shares } = await idleChild(ns4, 'xdp:i4', 2 * BURST, way, 2, (b) => burst(ns3, '10.79.1.2', b * BURST, 16));
      assert.deepStrictEqual(got.seqs.slice().sort((a, b) => a - b), Array.from({ length: 2 * BURST }, (_, i) => i));
      // receive(): each queue's loop was woken by its own fd when frames came to it; run(): by
      // whichever fd was readable first (the loop then polls both queues).
      if (way === 'receive') got.perQueue.forEach((n, q) => assert.ok(n === 0 || got.wakes[q] >= 1, `queue ${q}: ${n} frames, woken ${got.wakes[q]} times`));
      assert.ok(got.wakes[0] + got.wakes[1] >= 2, `woken ${got.wakes.join(' + ')} times`);
      assert.strictEqual(got.linesClosed, true);
      for (const share of shares) assert.ok(share < IDLE_CPU, `idle ${way} used ${(share * 100).toFixed(1)}% of a CPU`);
      console.log(`      frames per queue: ${got.perQueue.join(', ')}; wake-ups per queue: ${got.wakes.join(', ')}`);
    });
  }
});
