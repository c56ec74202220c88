'use strict';
// --workers n on AF_XDP (lib/xdp/queue-pair.js): veth pairs with two queues each, one
// socket per queue per worker thread, 64 UDP flows spread by the sending veth over its two
// queues; the kernel on both sides.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const veth = require('../support/veth');
const { readPcap } = require('../../lib/pcap-file');
const { cpuShare } = require('../support/helpers');

// Two workers polling their rings again and again take a core each, or one between them
// were other busy processes on the same two cores. Sleeping ones take a fraction of one:
// 'interrupt' wakes per frame, 'backoff' about a thousand times a second per worker (its
// naps are bounded by half of what the ring holds at 1 Mpps), a context switch each way.
const STEADY_CPU = 0.6;

// 64 flows (source ports 20000..20063) of 10 datagrams each to 10.80.0.2:7000.
const FLOWS = "import socket\nfor p in range(64):\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.bind(('10.80.0.1', 20000 + p))\n    for i in range(10):\n        s.sendto(b'x' * 100, ('10.80.0.2', 7000))\n";
// Counts the datagrams that reach 10.80.0.2:7000 until none has come for a second.
const SINK = "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)\ns.bind(('10.80.0.2', 7000))\nprint('ready', flush=True)\ns.settimeout(5)\nn = 0\ntry:\n    while True:\n        s.recv(2048)\n        n += 1\n        s.settimeout(1)\nexcept socket.timeout:\n    pass\nprint(n)\n";

describe('AF_XDP: --workers 2, one socket per queue per worker', function () {
  this.timeout(60000);
  let ns1, ns2, nsf, tmp;

  before(function () {
    veth.skipWithoutXdp(this);
    ns1 = veth.namespace('k1');
    ns2 = veth.namespace('k2');
    nsf = veth.namespace('kf');
    veth.vethPair(ns1, 'a1', nsf, 'a2', { queues: 2, addresses: { a: '10.80.0.1/24' } });
    veth.vethPair(ns2, 'b1', nsf, 'b2', { queues: 2, addresses: { a: '10.80.0.2/24' } });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-xdp-'));
  });

  after(() => {
    veth.removeAll();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('ixy forward --workers 2 xdp:a2 xdp:b2: ping answers, and both workers forward flows, every datagram sent on', async () => {
    let child;
    const run = veth.runIxyIn(nsf, ['forward', '--workers', '2', 'xdp:a2', 'xdp:b2'], { onStart: (c) => { child = c; } });
    try {
      await veth.until(() => veth.xdpAttached(nsf, 'a2') && veth.xdpAttached(nsf, 'b2'), 20000, 'the XDP programs');
      await new Promise((r) => setTimeout(r, 1000)); // the workers bind their sockets
      const ping = await veth.runIn(ns1, 'ping', ['-c', '3', '-i', '0.2', '-W', '2', '10.80.0.2']);
      assert.match(ping.stdout, /3 packets transmitted, 3 received/, ping.stdout);
      let sinkOut = '';
      const sink = veth.runIn(ns2, 'python3', ['-c', SINK], { onStart: (c) => c.stdout.on('data', (d) => { sinkOut += d; }) });
      await veth.until(() => sinkOut.includes('ready'), 10000, 'the UDP sink');
      const sent = await veth.runIn(ns1, 'python3', ['-c', FLOWS]);
      assert.strictEqual(sent.code, 0, sent.stderr);
      // The workers' TX reached the far side: each send() kicks the TX ring where it asks
      // (need_wakeup), and so does each sleep on the sockets.
      const received = await sink;
      assert.strictEqual(received.stdout.trim().split('\n').pop(), '640', received.stdout + received.stderr);
      child.kill('SIGINT');
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      const m = /\[xdp:a2\] total RX (\d+) packets.*per worker RX (\d+) \+ (\d+)/.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Number(m[1]) >= 640 + 3, r.stdout);
      assert.ok(Number(m[2]) > 0 && Number(m[3]) > 0, `one worker got nothing: ${m[0]}`);
      assert.ok(!veth.xdpAttached(nsf, 'a2') && !veth.xdpAttached(nsf, 'b2'));
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('ixy pcap --workers 2 xdp:a2 f.pcap 640 udp: every datagram, from both queues', async () => {
    veth.ip('-n', ns1, 'neigh', 'replace', '10.80.0.2', 'lladdr', veth.mac(nsf, 'a2'), 'dev', 'a1');
    const file = path.join(tmp, 'w.pcap');
    let child;
    const run = veth.runIxyIn(nsf, ['pcap', '--workers', '2', 'xdp:a2', file, '640', 'udp'], { onStart: (c) => { child = c; } });
    try {
      await veth.until(() => veth.xdpAttached(nsf, 'a2'), 20000, 'the XDP program');
      await new Promise((r) => setTimeout(r, 1000));
      const sent = await veth.runIn(ns1, 'python3', ['-c', FLOWS]);
      assert.strictEqual(sent.code, 0, sent.stderr);
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stdout + r.stderr, /per worker RX [1-9]\d* \+ [1-9]\d*/);
      const frames = readPcap(fs.readFileSync(file)).frames;
      assert.strictEqual(frames.length, 640);
      const ports = new Set(frames.map((f) => f.data.readUInt16BE(34)));
      assert.strictEqual(ports.size, 64);
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
    }
  });

  // A frame a millisecond keeps both workers busy enough never to be idle for long, and
  // leaves most of their polls empty: workers that polled again after each would take a
  // core each. Both idle modes sleep: 'interrupt' (the default) on the sockets, 'backoff'
  // on timers bounded by what the RX ring holds.
  for (const [idle, how] of [[null, 'sleeping on their sockets'], ['backoff', 'napping on timers']]) {
    it(`ixy pcap --workers 2${idle ? ` --idle ${idle}` : ''} under steady traffic: every frame, the workers ${how} between them`, async () => {
      veth.ip('-n', ns1, 'neigh', 'replace', '10.80.0.2', 'lladdr', veth.mac(nsf, 'a2'), 'dev', 'a1');
      const file = path.join(tmp, 'steady.pcap');
      const frames = 2500;
      // From 16 sockets in turn: 16 flows, which the sending veth spreads over its two queues.
      const send = veth.numberedDatagrams({ to: '10.80.0.2', port: 7001, count: frames, sockets: 16, gapMs: 1 });
      let child;
      const run = veth.runIxyIn(nsf, ['pcap', '--workers', '2', ...(idle ? ['--idle', idle] : []), 'xdp:a2', file, String(frames), 'udp dst port 7001'], { onStart: (c) => { child = c; } });
      try {
        await veth.until(() => veth.xdpAttached(nsf, 'a2'), 20000, 'the XDP program');
        await new Promise((r) => setTimeout(r, 1000)); // the workers bind their sockets
        const sender = veth.runIn(ns1, 'python3', ['-c', send]);
        await new Promise((r) => setTimeout(r, 300));
        const share = await cpuShare(() => new Promise((r) => setTimeout(r, 1000)), child.pid); // the child's own CPU, all its threads
        assert.strictEqual((await sender).code, 0);
        const r = await run;
        assert.strictEqual(r.code, 0, r.stderr);
        assert.match(r.stdout + r.stderr, /per worker RX [1-9]\d* \+ [1-9]\d*/);
        const seqs = readPcap(fs.readFileSync(file)).frames.map((f) => f.data.readUInt32BE(42));
        assert.deepStrictEqual(seqs.sort((a, b) => a - b), Array.from({ length: frames }, (_, i) => i));
        console.log(`      CPU of ixy pcap --workers 2 (${idle || 'default'} idle) under a frame a millisecond: ${(share * 100).toFixed(1)}%`);
        assert.ok(share < STEADY_CPU, `ixy pcap --workers 2 used ${(share * 100).toFixed(1)}% of a CPU for a frame a millisecond`);
      } finally {
        if (child && child.exitCode === null) child.kill('SIGKILL');
      }
    });
  }
});
