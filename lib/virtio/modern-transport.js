'use strict';

// Modern virtio over PCI (1af4:1041, or the modern half of a transitional device): the
// register blocks are found through vendor-specific PCI capabilities (virtio 1.1, 4.1.4)
// and live in memory BARs, which are mapped. Every access uses a typed array of the
// field's width, so the device sees 8-, 16- and 32-bit accesses as the spec requires
// (4.1.3.1); 64-bit fields are written as two 32-bit halves, low first.
const C = require('./constants');
const { IxyError } = require('../host/errors');
const { getReg, setReg } = require('../host/register-access');
const { native } = require('../host/native');

const PCI_STATUS = 0x06;
const PCI_STATUS_CAP_LIST = 1 << 4;
const PCI_CAPABILITY_LIST = 0x34;
const TWO_32 = 2 ** 32;

// One register block: typed views over [offset, offset + length) of a mapped BAR.
class Block {
  constructor(buffer, offset, length) {
    this.u8 = new Uint8Array(buffer, offset, length);
    this.u16 = new Uint16Array(buffer, offset, length >> 1);
    this.u32 = new Uint32Array(buffer, offset, length >> 2);
  }
}

// 4.1.4: walk the capability list; returns { type: { bar, offset, length, extra } }.
function findCapabilities(config) {
  const caps = {};
  if ((config.readUInt16LE(PCI_STATUS) & PCI_STATUS_CAP_LIST) === 0) return caps;
  const seen = new Set();
  for (let at = config[PCI_CAPABILITY_LIST] & 0xfc; at !== 0 && !seen.has(at); at = config[at + 1] & 0xfc) {
    seen.add(at);
    if (config[at] !== C.PCI_CAP_ID_VNDR) continue;
    const type = config[at + 3];
    if (caps[type]) continue; // the first of each type is the one to use (4.1.4)
    caps[type] = {
      bar: config[at + 4],
      offset: config.readUInt32LE(at + 8),
      length: config.readUInt32LE(at + 12),
      // notify_off_multiplier follows the notification capability (4.1.4.4)
      extra: type === C.PCI_CAP_NOTIFY_CFG ? config.readUInt32LE(at + 16) : 0,
    };
  }
  return caps;
}

class ModernTransport {
  // handle: the device's (lib/host/device-handle.js).
  constructor(handle) {
    this.kind = 'modern';
    this.address = handle.address;
    this.handle = handle;
    const caps = findCapabilities(handle.readConfigSpace());
    for (const type of [C.PCI_CAP_COMMON_CFG, C.PCI_CAP_NOTIFY_CFG, C.PCI_CAP_DEVICE_CFG]) {
      if (!caps[type]) throw new IxyError('EUNSUPPORTED', `${this.address} lacks the virtio capability of type ${type}: not a modern virtio device`);
    }
    this.bars = new Map();
    const block = (cap) => new Block(this.bar(cap.bar), cap.offset, cap.length);
    this.common = block(caps[C.PCI_CAP_COMMON_CFG]);
    this.device = block(caps[C.PCI_CAP_DEVICE_CFG]);
    this.notifyCap = caps[C.PCI_CAP_NOTIFY_CFG];
    this.notifyBuffer = this.bar(this.notifyCap.bar);
  }

  bar(index) {
    if (!this.bars.has(index)) this.bars.set(index, this.handle.mapBar(index));
    return this.bars.get(index);
  }

  get status() {
    return this.common.u8[C.COMMON_DEVICE_STATUS];
  }

  set status(value) {
    this.common.u8[C.COMMON_DEVICE_STATUS] = value;
  }

  // 4.1.4.3.2: after writing 0 the driver waits until the status reads 0 again.
  reset() {
    this.status = 0;
    const deadline = Date.now() + 1000;
    while (this.status !== 0) {
      if (Date.now() > deadline) throw new IxyError('ETIMEDOUT', `virtio device ${this.address} did not finish its reset`);
    }
  }

  // 64 feature bits, read 32 at a time through the select register (4.1.4.3).
  deviceFeatures() {
    const c = this.common.u32;
    setReg(c, C.COMMON_DEVICE_FEATURE_SELECT, 0);
    const low = getReg(c, C.COMMON_DEVICE_FEATURE);
    setReg(c, C.COMMON_DEVICE_FEATURE_SELECT, 1);
    const high = getReg(c, C.COMMON_DEVICE_FEATURE);
    return (BigInt(high) << 32n) | BigInt(low);
  }

  setDriverFeatures(features) {
    const c = this.common.u32;
    setReg(c, C.COMMON_DRIVER_FEATURE_SELECT, 0);
    setReg(c, C.COMMON_DRIVER_FEATURE, Number(features & 0xffffffffn));
    setReg(c, C.COMMON_DRIVER_FEATURE_SELECT, 1);
    setReg(c, C.COMMON_DRIVER_FEATURE, Number(features >> 32n));
  }

  get needsFeaturesOk() {
    return true;
  }

  readConfig8(offset) {
    return this.device.u8[offset];
  }

  readConfig16(offset) {
    return this.device.u16[offset >> 1];
  }

  readConfig32(offset) {
    return this.device.u32[offset >> 2];
  }

  queueSize(index) {
    this.common.u16[C.COMMON_QUEUE_SELECT >> 1] = index;
    return this.common.u16[C.COMMON_QUEUE_SIZE >> 1];
  }

  // 4.1.5.1.3 Virtqueue Configuration: size, the three ring addresses, the MSI-X vector,
  // then enable. `vector`: MSI-X vector 0 for the receive queues, which interrupt when MSI-X
  // is on (VFIO) and their driver has cleared AVAIL_F_NO_INTERRUPT (idle 'interrupt');
  // C.NO_VECTOR for the others.
  activateQueue(index, ring, vector) {
    const c = this.common;
    c.u16[C.COMMON_QUEUE_SELECT >> 1] = index;
    c.u16[C.COMMON_QUEUE_SIZE >> 1] = ring.size;
    c.u16[C.COMMON_QUEUE_MSIX_VECTOR >> 1] = vector;
    write64(c.u32, C.COMMON_QUEUE_DESC, ring.descPhys);
    write64(c.u32, C.COMMON_QUEUE_DRIVER, ring.availPhys);
    write64(c.u32, C.COMMON_QUEUE_DEVICE, ring.usedPhys);
    c.u16[C.COMMON_QUEUE_ENABLE >> 1] = 1;
  }

  // 4.1.4.4: queue `index` is notified by a 16-bit write of its index at
  // cap.offset + queue_notify_off * notify_off_multiplier in the notification BAR.
  notifier(index) {
    this.common.u16[C.COMMON_QUEUE_SELECT >> 1] = index;
    const off = this.common.u16[C.COMMON_QUEUE_NOTIFY_OFF >> 1];
    const at = this.notifyCap.offset + off * this.notifyCap.extra;
    const cell = new Uint16Array(this.notifyBuffer, at, 1);
    return () => Atomics.store(cell, 0, index);
  }

  close() {
    for (const buffer of this.bars.values()) native().free(buffer);
    this.bars.clear();
  }
}

function write64(u32, offset, value) {
  u32[offset >> 2] = value % TWO_32;
  u32[(offset >> 2) + 1] = Math.floor(value / TWO_32);
}

module.exports = { ModernTransport };
