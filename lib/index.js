'use strict';

// require('ixy'): open a NIC by PCI address and move packets in batches.
//
//   const ixy = require('ixy');
//   const dev = await ixy.open('0000:03:00.0');
//   const batch = new ixy.PacketBatch(32);
//   const n = dev.rxBatch(0, batch);      // frames: batch.data(i), batch.lengths[i]
//   dev.txBatch(0, batch);                 // returns how many were queued
//   dev.close();
const pci = require('./pci');
const vfio = require('./vfio');
const { driverFor, describeId } = require('./drivers');
const { IxyError, shown } = require('./errors');
const {
  PacketBatch, CHECKSUM_IP_GOOD, CHECKSUM_IP_BAD, CHECKSUM_L4_GOOD, CHECKSUM_L4_BAD,
} = require('./batch');
const { Mempool } = require('./mempool');
const packet = require('./packet');
const { checkDevice, CheckedMempool, envDebug } = require('./ownership');
const { PcapWriter, CaptureClock, readPcap } = require('./pcap');
const { Device } = require('./device');
const { bind, unbind } = require('./bind');
const { listDevices } = require('./devices');
const { tuneJit } = require('./jit');
const { warmUp } = require('./warm-up');
const { idleMode, needsVfio, noInterrupts, namedRate } = require('./idle');
const modelIrq = require('./model-irq');

// Picks the driver from the device's vendor and device IDs, initialises the device and
// resolves once its link is up. Options go to the driver (queues, ring sizes, ...);
// `force: true` lets it take a NIC whose kernel interface is in use (lib/iface.js).
async function open(address, options = {}) {
  pci.validateAddress(address);
  if (options.idle !== undefined) idleMode(options.idle); // receive()'s default (lib/idle.js)
  namedRate([{ options }]); // EINVAL for a bad idleRate
  const viaVfio = vfio.isVfioBound(pci.boundDriver(address));
  if (options.idle === 'interrupt' && !viaVfio && !modelIrq.available(address)) {
    throw needsVfio(address);
  }
  requireRoot(address, viaVfio);
  const id = pci.readIdentity(address);
  const driver = driverFor(id);
  if (driver === null) {
    throw new IxyError('EUNSUPPORTED', `${address} is ${describeId(id)}, which ixy does not support ('ixy list' shows what it does)`);
  }
  if (options.force !== undefined && typeof options.force !== 'boolean') throw new IxyError('EINVAL', `force must be true or false, got ${shown(options.force)}`);
  // The driver claims the device (one owner, lib/claim.js) before it writes to it.
  const dev = await driver.load().open(address, options);
  if (options.idle === 'interrupt' && !dev.hasInterrupts()) {
    dev.close();
    throw noInterrupts(dev);
  }
  // Buffer ownership checks (lib/ownership.js): off unless asked for, free when off.
  if (options.debug || (options.debug === undefined && envDebug())) checkDevice(dev);
  return dev;
}

// Unbinding drivers, writing config space and reading physical addresses all need root:
// say so once, up front, instead of failing half-way through initialisation. A device bound
// to vfio-pci needs none of them (lib/vfio.js): only access to its /dev/vfio/N.
function requireRoot(address, viaVfio) {
  if (process.geteuid && process.geteuid() !== 0 && !viaVfio) {
    throw new IxyError('ENOTROOT', `ixy needs root to drive ${address} through sysfs (config space, physical addresses): run it with sudo, or bind it to vfio-pci ('sudo ixy bind ${address}') and grant this user its /dev/vfio/N`);
  }
}

module.exports = {
  open,
  PacketBatch,
  Mempool,
  CheckedMempool,
  IxyError,
  Device,
  packet,
  PcapWriter,
  CaptureClock,
  readPcap,
  tuneJit,
  warmUp,
  CHECKSUM_IP_GOOD,
  CHECKSUM_IP_BAD,
  CHECKSUM_L4_GOOD,
  CHECKSUM_L4_BAD,
  listDevices,
  bind,
  unbind,
  get IxgbeDevice() {
    return require('./ixgbe/device').IxgbeDevice;
  },
  get IgbDevice() {
    return require('./igb/device').IgbDevice;
  },
  get VirtioDevice() {
    return require('./virtio/device').VirtioDevice;
  },
  get Model() {
    return require('./model').Model;
  },
};
