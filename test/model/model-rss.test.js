'use strict';

// RSS in the model (native/model/rss.c; 82599 datasheet 7.1.2.8, MRQC 8.2.3.7.12, RETA and
// RSSRK in 8.2.3.7, write-back 7.1.6.2), driven by writing the registers directly as a
// driver would, and checked against the published verification suite and against this
// test's own Toeplitz (test/support/rss.js).
const assert = require('assert');
const d = require('../support/model-driver');
const { MS_KEY, MS_VECTORS, hashOf, sourceFlow, frameTuple } = require('../support/rss');

const MRQC = 0x0ec80;
const RETA = (n) => 0x0eb00 + 4 * n;
const RSSRK = (n) => 0x0eb80 + 4 * n;
const RQSMR = (n) => 0x02300 + 4 * n;
const RXCSUM = 0x05000;
const QPRC = (n) => 0x01030 + 0x40 * n;
const MRQE_RSS = 0x1;
const TCPIPV4 = 1 << 16;
const IPV4 = 1 << 17;
const UDPIPV4 = 1 << 22;
const PCSD = 1 << 13;
const RSS_TCP_IPV4 = 1;
const RSS_IPV4 = 2;
const RSS_UDP_IPV4 = 7;
const SCAN_MS = 5; // the model takes register writes at its scan, about every 0.5 ms

// Rings of RING descriptors at q * 4 KiB, 1 KiB buffers from 128 KiB on.
const RING = 128;
const ringAt = (q) => q * 4096;
const bufAt = (q, i) => 128 * 1024 + (q * RING + i) * 1024;

function setupQueues(dev, mem, queues) {
  dev.write(d.R.RDRXCTL, dev.read(d.R.RDRXCTL) | 2); // CRCSTRIP
  for (let q = 0; q < queues; q++) d.rxQueueRing(dev, mem, q, { count: RING, ringAt: ringAt(q), bufAt: (i) => bufAt(q, i) });
}

async function startQueues(dev, queues) {
  for (let q = 0; q < queues; q++) await d.waitReg(dev, d.R.RXDCTL + 0x40 * q, 1 << 25, 1 << 25);
  for (let q = 0; q < queues; q++) dev.write(d.R.RDT + 0x40 * q, RING - 1);
  dev.write(d.R.RXCTRL, dev.read(d.R.RXCTRL) | 1); // RXEN
}

// RSSRK byte i is bits 8(i%4)+7..8(i%4) of RSSRK(i/4); RETA entry i byte i%4 of RETA(i/4).
function programRss(dev, { key = MS_KEY, fields = TCPIPV4 | IPV4 | UDPIPV4, reta = () => 0, pcsd = true } = {}) {
  for (let n = 0; n < 10; n++) dev.write(RSSRK(n), key.readUInt32LE(4 * n));
  for (let n = 0; n < 32; n++) {
    let v = 0;
    for (let j = 0; j < 4; j++) v |= reta(4 * n + j) << (8 * j);
    dev.write(RETA(n), v);
  }
  dev.write(RXCSUM, pcsd ? PCSD : 0);
  dev.write(MRQC, (fields | MRQE_RSS) >>> 0);
}

// The frames written back to queue q so far, in ring order.
function delivered(mem, q) {
  const out = [];
  for (let i = 0; i < RING; i++) {
    const w = (ringAt(q) + i * 16) / 4;
    if ((mem.u32[w + 2] & 1) === 0) break;
    out.push({
      rssType: mem.u32[w] & 0xf,
      pktType: mem.u32[w] & 0x1fff0,
      hash: mem.u32[w + 1],
      status: mem.u32[w + 2],
      length: mem.u32[w + 3] & 0xffff,
      data: mem.bytes.subarray(bufAt(q, i), bufAt(q, i) + 1024),
    });
  }
  return out;
}

const seqOf = (b) => ((b[42] << 24) | (b[43] << 16) | (b[44] << 8) | b[45]) >>> 0;

describe('model RSS (82599 7.1.2.8)', function () {
  this.timeout(20000);
  let model;
  let dev;
  let mem;

  beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0, { link: true })); });
  afterEach(() => d.stopPort({ model, mem }));

  it('hashes the published verification suite with the key written to RSSRK', async () => {
    programRss(dev);
    await d.sleep(SCAN_MS);
    for (const v of MS_VECTORS) {
      const ipv4 = await model.hash(0, v.src, v.dst);
      const tcp = await model.hash(0, v.src, v.dst, v.sport, v.dport);
      assert.strictEqual(hashOf(MS_KEY, v.src, v.dst), v.ipv4, `the test's Toeplitz, IPv4 ${v.src} -> ${v.dst}`);
      assert.strictEqual(hashOf(MS_KEY, v.src, v.dst, v.sport, v.dport), v.tcp, `the test's Toeplitz, TCP ${v.src} -> ${v.dst}`);
      assert.strictEqual(ipv4.hash, v.ipv4, `model, IPv4 ${v.src} -> ${v.dst}`);
      assert.strictEqual(tcp.hash, v.tcp, `model, TCP ${v.src}:${v.sport} -> ${v.dst}:${v.dport}`);
    }
  });

  it('writes the published hashes back for frames with those tuples, each to the queue RETA names', async () => {
    setupQueues(dev, mem, 4);
    programRss(dev, { reta: (i) => i % 4 });
    await startQueues(dev, 4);
    await d.sleep(SCAN_MS);
    for (const [proto, fields, type, want] of [['tcp', TCPIPV4 | IPV4, RSS_TCP_IPV4, 'tcp'], ['tcp', IPV4, RSS_IPV4, 'ipv4']]) {
      programRss(dev, { reta: (i) => i % 4, fields });
      await d.sleep(SCAN_MS);
      for (const v of MS_VECTORS) {
        const before = await model.stats(0);
        const seen = [0, 1, 2, 3].map((q) => delivered(mem, q).length);
        await model.source(0, { count: 1, proto, sip: v.src, dip: v.dst, sport: v.sport, dport: v.dport });
        await model.waitFor(0, (s) => s.rxDelivered === before.rxDelivered + 1);
        const q = v[want] % 128 % 4;
        const got = delivered(mem, q);
        assert.strictEqual(got.length, seen[q] + 1, `frame ${v.src} -> ${v.dst} on queue ${q}`);
        const frame = got[got.length - 1];
        assert.strictEqual(frame.hash, v[want]);
        assert.strictEqual(frame.rssType, type);
        assert.strictEqual(frame.pktType, d.RXD.PKT_IPV4 | d.RXD.PKT_TCP);
      }
    }
  });

  it('spreads N flows over the queues as RETA says, one queue per flow, counted per queue (QPRC via RQSMR)', async () => {
    setupQueues(dev, mem, 4);
    programRss(dev, { reta: (i) => i % 4 });
    for (let n = 0; n < 32; n++) dev.write(RQSMR(n), n === 0 ? 0x03020100 : 0); // queue q -> counter q
    await startQueues(dev, 4);
    await d.sleep(SCAN_MS);
    const flows = 64;
    const count = 2 * flows;
    await model.source(0, { count, flows, udpsum: 'good' });
    await model.waitFor(0, (s) => s.rxDelivered === count);
    const want = [0, 0, 0, 0];
    for (let f = 0; f < flows; f++) {
      const t = sourceFlow(f);
      want[hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport) % 4] += 2;
    }
    const queueOf = new Map();
    for (let q = 0; q < 4; q++) {
      const frames = delivered(mem, q);
      assert.strictEqual(frames.length, want[q], `frames on queue ${q}`);
      let last = -1;
      for (const f of frames) {
        const t = frameTuple(f.data);
        const hash = hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport);
        assert.strictEqual(f.hash, hash, `write-back hash of ${t.src}:${t.sport}`);
        assert.strictEqual(f.rssType, RSS_UDP_IPV4);
        assert.strictEqual(hash % 128 % 4, q, 'RETA entry hash & 127 names the queue');
        const key = `${t.src}:${t.sport}`;
        assert.strictEqual(queueOf.get(key) ?? q, q, `flow ${key} on one queue`);
        queueOf.set(key, q);
        assert.ok(seqOf(f.data) > last, 'in order within the queue');
        last = seqOf(f.data);
      }
    }
    assert.strictEqual(queueOf.size, flows);
    assert.ok(want.every((n) => n > 0), 'every queue got flows');
    assert.deepStrictEqual((await model.stats(0)).rxQueues.slice(0, 4), want);
    for (let q = 0; q < 4; q++) assert.strictEqual(await d.collectStat(dev, QPRC(q), want[q]), want[q], `QPRC(${q})`);
  });

  it('steers without the hash in the write-back unless RXCSUM.PCSD is set, and sends all to queue 0 without MRQC.MRQE', async () => {
    setupQueues(dev, mem, 2);
    programRss(dev, { reta: () => 1, pcsd: false });
    await startQueues(dev, 2);
    await d.sleep(SCAN_MS);
    await model.source(0, { count: 4, flows: 4 });
    await model.waitFor(0, (s) => s.rxDelivered === 4);
    const one = delivered(mem, 1);
    assert.strictEqual(one.length, 4);
    assert.ok(one.every((f) => f.hash === 0 && f.rssType === RSS_UDP_IPV4));
    dev.write(MRQC, 0);
    await d.sleep(SCAN_MS);
    await model.source(0, { count: 4, flows: 4 });
    await model.waitFor(0, (s) => s.rxDelivered === 8);
    assert.strictEqual(delivered(mem, 0).length, 4);
    assert.ok(delivered(mem, 0).every((f) => f.rssType === 0 && f.hash === 0));
  });

  describe('programming errors', function () {
    it('a frame RETA sends to a queue with SRRCTL.BSIZEPACKET 0 is a descriptor error (8.2.3.8.7), not delivered', async () => {
      setupQueues(dev, mem, 2);
      dev.write(d.R.SRRCTL + 0x40, 1 << 25); // queue 1: BSIZEPACKET 0
      programRss(dev, { reta: () => 1 });
      await startQueues(dev, 2);
      await d.sleep(SCAN_MS);
      await model.source(0, { count: 4, flows: 4, rate: 100000 });
      const s = await model.waitFor(0, (x) => x.descErrors === 4);
      assert.strictEqual(s.rxDelivered, 0);
      assert.strictEqual(delivered(mem, 1).length, 0);
    });
  });

  describe('a queue without a ring', function () {
    it('drops what RETA sends to a queue that is not enabled, and delivers only queue 0\'s flows to queue 0', async () => {
      setupQueues(dev, mem, 1);
      programRss(dev, { reta: (i) => i % 2 });
      await startQueues(dev, 1);
      await d.sleep(SCAN_MS);
      const flows = 16;
      const vary = ['sport']; // with this key: flows alternate between even and odd hashes
      const queueOf = (f) => {
        const t = sourceFlow(f, { vary });
        return hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport) % 2;
      };
      const toZero = Array.from({ length: flows }, (_, f) => f).filter((f) => queueOf(f) === 0).length;
      assert.ok(toZero > 0 && toZero < flows, 'flows for both queues');
      await model.source(0, { count: 2 * flows, flows, vary, rate: 100000 });
      const s = await model.waitFor(0, (x) => x.rxOffered === 2 * flows);
      const frames = delivered(mem, 0);
      assert.strictEqual(frames.length, 2 * toZero);
      for (const f of frames) {
        const t = frameTuple(f.data);
        assert.strictEqual(hashOf(MS_KEY, t.src, t.dst, t.sport, t.dport) % 2, 0, 'only queue 0\'s flows on queue 0');
      }
      assert.strictEqual(s.rxDropNoDesc, 2 * (flows - toZero));
      assert.deepStrictEqual(s.rxQueues.slice(0, 2), [2 * toZero, 0]);
    });
  });
});

describe('model sources: tuples, protocols, weights', function () {
  this.timeout(20000);
  let model;
  let dev;
  let mem;

  beforeEach(async () => {
    ({ model, dev, mem } = await d.startPort(0));
    await d.readyRx(dev, mem);
  });
  afterEach(() => d.stopPort({ model, mem }));

  const frames = (n) => Array.from({ length: n }, (_, i) => d.rxDesc(mem, i));

  it('mixed protocols: odd flows TCP, even flows UDP, chosen addresses and ports varied as asked, valid checksums', async () => {
    await model.source(0, { count: 8, flows: 4, proto: 'mixed', sip: '192.168.1.10', dip: '172.16.0.1', sport: 40000, dport: 80, vary: ['dip', 'dport'], udpsum: 'good' });
    await model.waitFor(0, (s) => s.rxDelivered === 8);
    frames(8).forEach((f, i) => {
      const t = frameTuple(f.data);
      const flow = i % 4;
      assert.deepStrictEqual(t, { src: '192.168.1.10', dst: `172.16.0.${1 + flow}`, sport: 40000, dport: 80 + flow, proto: flow % 2 ? 6 : 17 });
      assert.strictEqual(f.pktType, d.RXD.PKT_IPV4 | (flow % 2 ? d.RXD.PKT_TCP : d.RXD.PKT_UDP));
      assert.ok(f.status & d.RXD.L4CS && f.status & d.RXD.IPCS, 'checksums checked');
      assert.strictEqual(f.errors, 0, `frame ${i}: no checksum error`);
      assert.strictEqual(seqOf(f.data), i);
    });
  });

  it('Zipf weights: flow f about 1/(f+1) as often as flow 0, the same every run', async () => {
    const count = 255;
    await model.source(0, { count, flows: 4, zipf: 1 });
    await model.waitFor(0, (s) => s.rxDelivered === count);
    const perFlow = [0, 0, 0, 0];
    for (const f of frames(count)) perFlow[frameTuple(f.data).sport - 1024]++;
    // Expected shares 0.48, 0.24, 0.16, 0.12 of 255 draws.
    assert.ok(perFlow[0] > perFlow[1] && perFlow[1] > perFlow[2] && perFlow[2] >= perFlow[3], perFlow.join(' '));
    assert.ok(perFlow[0] / perFlow[1] > 1.5 && perFlow[0] / perFlow[1] < 2.6, perFlow.join(' '));
  });

  it('sink check=1: order per flow across reordered flows, TCP frames too', async () => {
    await d.setupTx(dev, mem);
    await model.sink(0, { check: true });
    // (flow, seq): flows 0 and 1 interleaved and reordered against each other (fine), then
    // frame 1 of flow 0 after its frame 4 (out of order within the flow); flow 2 is TCP.
    const order = [[0, 0], [1, 3], [1, 5], [0, 2], [2, 6], [0, 4], [0, 1], [2, 7]];
    order.forEach(([flow, seq], i) => {
      const b = mem.bytes.subarray(d.txBuf(i));
      d.buildFrame(b, { size: 60, seq });
      b[35] = flow; // source port 1024 + flow
      if (flow === 2) { // TCP: the sink reads the sequence number at 42 too
        b[23] = 6;
        b[24] = 0; b[25] = 0;
        const c = ~d.csumFold(d.csumAdd(b, 14, 34)) & 0xffff;
        b[24] = c >> 8; b[25] = c & 0xff;
      }
      d.txDesc(mem, i, 60);
    });
    dev.write(d.R.TDT, order.length);
    const s = await model.waitFor(0, (x) => x.sinkFrames === order.length);
    assert.strictEqual(s.sinkFlows, 3);
    assert.strictEqual(s.sinkFlowErrors, 1);
    assert.strictEqual(s.sinkBadFrames, 0);
  });

  it('refuses bad flow options with a reason', async () => {
    await assert.rejects(model.source(0, { proto: 'sctp' }), /bad source value: proto/);
    await assert.rejects(model.source(0, { proto: 'tcp', size: 50 }), /size >= 54/);
    await assert.rejects(model.source(0, { vary: 'sip,ttl' }), /bad source value: vary/);
    await assert.rejects(model.source(0, { zipf: 0 }), /bad source value: zipf/);
  });
});
