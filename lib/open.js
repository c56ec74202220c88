'use strict';

// ixy.open(): from a PCI address to a running Device of the driver its IDs call for.
const pci = require('./host/pci');
const vfio = require('./host/vfio');
const { driverFor, describeId } = require('./driver-table');
const { IxyError, shown } = require('./host/errors');
const { envDebug } = require('./memory/ownership-checks');
const { checkDevice } = require('./device/checked-queues');
const modelIrq = require('./host/model-irq');
const { idleMode, needsVfio, noInterrupts, namedRate } = require('./device/idle');
const { checkOptionsObject } = require('./host/option-names');
const { isXdpName } = require('./xdp/iface');
const { openXdp } = require('./xdp/device');

// Picks the driver from the device's vendor and device IDs, initialises the device and
// resolves once its link is up. Options go to the driver (queues, ring sizes, ...);
// `force: true` lets it take a NIC whose kernel interface is in use (lib/host/iface.js).
// The driver checks the option names (each has its own).
async function open(address, options = {}) {
  if (isXdpName(address)) return openXdp(address, options); // any Linux NIC through AF_XDP (lib/xdp/)
  pci.validateAddress(address);
  checkOptionsObject('open()', options);
  if (options.idle !== undefined) idleMode(options.idle); // receive()'s default (lib/device/idle.js)
  namedRate([{ options }]); // EINVAL for a bad idleRate
  const viaVfio = vfio.isVfioBound(pci.boundDriver(address));
  if (options.idle === 'interrupt' && !viaVfio && !modelIrq.available(address, pci.deviceDir(address))) {
    throw needsVfio(address);
  }
  requireRoot(address, viaVfio);
  const id = pci.readIdentity(address);
  const driver = driverFor(id);
  if (driver === null) {
    throw new IxyError('EUNSUPPORTED', `${address} is ${describeId(id)}, which ixy does not support ('ixy list' shows what it does)`);
  }
  if (options.force !== undefined && typeof options.force !== 'boolean') throw new IxyError('EINVAL', `force must be true or false, got ${shown(options.force)}`);
  // Buffer ownership checks (lib/memory/ownership-checks.js): off unless asked for, free
  // when off. The driver makes its pools checked; checkDevice() wraps its queues
  // (lib/device/checked-queues.js).
  const debug = options.debug === undefined ? envDebug() : Boolean(options.debug);
  // The driver claims the device (one owner, lib/host/claim.js) before it writes to it.
  const dev = await driver.load().open(address, { ...options, debug });
  if (options.idle === 'interrupt' && !dev.hasInterrupts()) {
    dev.close();
    throw noInterrupts(dev);
  }
  if (debug) checkDevice(dev);
  return dev;
}

// Unbinding drivers, writing config space and reading physical addresses all need root:
// say so once, up front, instead of failing half-way through initialisation. A device bound
// to vfio-pci needs none of them (lib/host/vfio.js): only access to its /dev/vfio/N.
function requireRoot(address, viaVfio) {
  if (process.geteuid && process.geteuid() !== 0 && !viaVfio) {
    throw new IxyError('ENOTROOT', `ixy needs root to drive ${address} through sysfs (config space, physical addresses): run it with sudo, or bind it to vfio-pci ('sudo ixy bind ${address}') and grant this user its /dev/vfio/N`);
  }
}

module.exports = { open };
