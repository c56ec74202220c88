'use strict';

// What `generate` puts on the wire for each of its options, as tshark decodes the model's
// capture (pcap-out): addresses and ports and their ranges, flows, TCP, a VLAN tag, frame
// sizes (a range, IMIX), sequence numbers; and which pacing a rate gets, with the 82599's
// rate limiter registers (RTTDQSEL, RTTBCNRC, datasheet 8.2.3.10) as the driver leaves
// them on the model.
const assert = require('assert');
const path = require('path');
const { generate } = require('../../lib/apps/generate');
const { parseRate } = require('../../lib/traffic/pacing');
const { native } = require('../../lib/host/native');
const { tsharkFields, suiteTmpDir, modelForSuite, assertIxyError } = require('../support/helpers');

const quiet = { write() {} };
const RTTDQSEL = 0x04904;
const RTTBCNRC = 0x04984;
const RS_ENA = 0x80000000;

describe('generate: the frames of each option, decoded by tshark', function () {
  this.timeout(60000);
  const model = modelForSuite(1);
  const tmp = suiteTmpDir('ixy-genframes-');
  let n = 0;

  // Runs generate with `options` for `count` frames; returns tshark's fields per frame.
  async function framesOf(options, count, fields) {
    const file = path.join(tmp(), `g${n++}.pcap`);
    await model().pcapOut(0, file);
    const r = await generate(model().addresses[0], { count, out: quiet, ...options });
    await model().pcapOut(0, null);
    assert.strictEqual(r.sent, count);
    const rows = tsharkFields(file, fields);
    assert.strictEqual(rows.length, count, 'frames in the capture');
    return rows;
  }

  const seqOf = (hex) => parseInt(hex.slice(0, 8), 16);

  it('by default: 60-byte IPv4/UDP frames 10.0.0.1:1024 -> 10.1.0.1:5000, good IPv4 checksums, sequence numbers 0..n-1', async function () {
    const rows = await framesOf({}, 40, ['frame.len', 'eth.src', 'eth.dst', 'ip.src', 'ip.dst', 'udp.srcport', 'udp.dstport', 'ip.checksum.status', 'udp.length', 'udp.payload']);
    rows.forEach((f, k) => {
      assert.deepStrictEqual(f.slice(0, 9), ['60', '02:00:00:00:00:01', 'ff:ff:ff:ff:ff:ff', '10.0.0.1', '10.1.0.1', '1024', '5000', '1', '26']);
      assert.strictEqual(seqOf(f[9]), k);
    });
  });

  it('--src-mac, --dst-mac, --src-ip, --dst-ip, --src-port, --dst-port ranges: flow k takes the k-th value of each (mod its length)', async function () {
    const rows = await framesOf({
      srcMac: '02:00:00:00:00:fe-02:00:00:00:01:01', dstMac: '0a:00:00:00:00:01', srcIp: '192.168.1.254-192.168.2.1', dstIp: '10.9.0.1-10.9.0.2',
      srcPort: '65534-65535', dstPort: '7', flows: 12,
    }, 24, ['eth.src', 'eth.dst', 'ip.src', 'ip.dst', 'udp.srcport', 'udp.dstport', 'ip.checksum.status', 'udp.payload']);
    const srcMacs = ['02:00:00:00:00:fe', '02:00:00:00:00:ff', '02:00:00:00:01:00', '02:00:00:00:01:01'];
    const srcIps = ['192.168.1.254', '192.168.1.255', '192.168.2.0', '192.168.2.1'];
    rows.forEach((f, k) => {
      const flow = k % 12;
      assert.deepStrictEqual(f.slice(0, 7), [srcMacs[flow % 4], '0a:00:00:00:00:01', srcIps[flow % 4], `10.9.0.${1 + (flow % 2)}`, String(65534 + (flow % 2)), '7', '1'], `frame ${k}`);
      assert.strictEqual(seqOf(f[7]), k);
    });
  });

  it('--flows N without ranges: source IP and source port count up, one 5-tuple per flow', async function () {
    const rows = await framesOf({ flows: 300 }, 600, ['ip.src', 'udp.srcport']);
    const tuples = new Set(rows.map((f) => f.join(' ')));
    assert.strictEqual(tuples.size, 300);
    assert.deepStrictEqual(rows[299], ['10.0.1.44', String(1024 + 299)]);
    assert.deepStrictEqual(rows[300], rows[0]);
  });

  it('--tcp: TCP frames (PSH, ACK) with correct TCP and IPv4 checksums, for every size of a range', async function () {
    const rows = await framesOf({ protocol: 'tcp', size: '64-80', flows: 3 }, 51, ['frame.len', 'ip.proto', 'tcp.srcport', 'tcp.dstport', 'tcp.flags', 'tcp.checksum.status', 'ip.checksum.status', 'tcp.len', 'tcp.payload']);
    const sizes = new Set();
    rows.forEach((f, k) => {
      const len = Number(f[0]);
      sizes.add(len);
      assert.ok(len >= 64 && len <= 80, `size ${len}`);
      assert.deepStrictEqual([f[1], f[2], f[3], f[4], f[5], f[6]], ['6', String(1024 + (k % 3)), '5000', '0x0018', '1', '1'], `frame ${k}`);
      assert.strictEqual(Number(f[7]), len - 54);
      assert.strictEqual(seqOf(f[8]), k);
    });
    assert.strictEqual(sizes.size, 17, 'every size of 64-80 within 51 frames');
  });

  it('--vlan: an 802.1Q tag with the id, the IPv4/UDP frame inside it', async function () {
    const rows = await framesOf({ vlan: 1234, size: 100 }, 8, ['frame.len', 'eth.type', 'vlan.id', 'vlan.etype', 'ip.checksum.status', 'udp.length', 'udp.payload']);
    rows.forEach((f, k) => {
      assert.deepStrictEqual(f.slice(0, 6), ['100', '0x8100', '1234', '0x0800', '1', String(100 - 18 - 20)]);
      assert.strictEqual(seqOf(f[6]), k);
    });
  });

  it("--size imix: 60, 590 and 1514 bytes (64, 594, 1518 with FCS) as 7:4:1", async function () {
    const rows = await framesOf({ size: 'imix' }, 1200, ['frame.len', 'ip.checksum.status', 'udp.length']);
    const counts = {};
    for (const [len, ok, udpLength] of rows) {
      counts[len] = (counts[len] || 0) + 1;
      assert.strictEqual(ok, '1');
      assert.strictEqual(Number(udpLength), Number(len) - 34);
    }
    assert.deepStrictEqual(counts, { 60: 700, 590: 400, 1514: 100 });
  });

  it('rejects bad options before touching the device, in one line with a code', async function () {
    const cases = [
      [{ srcIp: '10.0.0.9-10.0.0.1' }, /ends before it starts/],
      [{ size: '59' }, /frame size must be 60\.\.1514/],
      [{ protocol: 'sctp' }, /protocol must be udp or tcp/],
      [{ vlan: 4096 }, /VLAN id must be 0\.\.4095/],
      [{ flows: 0 }, /flows must be 1\.\.65536/],
      [{ rate: '5 furlongs' }, /is not a rate/],
      [{ rate: 1000, pacing: 'sometimes' }, /pacing must be one of/],
    ];
    for (const [options, pattern] of cases) {
      await assert.rejects(generate(model().addresses[0], { count: 1, out: quiet, ...options }), (err) => {
        assertIxyError(err, 'EINVAL', pattern);
        return true;
      });
    }
  });
});

describe('generate --rate: which pacing, and the rate limiter as the driver programs it (82599, 7.7.2.2, 8.2.3.10.x)', function () {
  this.timeout(60000);
  const model = modelForSuite(1);

  function registers() {
    const dir = path.join(model().dir, model().addresses[0]);
    return new Uint32Array(native().mapResource(path.join(dir, 'resource0')));
  }

  it('100 kpps of 60-byte frames: pacing by the NIC, RTTDQSEL = queue 0 and RTTBCNRC = RS_ENA | 10 Gb/s / 51.2 Mb/s in RF_INT.RF_DEC', async function () {
    const r = await generate(model().addresses[0], { rate: '100kpps', count: 2000, out: quiet });
    assert.strictEqual(r.pacing, 'nic');
    assert.strictEqual(r.sent, 2000);
    const regs = registers();
    assert.strictEqual(regs[RTTDQSEL >> 2], 0);
    // 100000 x 64 bytes x 8 = 51.2 Mb/s; 10000 / 51.2 = 195.3125 = 195 + 5120/16384
    assert.strictEqual(regs[RTTBCNRC >> 2], (RS_ENA | (195 << 14) | 5120) >>> 0);
    assert.strictEqual((await model().stats(0)).txRateLimited, 1, 'the model saw queue 0 limited');
  });

  it('a rate in bit/s counts frames with their FCS: 1 Gbit/s of 60-byte frames is 1953125 pps, factor 10', async function () {
    const r = await generate(model().addresses[0], { rate: '1Gbit/s', count: 5000, out: quiet });
    assert.strictEqual(r.pacing, 'nic');
    assert.strictEqual(registers()[RTTBCNRC >> 2], (RS_ENA | (10 << 14)) >>> 0);
    assert.strictEqual(parseRate('1Gbit/s').bps, 1e9);
  });

  it('10 kpps (5.12 Mb/s, below the limiter\'s 9.77): software pacing, and --pacing nic says why it cannot', async function () {
    const r = await generate(model().addresses[0], { rate: 10000, count: 200, out: quiet });
    assert.strictEqual(r.pacing, 'software');
    assert.strictEqual(r.sent, 200);
    await assert.rejects(generate(model().addresses[0], { rate: 10000, count: 1, pacing: 'nic', out: quiet }), (err) => {
      assertIxyError(err, 'EUNSUPPORTED', /rate limiter spaces frames for 9\.77 Mb\/s to 10 Gb\/s, not 5\.120 Mb\/s.*--pacing software/);
      return true;
    });
  });
});

describe('parseRate', function () {
  it('reads frame rates and bit rates with their units', function () {
    assert.deepStrictEqual(parseRate(12), { pps: 12 });
    assert.deepStrictEqual(parseRate('10k'), { pps: 1e4 });
    assert.deepStrictEqual(parseRate('100kpps'), { pps: 1e5 });
    assert.deepStrictEqual(parseRate('1.5Mpps'), { pps: 1.5e6 });
    assert.deepStrictEqual(parseRate('500Mbit'), { bps: 5e8 });
    assert.deepStrictEqual(parseRate('9.5 Gb/s'), { bps: 9.5e9 });
    for (const bad of ['', 'fast', '10g', '-5', '1e6']) assert.throws(() => parseRate(bad), /is not a rate/);
  });
});
