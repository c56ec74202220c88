'use strict';

// Filtered captures on the device model: `ixy pcap PCI file [n] expression...` and
// receive({ filter }). The model replays the mixed traffic of test/support/filter-traffic.js (each
// frame padded to the 60 bytes Ethernet requires, since the model drops runts as a NIC
// does); what ixy writes must be, byte for byte and in order, the frames tcpdump keeps
// from the same file with the same expression.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const ixy = require('../../lib');
const { PcapWriter, readPcap } = require('../../lib/pcap-file');
const packet = require('../../lib/packet');
const { runIxy, suiteTmpDir, modelForSuite } = require('../support/helpers');
const { frames } = require('../support/filter-traffic');

const padded = frames().map((f) => (f.length >= 60 ? f : Buffer.concat([f, Buffer.alloc(60 - f.length)])));

// The frames, as Buffers, tcpdump keeps from `file` for expression.
function tcpdumpFrames(file, expression, dir) {
  const out = path.join(dir, 'tcpdump.pcap');
  const r = spawnSync('tcpdump', ['-r', file, '-w', out, '--', expression], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tcpdump ${expression}: ${r.stderr}`);
  return readPcap(out).frames.map((f) => f.data);
}

describe('filtered capture on the device model', function () {
  this.timeout(120000);
  const model = modelForSuite(1);
  const tmp = suiteTmpDir('ixy-filter-capture-');
  let input;

  before(function () {
    input = path.join(tmp(), 'in.pcap');
    const writer = new PcapWriter(input);
    padded.forEach((f, i) => writer.write(f, f.length, i + 1, 0));
    writer.close();
  });

  // Runs `ixy pcap` with args; once it is capturing, `start()` makes the traffic.
  function capture(args, start) {
    let started = false;
    return runIxy(['pcap', model().addresses[0], ...args], {
      onStart: (child) => {
        child.stderr.on('data', (d) => {
          if (started || !/capturing on/.test(String(d))) return;
          started = true;
          start(child);
        });
      },
    });
  }

  const EXPRESSIONS = [
    ['tcp'], ['udp', 'port', '5000'], ['vlan and udp'], ['host', '10.0.0.1', 'or', 'arp'],
    ['icmp[icmptype] = icmp-echo'], ['ip6', 'and', 'not', 'tcp'], ['tcp[tcpflags] & (tcp-syn|tcp-fin) != 0'],
  ];
  for (const words of EXPRESSIONS) {
    const expression = words.join(' ');
    it(`ixy pcap PCI file n ${words.map((w) => (w.includes(' ') ? `'${w}'` : w)).join(' ')}: the frames tcpdump keeps`, async function () {
      const expected = tcpdumpFrames(input, expression, tmp());
      assert.ok(expected.length > 0 && expected.length < padded.length, `${expected.length} frames`);
      const out = path.join(tmp(), 'out.pcap');
      await model().clear(0);
      // n stops the capture once the last frame tcpdump keeps is in; --seconds only ends a
      // broken run.
      const run = await capture([out, String(expected.length), ...words, '--seconds', '60'], () => model().pcapIn(0, input));
      assert.strictEqual(run.code, 0, run.stderr);
      assert.match(run.stderr, new RegExp(`captured ${expected.length} frames`));
      const got = readPcap(out).frames.map((f) => f.data);
      assert.deepStrictEqual(got.map((f) => f.toString('hex')), expected.map((f) => f.toString('hex')));
      assert.strictEqual((await model().stats(0)).rxDropNoDesc, 0);
    });
  }

  // As tcpdump users write it: no count, the expression right after the file. The model's
  // source sends UDP to port 5000: `udp and dst port 5000` keeps every frame, `tcp` none,
  // and the frames `tcp` rejects go back to the pool at once (otherwise the pool of 4,096
  // buffers would run dry after 3,584 frames, and the model would count frames dropped
  // for want of a descriptor).
  for (const [words, keepsAll] of [[['udp', 'and', 'dst', 'port', '5000'], true], [['tcp'], false]]) {
    it(`ixy pcap PCI file ${words.join(' ')} (no n): ${keepsAll ? 'keeps every frame' : 'keeps none, and frees them'}`, async function () {
      const out = path.join(tmp(), 'no-n.pcap');
      await model().clear(0);
      const run = await capture([out, ...words, '--seconds', '60'], async (child) => {
        await model().source(0, { rate: 20000, size: 60 });
        await model().waitFor(0, (s) => s.rxDelivered >= 6000, 30000);
        child.kill('SIGINT');
      });
      await model().sourceOff(0);
      assert.strictEqual(run.code, 0, run.stderr);
      assert.match(run.stderr, new RegExp(`matching '${words.join(' ')}'`));
      const got = readPcap(out).frames;
      const captured = Number(/captured (\d+) frames/.exec(run.stderr)[1]);
      assert.strictEqual(got.length, captured);
      const m = await model().stats(0);
      if (keepsAll) {
        assert.ok(captured >= 6000, `${captured} frames`);
        got.forEach((f, i) => assert.strictEqual(f.data.readUInt32BE(packet.SEQ_OFFSET), i, `frame ${i}: sequence number`));
      } else {
        assert.strictEqual(captured, 0);
        assert.ok(m.rxDelivered >= 6000);
      }
      assert.strictEqual(m.rxDropNoDesc, 0);
    });
  }

  it('a bad expression is one line with EFILTER\'s column, exit code 1, and leaves no file', async function () {
    const out = path.join(tmp(), 'bad.pcap');
    const run = await runIxy(['pcap', model().addresses[0], out, '10', 'udp', 'and', 'dst', 'prot', '53']);
    assert.strictEqual(run.code, 1);
    assert.strictEqual(run.stderr, "ixy: filter 'udp and dst prot 53', column 13: unknown word 'prot' (host and network names are not resolved: write the address)\n");
    assert.ok(!fs.existsSync(out));
  });

  it("receive({ filter }) hands out only matching frames, and frees the others at once", async function () {
    const dev = await ixy.open(model().addresses[0], { rxRingSize: 512 });
    const pool = dev.pools[0];
    const expected = tcpdumpFrames(input, 'ip and not tcp', tmp());
    const got = [];
    try {
      await model().clear(0);
      await model().pcapIn(0, input);
      for await (const batch of dev.receive(0, { filter: 'ip and not tcp' })) {
        assert.ok(batch.count > 0);
        for (let i = 0; i < batch.count; i++) got.push(Buffer.from(batch.data(i).subarray(0, batch.lengths[i])).toString('hex'));
        // Only the ring and this batch hold buffers: the rejected ones are back.
        assert.strictEqual(pool.entries - pool.freeCount, 512 + batch.count);
        if (got.length >= expected.length) break;
      }
    } finally {
      dev.close();
    }
    assert.deepStrictEqual(got, expected.map((f) => f.toString('hex')));
  });

  it("receive()'s filter is checked before anything starts: EFILTER for a bad expression, EINVAL for another type", async function () {
    const dev = await ixy.open(model().addresses[0]);
    try {
      assert.throws(() => dev.receive(0, { filter: 'tcp or 80' }), { code: 'EFILTER', message: /column 8: '80' needs a qualifier/ });
      assert.throws(() => dev.receive(0, { filter: 42 }), { code: 'EINVAL', message: /filter must be a filter expression or a function \(bytes, length\) => boolean, got 42/ });
      const it = dev.receive(0, { filter: (b, len) => len > 1000 });
      await it.return();
    } finally {
      dev.close();
    }
  });
});
