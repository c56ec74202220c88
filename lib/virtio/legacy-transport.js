'use strict';

// Legacy virtio over PCI (1af4:1000, legacy or transitional): the registers are in I/O BAR
// 0 (virtio 1.1, 4.1.4.8). Linux cannot mmap an I/O BAR through sysfs, but pread/pwrite on
// `resource0` do single port accesses of 1, 2 or 4 bytes. Every access is a system call:
// fine for initialisation (the slow control path); on the data path only the queue notify
// is a register write, at most one per batch and skipped while the device says it needs
// none (USED_F_NO_NOTIFY). The buffers used for port I/O are made once.
const fs = require('fs');
const C = require('./constants');
const { fromNative } = require('../host/errors');

class LegacyTransport {
  // handle: the device's (lib/host/device-handle.js).
  constructor(handle) {
    this.kind = 'legacy';
    this.address = handle.address;
    try {
      this.fd = handle.openResource(0); // no symlink, a regular file (lib/host/pci.js)
    } catch (err) {
      throw fromNative(err, `cannot open the I/O BAR of ${this.address}`);
    }
    this.io = Buffer.alloc(4);
    this.notifyBuffers = [];
  }

  read(offset, bytes) {
    fs.readSync(this.fd, this.io, 0, bytes, offset);
    return bytes === 1 ? this.io[0] : bytes === 2 ? this.io.readUInt16LE(0) : this.io.readUInt32LE(0);
  }

  write(offset, bytes, value) {
    if (bytes === 1) this.io.writeUInt8(value, 0);
    else if (bytes === 2) this.io.writeUInt16LE(value, 0);
    else this.io.writeUInt32LE(value >>> 0, 0);
    fs.writeSync(this.fd, this.io, 0, bytes, offset);
  }

  get status() {
    return this.read(C.LEGACY_DEVICE_STATUS, 1);
  }

  set status(value) {
    this.write(C.LEGACY_DEVICE_STATUS, 1, value);
  }

  // Writing 0 resets the device (legacy has no reset handshake to wait for).
  reset() {
    this.status = 0;
  }

  // Legacy devices have 32 feature bits; VIRTIO_F_VERSION_1 and above do not exist here.
  deviceFeatures() {
    return BigInt(this.read(C.LEGACY_DEVICE_FEATURES, 4));
  }

  setDriverFeatures(features) {
    this.write(C.LEGACY_DRIVER_FEATURES, 4, Number(features & 0xffffffffn));
  }

  // Legacy has no FEATURES_OK step (3.1.2): the features written are the features.
  get needsFeaturesOk() {
    return false;
  }

  readConfig8(offset) {
    return this.read(C.LEGACY_DEVICE_CONFIG + offset, 1);
  }

  readConfig16(offset) {
    return this.read(C.LEGACY_DEVICE_CONFIG + offset, 2);
  }

  readConfig32(offset) {
    return this.read(C.LEGACY_DEVICE_CONFIG + offset, 4);
  }

  // The device fixes the queue size; 0 means the queue does not exist.
  queueSize(index) {
    this.write(C.LEGACY_QUEUE_SELECT, 2, index);
    return this.read(C.LEGACY_QUEUE_SIZE, 2);
  }

  // 4.1.4.8 / 4.1.5.1.3: the ring is one contiguous block in the legacy layout (2.6.2);
  // the device learns its page number. No MSI-X vectors here: `vector` is not used.
  activateQueue(index, ring, _vector) {
    this.write(C.LEGACY_QUEUE_SELECT, 2, index);
    this.write(C.LEGACY_QUEUE_ADDRESS, 4, ring.descPhys / C.LEGACY_QUEUE_ALIGN);
  }

  // A notifier for queue `index`: a function of no arguments that writes the register.
  notifier(index) {
    const buf = Buffer.alloc(2);
    buf.writeUInt16LE(index, 0);
    const fd = this.fd;
    return () => fs.writeSync(fd, buf, 0, 2, C.LEGACY_QUEUE_NOTIFY);
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

module.exports = { LegacyTransport };
