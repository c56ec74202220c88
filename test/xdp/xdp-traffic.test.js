'use strict';
// `ixy generate xdp:...` and `ixy pcap xdp:...` on a veth pair against the kernel's own
// view of the same frames: tcpdump on the far end (lib/xdp/, real kernel).

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const veth = require('../support/veth');
const { tsharkFields } = require('../support/helpers');
const { readPcap } = require('../../lib/pcap-file');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('AF_XDP: generate and pcap against tcpdump on the far end of a veth', function () {
  this.timeout(60000);
  let ns1, ns2, tmp;

  before(function () {
    veth.skipWithoutXdp(this);
    ns1 = veth.namespace('g1');
    ns2 = veth.namespace('g2');
    veth.vethPair(ns1, 'p1', ns2, 'p2', { addresses: { a: '10.78.0.1/24', b: '10.78.0.2/24' } });
    // Frames go to p2's MAC without ARP: while ixy has the queue, the kernel's stack behind
    // p2 does not answer.
    veth.ip('-n', ns1, 'neigh', 'replace', '10.78.0.2', 'lladdr', veth.mac(ns2, 'p2'), 'dev', 'p1');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-xdp-'));
  });

  after(() => {
    veth.removeAll();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // tcpdump in ns on dev, until it has `count` frames (0: until a signal) or timeoutMs;
  // resolves its run.
  async function tcpdump(ns, dev, file, count, args = []) {
    let child;
    const run = veth.runIn(ns, 'tcpdump', ['-i', dev, '-w', file, ...(count ? ['-c', String(count)] : []), '--immediate-mode', '-B', '16384', ...args], { onStart: (c) => { child = c; }, timeoutMs: 30000 });
    // tcpdump creates the file once it has opened the interface.
    await veth.until(() => child && fs.existsSync(file), 10000, 'tcpdump to start');
    await sleep(300);
    return { run, child };
  }

  it('ixy generate xdp:p1 -n 2000: the kernel behind p2 gets 2000 frames, and those tcpdump keeps are valid UDP, numbered in order', async () => {
    const file = path.join(tmp, 'far.pcap');
    // No count: tcpdump runs until told, then says how many frames the kernel gave its
    // filter ("received by filter") and how many it could keep on a busy machine.
    const td = await tcpdump(ns2, 'p2', file, 0, ['udp', 'dst', 'port', '5000']);
    try {
      const gen = await veth.runIxyIn(ns1, ['generate', 'xdp:p1', '-n', '2000', '-r', '5k', '--json']);
      assert.strictEqual(gen.code, 0, gen.stderr);
      const total = gen.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.type === 'total');
      assert.strictEqual(total.txPackets, 2000, gen.stdout);
      await sleep(1000);
      td.child.kill('SIGINT');
      const r = await td.run;
      assert.match(r.stderr, /^2000 packets received by filter$/m, r.stderr);
      const kept = Number(/^(\d+) packets captured/m.exec(r.stderr)[1]);
      assert.ok(kept > 1000, r.stderr);
      const rows = tsharkFields(file, ['frame.len', 'ip.checksum.status', 'udp.checksum.status', 'udp.dstport']);
      assert.strictEqual(rows.length, kept);
      for (const [len, ipSum, udpSum, port] of rows) {
        assert.deepStrictEqual([len, port], ['60', '5000']);
        assert.ok(ipSum === 'Good' || ipSum === '1', `IP checksum ${ipSum}`);
        assert.ok(udpSum !== 'Bad' && udpSum !== '0', `UDP checksum ${udpSum}`);
      }
      // The sequence numbers (the generator's, the first four payload bytes): rising, each
      // once, all below 2000; every one of them when tcpdump kept every frame.
      const seqs = readPcap(fs.readFileSync(file)).frames.map((f) => f.data.readUInt32BE(42));
      seqs.forEach((seq, i) => assert.ok(seq < 2000 && (i === 0 || seq > seqs[i - 1]), `frame ${i}: ${seq}`));
    } finally {
      td.child.kill('SIGKILL');
    }
  });

  it('ixy replay xdp:p1 of that capture: the kernel behind p2 gets every frame, byte for byte', async () => {
    const file = path.join(tmp, 'far.pcap');
    const sent = readPcap(fs.readFileSync(file)).frames;
    const again = path.join(tmp, 'again.pcap');
    const td = await tcpdump(ns2, 'p2', again, 0, ['udp', 'dst', 'port', '5000']);
    try {
      const r = await veth.runIxyIn(ns1, ['replay', 'xdp:p1', file]);
      assert.strictEqual(r.code, 0, r.stderr);
      await sleep(1000);
      td.child.kill('SIGINT');
      const t = await td.run;
      assert.match(t.stderr, new RegExp(`^${sent.length} packets received by filter$`, 'm'), t.stderr);
      // What tcpdump kept is the file's frames in order (all of them unless it fell behind).
      let k = 0;
      for (const f of readPcap(fs.readFileSync(again)).frames) {
        while (k < sent.length && !sent[k].data.equals(f.data)) k++;
        assert.ok(k < sent.length, 'a frame that is not the file\'s, or out of order');
      }
    } finally {
      td.child.kill('SIGKILL');
    }
  });

  it('ixy pcap xdp:p2 of what the kernel sends from p1 equals what tcpdump saw leave p1', async () => {
    const ours = path.join(tmp, 'ours.pcap');
    const theirs = path.join(tmp, 'theirs.pcap');
    let capture;
    const run = veth.runIxyIn(ns2, ['pcap', 'xdp:p2', ours, '300', 'udp'], { onStart: (c) => { capture = c; } });
    const td = await tcpdump(ns1, 'p1', theirs, 0, ['-Q', 'out', 'udp']);
    try {
      await veth.until(() => veth.xdpAttached(ns2, 'p2'), 10000, 'ixy pcap\'s XDP program');
      await sleep(300);
      // Datagram i: 1 + 4i bytes of (i mod 256), to port 6000 + (i mod 7), 1 ms apart.
      const send = 'import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nfor i in range(300):\n    s.sendto(bytes([i % 256]) * (1 + i * 4), (\'10.78.0.2\', 6000 + i % 7))\n    time.sleep(0.001)\n';
      const sent = await veth.runIn(ns1, 'python3', ['-c', send]);
      assert.strictEqual(sent.code, 0, sent.stderr);
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      await sleep(500);
      td.child.kill('SIGINT');
      const t = await td.run;
      assert.match(t.stderr, /^300 packets received by filter$/m, t.stderr);
      const a = readPcap(fs.readFileSync(ours)).frames;
      assert.strictEqual(a.length, 300);
      a.forEach((f, i) => {
        const payload = f.data.subarray(42);
        assert.strictEqual(f.data.readUInt16BE(36), 6000 + (i % 7), `frame ${i}'s port`);
        assert.ok(payload.length === 1 + 4 * i && payload.every((byte) => byte === i % 256), `frame ${i}'s payload`);
      });
      // Byte for byte what tcpdump kept of the same frames (all of them, unless it fell
      // behind on a busy machine).
      const b = readPcap(fs.readFileSync(theirs)).frames;
      assert.ok(b.length > 250, `tcpdump kept ${b.length}`);
      for (const f of b) {
        const i = (f.data.readUInt16BE(38) - 9) / 4; // the UDP length says which datagram
        assert.ok(f.data.equals(a[i].data), `frame ${i} differs`);
      }
    } finally {
      if (capture && capture.exitCode === null) capture.kill('SIGKILL');
      td.child.kill('SIGKILL');
    }
  });

  it('ixy list shows the interfaces AF_XDP can open, up or down', async () => {
    const r = await veth.runIxyIn(ns1, ['list']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /through AF_XDP/);
    assert.match(r.stdout, /^ {2}xdp:p1 +\S+ +1 queue +up$/m);
  });

  it('receive(), frames(), createReadStream() and ixy.run() on xdp:p2 each get the frames p1 sends', async () => {
    let child;
    const run = veth.runIn(ns2, process.execPath, [path.join(__dirname, '..', 'support', 'xdp-api-child.js'), 'xdp:p2'], { onStart: (c) => { child = c; } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    try {
      await veth.until(() => out.startsWith('ready\n'), 20000, 'the child to open xdp:p2');
      const send = "import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nfor i in range(2000):\n    s.sendto(b'x' * 100, ('10.78.0.2', 6000))\n    time.sleep(0.003)\n";
      const sender = veth.spawnIn(ns1, 'python3', ['-c', send]);
      try {
        const r = await run;
        const got = JSON.parse(r.stdout.split('\n')[1]);
        for (const way of ['receive', 'frames', 'stream', 'run']) {
          assert.ok(got[way] && got[way].frames >= 20 && got[way].ours === got[way].frames, `${way}: ${JSON.stringify(got)}`);
        }
      } finally {
        sender.kill('SIGKILL');
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
