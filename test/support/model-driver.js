'use strict';
// A minimal 82599 driver for testing the device model: plain functions over
// the addon (BAR mapping, hugepage DMA memory). Not the real driver (lib/).
// Register offsets: 82599 datasheet 8.2.3; descriptors 7.1.6 and 7.2.3.2.4.

const fs = require('fs');
const path = require('path');

// The addon the package's loader picks: the prebuild where there is one (CI), else node-gyp's.
const addon = require('../../lib/host/native').native();

const R = {
  CTRL: 0x0, EEC: 0x10010, RDRXCTL: 0x2f00, AUTOC: 0x42a0, LINKS: 0x42a4, FCTRL: 0x5080,
  RAL0: 0xa200, RAH0: 0xa204, RXCTRL: 0x3000, DMATXCTL: 0x4a80, HLREG0: 0x4240,
  MPC0: 0x3fa0, GPRC: 0x4074, GPTC: 0x4080, QPRDC0: 0x1430, QPRC0: 0x1030, TPR: 0x40d0,
  GORCL: 0x4088, GORCH: 0x408c, CRCERRS: 0x4000, RUC: 0x40a4, RFC: 0x40a8, ROC: 0x40ac,
  RAL0_82598: 0x5400, RAH0_82598: 0x5404, MAXFRS: 0x4268, RXPBSIZE0: 0x3c00,
  RDBAL: 0x1000, RDBAH: 0x1004, RDLEN: 0x1008, RDH: 0x1010, SRRCTL: 0x1014, RDT: 0x1018, RXDCTL: 0x1028,
  TDBAL: 0x6000, TDBAH: 0x6004, TDLEN: 0x6008, TDH: 0x6010, TDT: 0x6018, TXDCTL: 0x6028,
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function open(model, port) {
  const dir = path.join(model.dir, model.addresses[port]);
  const regs = new Uint32Array(addon.mapResource(path.join(dir, 'resource0')));
  return { dir, regs, read: (off) => regs[off >>> 2], write: (off, v) => { regs[off >>> 2] = v >>> 0; } };
}

// PCI command register bit 2: bus master enable.
function busMaster(dev, on) {
  const fd = fs.openSync(path.join(dev.dir, 'config'), 'r+');
  const b = Buffer.alloc(2);
  fs.readSync(fd, b, 0, 2, 4);
  b.writeUInt16LE(on ? (b.readUInt16LE(0) | 4) : (b.readUInt16LE(0) & ~4), 0);
  fs.writeSync(fd, b, 0, 2, 4);
  fs.closeSync(fd);
}

async function waitReg(dev, off, mask, want, timeoutMs = 1000) {
  const end = Date.now() + timeoutMs;
  while ((dev.read(off) & mask) >>> 0 !== want >>> 0) {
    if (Date.now() > end) throw new Error(`register 0x${off.toString(16)} & 0x${mask.toString(16)} never became 0x${want.toString(16)}`);
    await sleep(1);
  }
}

async function reset(dev) {
  dev.write(R.CTRL, (1 << 26) | (1 << 3));           // CTRL.RST | LNK_RST
  await sleep(2);
  await waitReg(dev, R.CTRL, (1 << 26) | (1 << 3), 0);
  await waitReg(dev, R.EEC, 1 << 9, 1 << 9);          // EEPROM auto-read done
  await waitReg(dev, R.RDRXCTL, 1 << 3, 1 << 3);      // DMA init done
}

async function linkUp(dev) {
  dev.write(R.AUTOC, dev.read(R.AUTOC) | (1 << 12)); // restart autonegotiation
  await waitReg(dev, R.LINKS, 1 << 30, 1 << 30, 2000);
}

// Where a test that moves frames starts: reset, then link up.
async function resetLinkUp(dev) {
  await reset(dev);
  await linkUp(dev);
}

// One hugepage of DMA memory: rings at 0 and 64 KiB, buffers of 2 KiB from 128 KiB.
function dmaMemory() {
  const m = addon.allocDma(addon.HUGE_PAGE_SIZE);
  const bytes = new Uint8Array(m.buffer);
  const phys = (off) => m.phys[Math.floor(off / addon.HUGE_PAGE_SIZE)] + (off % addon.HUGE_PAGE_SIZE);
  return { raw: m, bytes, u32: new Uint32Array(m.buffer), phys, free: () => addon.free(m.buffer) };
}

// A fresh two-port model with port PORT mapped, one hugepage of DMA memory and bus
// mastering on: what most model tests start from; with `link`, also reset and linked up
// (resetLinkUp). stopPort() undoes it.
async function startPort(port = 0, { link = false } = {}) {
  const { Model } = require('../../lib/model');
  const model = await Model.start({ ports: 2 });
  const dev = open(model, port);
  const mem = dmaMemory();
  busMaster(dev, true);
  if (link) {
    try {
      await resetLinkUp(dev);
    } catch (err) {
      await stopPort({ model, mem });
      throw err;
    }
  }
  return { model, dev, mem };
}

async function stopPort({ model, mem }) {
  if (mem) mem.free();
  if (model) await model.stop();
}

const RX_RING = 0;
const TX_RING = 64 * 1024;
const rxBuf = (i) => 128 * 1024 + i * 2048;
const txBuf = (i) => 1024 * 1024 + i * 2048;

function split(p) { return [p % 2 ** 32, Math.floor(p / 2 ** 32)]; }

// Read format of RX descriptor i: packet buffer address, no header buffer.
function refillRx(mem, i) {
  const [lo, hi] = split(mem.phys(rxBuf(i)));
  const d = (RX_RING + i * 16) / 4;
  mem.u32[d] = lo; mem.u32[d + 1] = hi; mem.u32[d + 2] = 0; mem.u32[d + 3] = 0;
}

// RX queue 0 with `count` descriptors, all given to the device up to tail `tail`.
async function setupRx(dev, mem, { count = 256, tail = count - 1, srrctl = (1 << 25) | (1 << 28) | 2 } = {}) {
  for (let i = 0; i < count; i++) refillRx(mem, i);
  const [lo, hi] = split(mem.phys(RX_RING));
  dev.write(R.RDRXCTL, dev.read(R.RDRXCTL) | 2);     // CRCSTRIP
  dev.write(R.SRRCTL, srrctl);
  dev.write(R.RDBAL, lo); dev.write(R.RDBAH, hi); dev.write(R.RDLEN, count * 16);
  dev.write(R.RDH, 0); dev.write(R.RDT, 0);
  dev.write(R.RXDCTL, dev.read(R.RXDCTL) | (1 << 25));
  await waitReg(dev, R.RXDCTL, 1 << 25, 1 << 25);
  dev.write(R.RDT, tail);
  dev.write(R.RXCTRL, dev.read(R.RXCTRL) | 1);       // RXEN
}

// RX queue q's registers and a ring of `count` descriptors at offset `ringAt` of `mem`,
// descriptor i's buffer at offset bufAt(i): enabled, no descriptor given to the device
// yet (RDT 0). srrctl: advanced one buffer, DROP_EN, 1 KiB buffers unless given.
function rxQueueRing(dev, mem, q, { count, ringAt, bufAt, srrctl = (1 << 25) | (1 << 28) | 1 }) {
  for (let i = 0; i < count; i++) {
    const w = (ringAt + i * 16) / 4;
    const [lo, hi] = split(mem.phys(bufAt(i)));
    mem.u32[w] = lo; mem.u32[w + 1] = hi; mem.u32[w + 2] = 0; mem.u32[w + 3] = 0;
  }
  const [lo, hi] = split(mem.phys(ringAt));
  const at = 0x40 * q;
  dev.write(R.SRRCTL + at, srrctl);
  dev.write(R.RDBAL + at, lo); dev.write(R.RDBAH + at, hi);
  dev.write(R.RDLEN + at, count * 16);
  dev.write(R.RDH + at, 0); dev.write(R.RDT + at, 0);
  dev.write(R.RXDCTL + at, 1 << 25);
}

// Reset, link up and RX queue 0 running (setupRx with `opts`).
async function readyRx(dev, mem, opts) {
  await resetLinkUp(dev);
  await setupRx(dev, mem, opts);
}

// Read-back of RX descriptor i in write-back format (7.1.6.2): packet type in
// bits 16:4 of dword 0, extended status (19:0) and errors (31:20) in dword 2.
const RXD = {
  DD: 1, EOP: 2, UDPCS: 0x10, L4CS: 0x20, IPCS: 0x40, RXE: 0x20000000, TCPE: 0x40000000, IPE: 0x80000000,
  PKT_IPV4: 0x10, PKT_TCP: 0x100, PKT_UDP: 0x200,
};
function rxDesc(mem, i) {
  const d = (RX_RING + i * 16) / 4;
  const status = mem.u32[d + 2];
  return {
    dd: (status & 1) !== 0,
    eop: (status & 2) !== 0,
    status: status & 0xfffff,
    errors: (status & 0xfff00000) >>> 0,
    pktType: mem.u32[d] & 0x1fff0,
    length: mem.u32[d + 3] & 0xffff,
    data: mem.bytes.subarray(rxBuf(i), rxBuf(i) + 2048),
  };
}

// Statistics registers clear when read (8.2.3.23). The model hands counts over
// only into a register that reads 0 (README): read, and write 0 after a
// non-zero read. Harmless on hardware, where the write has no effect.
function readStat(dev, off) {
  const v = dev.read(off);
  if (v) dev.write(off, 0);
  return v;
}

// Sum a statistics register (readStat) until it reaches `want`; returns the sum.
async function collectStat(dev, off, want, timeoutMs = 1000) {
  const end = Date.now() + timeoutMs;
  let sum = 0;
  for (;;) {
    sum += readStat(dev, off);
    if (sum >= want || Date.now() > end) return sum;
    await sleep(1);
  }
}

async function setupTx(dev, mem, { count = 256 } = {}) {
  const [lo, hi] = split(mem.phys(TX_RING));
  dev.write(R.TDBAL, lo); dev.write(R.TDBAH, hi); dev.write(R.TDLEN, count * 16);
  dev.write(R.TDH, 0); dev.write(R.TDT, 0);
  dev.write(R.DMATXCTL, 1);                          // TE
  dev.write(R.TXDCTL, dev.read(R.TXDCTL) | (1 << 25));
  await waitReg(dev, R.TXDCTL, 1 << 25, 1 << 25);
}

// Reset, link up and TX queue 0 running (setupTx with `opts`).
async function readyTx(dev, mem, opts) {
  await resetLinkUp(dev);
  await setupTx(dev, mem, opts);
}

// Port 0 (dev, mem) transmitting over the model's cable into port 1: port 1 mapped with its
// own DMA memory, bus mastering and RX queue 0 running; port 0 with TX queue 0 running.
// Returns port 1's { dev1, mem1 }; the caller frees mem1.
async function cableToPort1(model, dev, mem) {
  const dev1 = open(model, 1);
  const mem1 = dmaMemory();
  try {
    busMaster(dev1, true);
    await readyRx(dev1, mem1);
    await readyTx(dev, mem);
    await model.cable(0, 1);
  } catch (err) {
    mem1.free();
    throw err;
  }
  return { dev1, mem1 };
}

// Advanced data descriptor i: EOP | IFCS | RS | DEXT, DTYP 0011. addr overrides the
// buffer; eop = false leaves EOP clear (the frame goes on in descriptor i + 1).
function txDesc(mem, i, len, addr, eop = true) {
  const d = (TX_RING + i * 16) / 4;
  const [lo, hi] = split(addr === undefined ? mem.phys(txBuf(i)) : addr);
  mem.u32[d] = lo; mem.u32[d + 1] = hi;
  mem.u32[d + 2] = (len | (3 << 20) | (eop ? 1 << 24 : 0) | (1 << 25) | (1 << 27) | (1 << 29)) >>> 0;
  mem.u32[d + 3] = (len << 14) >>> 0;
}

// Frames of `size` bytes with sequence numbers 0..count-1 (buildFrame) in TX descriptors
// 0..count-1; the caller moves TDT.
function queueTxFrames(mem, count, size) {
  for (let i = 0; i < count; i++) {
    buildFrame(mem.bytes.subarray(txBuf(i)), { size, seq: i });
    txDesc(mem, i, size);
  }
}

const txDone = (mem, i) => (mem.u32[(TX_RING + i * 16) / 4 + 3] & 1) !== 0;

// A frame in the model's source layout (see native/model/traffic.c).
function buildFrame(buf, { size = 60, seq = 0, port = 0, dst = [0x02, 0, 0, 0, 0xff, 0] } = {}) {
  for (let k = 0; k < size; k++) buf[k] = k & 0xff;
  buf.set(dst, 0);
  buf.set([0x02, 0, 0, 0, 0xee, port], 6);
  buf.set([0x08, 0x00, 0x45, 0, (size - 14) >> 8, (size - 14) & 0xff, 0, 0, 0, 0, 64, 17, 0, 0,
    10, 0, port, 1, 10, 1, port, 1], 12);
  let sum = 0;
  for (let k = 14; k < 34; k += 2) sum += (buf[k] << 8) | buf[k + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  const c = ~sum & 0xffff;
  buf[24] = c >> 8; buf[25] = c & 0xff;
  buf.set([4, 0, 5000 >> 8, 5000 & 0xff, (size - 34) >> 8, (size - 34) & 0xff, 0, 0], 34);
  buf[42] = seq >>> 24; buf[43] = (seq >>> 16) & 0xff; buf[44] = (seq >>> 8) & 0xff; buf[45] = seq & 0xff;
}

// Internet checksum sum (RFC 1071) of buf[start, end), not folded or complemented.
function csumAdd(buf, start, end, sum = 0) {
  for (let i = start; i < end; i += 2) sum += (buf[i] << 8) | (i + 1 < end ? buf[i + 1] : 0);
  return sum;
}
const csumFold = (sum) => { while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 0x10000); return sum; };

module.exports = {
  rxQueueRing,
  R, RXD, addon, open, busMaster, reset, linkUp, resetLinkUp, dmaMemory, startPort, stopPort, setupRx, readyRx, refillRx, rxDesc,
  setupTx, readyTx, cableToPort1, txDesc, queueTxFrames, txDone, buildFrame, rxBuf, txBuf, sleep, waitReg, readStat, collectStat, csumAdd, csumFold,
};
