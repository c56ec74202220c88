'use strict';

// RSS queues and memory a driver gives back (native/model/rss.c, dma.c): while RSS
// delivers to another queue, queue 0's state waits in rss.q[0]. A DMA rescan in the middle
// of such a frame (a buffer the model had not mapped yet) must release queue 0's ring too
// when its memory went away, as it does for the queue being delivered to: the NIC goes on
// writing there (dmaAfterRelease), the model never touches the unmapped memory.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const d = require('../support/model-driver');
const { MS_KEY, MS_VECTORS, hashOf } = require('../support/rss');

const MRQC = 0x0ec80;
const RETA = (n) => 0x0eb00 + 4 * n;
const RSSRK = (n) => 0x0eb80 + 4 * n;
const MRQE_RSS = 0x1;
const TCPIPV4 = 1 << 16;
const IPV4 = 1 << 17;
const RING = 128;

// Queue q's ring at 0 of `mem`, its 1 KiB buffers from 64 KiB on.
function setupQueue(dev, mem, q) {
  d.rxQueueRing(dev, mem, q, { count: RING, ringAt: 0, bufAt: (i) => 64 * 1024 + i * 1024 });
}

// A TCP frame to port 0's MAC with the tuple of verification vector v.
function tcpFrame(v) {
  const f = Buffer.alloc(60);
  f.set([2, 0, 0, 0, 0xff, 0, 2, 0, 0, 0, 0xee, 9, 8, 0], 0);
  f.set([0x45, 0, 0, 46, 0, 0, 0, 0, 64, 6, 0, 0], 14);
  f.set(v.src.split('.').map(Number), 26);
  f.set(v.dst.split('.').map(Number), 30);
  f.writeUInt16BE(~d.csumFold(d.csumAdd(f, 14, 34)) & 0xffff, 24);
  f.writeUInt16BE(v.sport, 34); f.writeUInt16BE(v.dport, 36); f[46] = 0x50;
  return f;
}

function writePcap(file, frames) {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0); head.writeUInt16LE(2, 4); head.writeUInt16LE(4, 6);
  head.writeUInt32LE(65535, 16); head.writeUInt32LE(1, 20);
  const recs = frames.map((f) => { const h = Buffer.alloc(16); h.writeUInt32LE(f.length, 8); h.writeUInt32LE(f.length, 12); return Buffer.concat([h, f]); });
  fs.writeFileSync(file, Buffer.concat([head, ...recs]));
}

// RSS on with the verification key, RETA entry i naming queue i % 2, then RX started on
// queues 0 and 1 (each given RING - 1 descriptors).
async function rssOnTwoQueues(dev) {
  for (let n = 0; n < 10; n++) dev.write(RSSRK(n), MS_KEY.readUInt32LE(4 * n));
  for (let n = 0; n < 32; n++) dev.write(RETA(n), 0x01000100);
  dev.write(MRQC, (TCPIPV4 | IPV4 | MRQE_RSS) >>> 0);
  for (const q of [0, 1]) await d.waitReg(dev, d.R.RXDCTL + 0x40 * q, 1 << 25, 1 << 25);
  for (const q of [0, 1]) dev.write(d.R.RDT + 0x40 * q, RING - 1);
  dev.write(d.R.RXCTRL, dev.read(d.R.RXCTRL) | 1); // RXEN
}

// A verification vector whose hash RETA above sends to queue q.
const toQueue = (q) => MS_VECTORS.find((v) => (hashOf(MS_KEY, v.src, v.dst, v.sport, v.dport) & 127) % 2 === q);

// Offers `frames` on port 0 through pcap-in and waits until the model has offered
// `offered` frames in all.
async function offer(model, frames, offered) {
  const dir = fs.mkdtempSync('/tmp/ixy-model-');
  const file = path.join(dir, 'in.pcap');
  writePcap(file, frames);
  try {
    await model.pcapIn(0, file);
    await model.waitFor(0, (s) => s.rxOffered === offered);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
}

describe('model RSS: queue 0 released while another queue receives', function () {
  this.timeout(20000);
  let model;
  let dev;
  let mem;
  const extra = [];

  beforeEach(async () => {
    ({ model, dev, mem } = await d.startPort(0));
    await d.reset(dev);
    await d.linkUp(dev);
  });
  afterEach(async () => {
    for (const m of extra.splice(0)) if (m.live) m.free();
    await d.stopPort({ model, mem });
  });

  // Queue 0 on DMA memory of its own, queue 1 on the port's, RSS on over both; returns
  // queue 0's memory once the model has mapped its ring.
  async function twoQueues() {
    const q0mem = d.dmaMemory();
    q0mem.live = true;
    extra.push(q0mem);
    dev.write(d.R.RDRXCTL, dev.read(d.R.RDRXCTL) | 2); // CRCSTRIP
    setupQueue(dev, q0mem, 0);
    setupQueue(dev, mem, 1);
    await rssOnTwoQueues(dev);
    await model.waitFor(0, (s) => s.rxQueueActive, 2000);
    return q0mem;
  }

  it('releases queue 0\'s ring when its memory goes away in a rescan made for a frame to queue 1', async () => {
    const q0mem = await twoQueues();

    const x = toQueue(1);
    const y = toQueue(0);
    // Queue 1's first buffer in memory the model has not seen yet; queue 0's memory gone.
    const fresh = d.dmaMemory();
    fresh.live = true;
    extra.push(fresh);
    const phys = fresh.phys(0);
    mem.u32[0] = phys % 2 ** 32; mem.u32[1] = Math.floor(phys / 2 ** 32);
    q0mem.free();
    q0mem.live = false;

    await offer(model, [tcpFrame(x), tcpFrame(y)], 2);
    const s = await model.stats(0);
    assert.strictEqual(mem.u32[2] & 1, 1, 'queue 1 wrote its frame back (DD)');
    assert.strictEqual((fresh.bytes[34] << 8) | fresh.bytes[35], x.sport, 'into the buffer the rescan found');
    assert.strictEqual(s.rxQueueReleased, true, 'queue 0 released');
    assert.strictEqual(s.dmaAfterRelease, 1, 'the frame for queue 0 counted, not written');
    assert.deepStrictEqual(s.rxQueues.slice(0, 2), [0, 1]);
  });

  it('drops a frame RETA sends to queue 0 while queue 0\'s ring is not mapped, and goes on', async () => {
    dev.write(d.R.RDRXCTL, dev.read(d.R.RDRXCTL) | 2); // CRCSTRIP
    setupQueue(dev, mem, 1);
    // Queue 0 enabled on a ring at a physical address that is no DMA memory of the driver.
    dev.write(d.R.SRRCTL, (1 << 25) | (1 << 28) | 1);
    dev.write(d.R.RDBAL, 0x1000); dev.write(d.R.RDBAH, 0);
    dev.write(d.R.RDLEN, RING * 16);
    dev.write(d.R.RDH, 0); dev.write(d.R.RDT, 0);
    dev.write(d.R.RXDCTL, 1 << 25);
    await rssOnTwoQueues(dev);
    await d.sleep(5);

    await offer(model, [tcpFrame(toQueue(0)), tcpFrame(toQueue(1))], 2);
    const s = await model.stats(0);
    assert.strictEqual(s.rxDropNoDesc, 1, 'the frame for queue 0 found no descriptor');
    assert.deepStrictEqual(s.rxQueues.slice(0, 2), [0, 1]);
    assert.strictEqual(mem.u32[2] & 1, 1, 'queue 1 wrote its frame back (DD)');
  });

  it('drops a frame RETA sends to a queue the driver has disabled since it last received', async () => {
    await twoQueues();

    await offer(model, [tcpFrame(toQueue(1))], 1);
    await model.waitFor(0, (s) => s.rxDelivered === 1);
    dev.write(d.R.RXDCTL + 0x40, 0); // queue 1 off
    await d.sleep(5);
    await offer(model, [tcpFrame(toQueue(1))], 2);
    const s = await model.stats(0);
    assert.strictEqual(s.rxDelivered, 1);
    assert.strictEqual(s.rxDropNoDesc, 1, 'the frame for the disabled queue found no descriptor');
  });
});
