'use strict';
// `ixy generate xdp:...` and `ixy pcap xdp:...` on a veth pair against the kernel's own
// view of the same frames: tcpdump on the far end (lib/xdp/, real kernel).

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const veth = require('./support/veth');
const { tsharkFields } = require('./support/helpers');
const { readPcap } = require('../lib/pcap');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('AF_XDP: generate and pcap against tcpdump on the far end of a veth', function () {
  this.timeout(60000);
  let ns1, ns2, tmp;

  before(function () {
    const missing = veth.xdpMissing();
    if (missing) {
      console.log(`      skipped: ${missing}`);
      this.skip();
    }
    ns1 = veth.namespace('g1');
    ns2 = veth.namespace('g2');
    veth.vethPair(ns1, 'p1', ns2, 'p2', { addresses: { a: '10.78.0.1/24', b: '10.78.0.2/24' } });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-xdp-'));
  });

  after(() => {
    veth.removeAll();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // tcpdump in ns on dev, until it has `count` frames (or timeoutMs); resolves its run.
  async function tcpdump(ns, dev, file, count, args = []) {
    let child;
    const run = veth.runIn(ns, 'tcpdump', ['-i', dev, '-w', file, '-c', String(count), '--immediate-mode', '-B', '16384', ...args], { onStart: (c) => { child = c; }, timeoutMs: 30000 });
    // tcpdump creates the file once it has opened the interface.
    await veth.until(() => child && fs.existsSync(file), 10000, 'tcpdump to start');
    await sleep(300);
    return { run, child };
  }

  it('ixy generate xdp:p1 -n 2000 (at 5 kpps, which tcpdump keeps up with on a busy machine): tcpdump on p2 sees 2000 valid UDP frames, numbered 0..1999', async () => {
    const file = path.join(tmp, 'far.pcap');
    const td = await tcpdump(ns2, 'p2', file, 2000, ['udp', 'dst', 'port', '5000']);
    try {
      const gen = await veth.runIxyIn(ns1, ['generate', 'xdp:p1', '-n', '2000', '-r', '5k', '--json']);
      assert.strictEqual(gen.code, 0, gen.stderr);
      const total = gen.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.type === 'total');
      assert.strictEqual(total.txPackets, 2000, gen.stdout);
      const r = await td.run;
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, /^2000 packets captured/m, r.stderr);
      const rows = tsharkFields(file, ['frame.len', 'ip.checksum.status', 'udp.checksum.status', 'udp.dstport']);
      assert.strictEqual(rows.length, 2000);
      for (const [len, ipSum, udpSum, port] of rows) {
        assert.deepStrictEqual([len, port], ['60', '5000']);
        assert.ok(ipSum === 'Good' || ipSum === '1', `IP checksum ${ipSum}`);
        assert.ok(udpSum !== 'Bad' && udpSum !== '0', `UDP checksum ${udpSum}`);
      }
      // The sequence numbers: every frame once, in order (the generator's seqAt, the
      // first four payload bytes).
      const frames = readPcap(fs.readFileSync(file)).frames;
      frames.forEach((f, i) => assert.strictEqual(f.data.readUInt32BE(42), i, `frame ${i}`));
    } finally {
      td.child.kill('SIGKILL');
    }
  });

  it('ixy pcap xdp:p2 of what the kernel sends from p1 equals what tcpdump saw leave p1', async () => {
    const ours = path.join(tmp, 'ours.pcap');
    const theirs = path.join(tmp, 'theirs.pcap');
    // The frames go to p2's MAC without ARP: once ixy has the queue, the kernel's stack
    // behind p2 no longer answers.
    veth.ip('-n', ns1, 'neigh', 'replace', '10.78.0.2', 'lladdr', veth.mac(ns2, 'p2'), 'dev', 'p1');
    let capture;
    const run = veth.runIxyIn(ns2, ['pcap', 'xdp:p2', ours, '300', 'udp'], { onStart: (c) => { capture = c; } });
    const td = await tcpdump(ns1, 'p1', theirs, 300, ['-Q', 'out', 'udp']);
    try {
      await veth.until(() => veth.xdpAttached(ns2, 'p2'), 10000, 'ixy pcap\'s XDP program');
      await sleep(300);
      const send = `import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nfor i in range(300):\n    s.sendto(bytes([i % 256]) * (1 + i * 4), ('10.78.0.2', 6000 + i % 7))\n`;
      const sent = await veth.runIn(ns1, 'python3', ['-c', send]);
      assert.strictEqual(sent.code, 0, sent.stderr);
      const r = await run;
      assert.strictEqual(r.code, 0, r.stderr);
      await td.run;
      const a = readPcap(fs.readFileSync(ours)).frames;
      const b = readPcap(fs.readFileSync(theirs)).frames;
      assert.strictEqual(a.length, 300);
      assert.strictEqual(b.length, 300);
      for (let i = 0; i < 300; i++) assert.ok(a[i].data.equals(b[i].data), `frame ${i} differs`);
    } finally {
      if (capture && capture.exitCode === null) capture.kill('SIGKILL');
      td.child.kill('SIGKILL');
    }
  });
});
