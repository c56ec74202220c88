'use strict';
// Tests of the 82599 device model's receive path (native/model/rx.c) through a minimal test
// driver (test/support/model-driver.js): descriptors, drops, checksums, frame errors, filters.

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const d = require('../support/model-driver');

describe('device model: receive', function () {
  this.timeout(10000);

  let model, dev, mem;
  beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0)); });
  afterEach(() => d.stopPort({ model, mem }));

  it('receives source frames with DD, EOP, length and the documented layout', async () => {
    await d.readyRx(dev, mem);
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
    await d.readyRx(dev, mem, { tail: 16, srrctl: (1 << 25) | 2 });
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
    await d.readyRx(dev, mem, { tail: 16 });              // setupRx sets DROP_EN by default
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
    await d.readyRx(dev, mem, { tail: 255 });
    await model.source(0, { rate: 10000 });
    process.kill(model.pid, 'SIGSTOP');
    await d.sleep(300);
    process.kill(model.pid, 'SIGCONT');
    const s = await model.waitFor(0, (x) => x.sourcePausedUs > 0);
    assert.ok(s.sourcePausedUs >= 299000, `paused ${s.sourcePausedUs} us`);
    assert.strictEqual(s.rxDropNoDesc, 0);
    assert.ok(s.rxOffered < 255, `offered ${s.rxOffered}`);
  });

  it('reports packet type and checksums in the write-back: IPCS, L4CS/UDPCS, IPE, L4E', async () => {
    await d.readyRx(dev, mem);
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
    await d.readyRx(dev, mem);
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
    await d.readyRx(dev, mem);
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
    await d.readyRx(dev, mem);
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
    await d.readyRx(dev, mem);
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
    await d.readyRx(dev, mem, { srrctl: (1 << 25) | (1 << 28) | 1 });      // 1 KiB buffers
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
    await d.readyRx(dev, mem, { srrctl: (1 << 25) | (1 << 28) | 1, tail: 2 });
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
    await d.readyRx(dev, mem);
    d.busMaster(dev, false);
    await d.sleep(5);
    await model.source(0, { count: 5, rate: 1000 });
    const s = await model.waitFor(0, (x) => x.rxOffered === 5);
    assert.strictEqual(s.rxDropDisabled, 5);
    assert.strictEqual(d.rxDesc(mem, 0).dd, false);
  });
});
