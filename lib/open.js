'use strict';

// ixy.open(): from a device's name to a running Device. A PCI address becomes a device
// handle (lib/host/device-handle.js: its directory, identity and backend, resolved once)
// and the driver its IDs call for takes that handle.
const { resolveDevice } = require('./host/device-handle');
const { driverFor, describeId } = require('./driver-table');
const { IxyError, shown } = require('./host/errors');
const { envDebug } = require('./memory/ownership-checks');
const { checkDevice } = require('./device/checked-queues');
const { idleMode, needsVfio, noInterrupts, namedRate } = require('./device/idle');
const { checkOptionsObject } = require('./host/option-names');
const { openXdp, OWN_OPTIONS } = require('./xdp/device');
const { PREFIX } = require('./xdp/iface');

// Devices that are no PCI device of ours, by the prefix of their name: [prefix, open(name,
// options) resolving to a Device]. A backend that does without a PCI driver (AF_XDP's
// 'xdp:<ifname>', lib/xdp/) plugs in here, and only here.
const OTHER_DEVICES = [[PREFIX, openXdp]];

// Resolves once the device is initialised and its link is up. Options go to the driver
// (queues, ring sizes, ...; each driver checks their names); `force: true` lets it take a
// NIC whose kernel interface is in use (lib/host/iface.js).
async function open(name, options = {}) {
  const other = typeof name === 'string' && OTHER_DEVICES.find(([prefix]) => name.startsWith(prefix));
  if (other) return other[1](name, options);
  checkOptions(options);
  const handle = resolveDevice(name); // EBADADDR before any path is built from the name
  refuseXdpOptions(handle.address, options);
  if (options.idle === 'interrupt' && !handle.canInterrupt()) throw needsVfio(name);
  requireRoot(handle);
  const driver = driverFor(handle.id);
  if (driver === null) {
    throw new IxyError('EUNSUPPORTED', `${name} is ${describeId(handle.id)}, which ixy does not support ('ixy list' shows what it does)`);
  }
  // Buffer ownership checks (lib/memory/ownership-checks.js): off unless asked for, free
  // when off. The driver makes its pools checked; checkDevice() wraps its queues
  // (lib/device/checked-queues.js).
  const debug = options.debug === undefined ? envDebug() : Boolean(options.debug);
  // The driver takes the device (handle.take(): one owner) before it writes to it.
  const dev = await driver.load().open(handle, { ...options, debug });
  if (options.idle === 'interrupt' && !dev.hasInterrupts()) {
    dev.close();
    throw noInterrupts(dev);
  }
  if (debug) checkDevice(dev);
  return dev;
}

// What open() checks of its options before it touches the device.
function checkOptions(options) {
  checkOptionsObject('open()', options);
  if (options.idle !== undefined) idleMode(options.idle); // receive()'s default (lib/device/idle.js)
  namedRate([{ options }]); // EINVAL for a bad idleRate
  if (options.force !== undefined && typeof options.force !== 'boolean') throw new IxyError('EINVAL', `force must be true or false, got ${shown(options.force)}`);
  if (options.debug !== undefined && typeof options.debug !== 'boolean') throw new IxyError('EINVAL', `debug must be true or false, got ${shown(options.debug)}`);
}

// AF_XDP's own options (mode, xdpMode) name no mistake, only the wrong device: EUNSUPPORTED
// rather than the EINVAL of an unknown option.
function refuseXdpOptions(address, options) {
  for (const [key, flag] of Object.entries(OWN_OPTIONS)) {
    if (options[key] === undefined) continue;
    throw new IxyError('EUNSUPPORTED', `${key} (${flag}) is an option of AF_XDP devices (xdp:<interface>), not of ${address}, which ixy drives itself`);
  }
}

// Unbinding drivers, writing config space and reading physical addresses all need root:
// say so once, up front, instead of failing half-way through initialisation. A device bound
// to vfio-pci needs none of them (lib/host/vfio.js): only access to its /dev/vfio/N.
function requireRoot(handle) {
  if (process.geteuid && process.geteuid() !== 0 && handle.backend.needsRoot) {
    throw new IxyError('ENOTROOT', `ixy needs root to drive ${handle.address} through sysfs (config space, physical addresses): run it with sudo, or bind it to vfio-pci ('sudo ixy bind ${handle.address}') and grant this user its /dev/vfio/N`);
  }
}

module.exports = { open };
