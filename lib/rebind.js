'use strict';

// `ixy bind` and `ixy unbind`: give a NIC to vfio-pci (or another driver) and hand it back to
// its kernel driver, as dpdk-devbind does. Both go through the device's driver_override,
// which makes the bus match the device with that one driver (empty: the usual matching by
// ID), and the bus's drivers_probe, which runs the matching at once (Linux
// Documentation/ABI/testing/sysfs-bus-pci). Both claim the device first (EBUSY while an ixy
// process holds it) and take a driver away only through the unbind guard (EACTIVE while the
// kernel's interface is in use, unless forced). In a fake tree (IXY_PCI_ROOT) the bus
// directory is the root's parent.
const fs = require('fs');
const path = require('path');
const pci = require('./host/pci');
const { driverDir, openPlain } = require('./host/sysfs-safety');
const { driverFor } = require('./driver-table');
const { checkInactive } = require('./host/iface');
const { IxyError, fromNative } = require('./host/errors');
const { checkOptionNames } = require('./host/option-names');
const claim = require('./host/claim');

const DRIVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

// The kernel module of each ixy driver's device family, for "load it" advice.
const KERNEL_MODULES = { ixgbe: 'ixgbe', igb: 'igb', virtio: 'virtio_pci' };

// Binds the device to `driver` (default vfio-pci). Returns { address, from, to, iommuGroup,
// groupPeers } (from: the driver it had, or null; iommuGroup: its group number, or null;
// groupPeers: the other devices of its group that keep VFIO from opening it).
function bind(address, options = {}) {
  const { driver = 'vfio-pci', force = false } = checkOptionNames('bind()', options, ['driver', 'force']);
  if (typeof driver !== 'string' || !DRIVER_NAME.test(driver)) {
    throw new IxyError('EINVAL', `${JSON.stringify(String(driver))} is not a kernel driver name`);
  }
  pci.readIdentity(address);
  const drivers = path.join(pci.busDir(), 'drivers');
  if (!fs.existsSync(path.join(drivers, driver))) {
    throw new IxyError('ENODRIVER', `the kernel has no driver ${driver} (nothing in ${drivers}): load it first ('modprobe ${driver}')`);
  }
  return withClaim(address, () => {
    const from = pci.boundDriver(address);
    if (from !== driver) {
      const override = overrideFile(address);
      checkAttribute(override, `cannot set the driver_override of ${address}`);
      checkProbe(address);
      const before = readOverride(address);
      detach(address, force);
      try {
        writeAttribute(override, `${driver}\n`, `cannot set the driver_override of ${address}`);
        probe(address);
        const now = pci.boundDriver(address);
        if (now !== driver) {
          throw new IxyError('EBIND', `${driver} did not take ${address} (it is ${now === null ? 'bound to no driver' : `bound to ${now}`}): the kernel log says why ('dmesg | tail')${driver === 'vfio-pci' ? '; vfio-pci needs an IOMMU (intel_iommu=on or amd_iommu=on at boot)' : ''}`);
        }
      } catch (err) {
        const e = fromNative(err, `cannot bind ${address} to ${driver}`);
        throw new IxyError(e.code, `${e.message}; ${restore(address, from, before)}`);
      }
    }
    return { address, from, to: driver, iommuGroup: iommuGroup(address), groupPeers: groupPeers(address) };
  });
}

// Hands the device back to the kernel driver that matches its IDs: clears driver_override
// and probes. Returns { address, from, to } (to: the driver now bound, or null).
function unbind(address, options = {}) {
  const { force = false } = checkOptionNames('unbind()', options, ['force']);
  const id = pci.readIdentity(address);
  return withClaim(address, () => {
    const from = pci.boundDriver(address);
    const override = readOverride(address);
    if (from !== null && override === '') return { address, from, to: from };
    if (override !== '') checkAttribute(overrideFile(address), `cannot clear the driver_override of ${address}`);
    checkProbe(address);
    detach(address, force);
    if (override !== '') writeAttribute(overrideFile(address), '\n', `cannot clear the driver_override of ${address}`);
    probe(address);
    const to = pci.boundDriver(address);
    if (to === null) {
      const ours = driverFor(id);
      const module = ours ? KERNEL_MODULES[ours.name] : null;
      throw new IxyError('EBIND', `no kernel driver took ${address}: is its module loaded?${module ? ` ('modprobe ${module}')` : ''} The kernel log may say more ('dmesg | tail')`);
    }
    return { address, from, to };
  });
}

// After a bind that failed once the device had left its driver: puts driver_override back
// as it was (`before`, '' for none) and gives the device back to `from` (its bind file; the
// bus's matching, drivers_probe, where it has none). Returns what the message says: that
// all is as it was, or the commands that undo what is left.
function restore(address, from, before) {
  const override = pci.deviceFile(address, 'driver_override');
  const bus = pci.busDir();
  try {
    writeAttribute(override, `${before}\n`, `cannot put back the driver_override of ${address}`);
    if (from !== null && pci.boundDriver(address) === null) {
      const bindFile = path.join(bus, 'drivers', from, 'bind');
      try {
        writeAttribute(bindFile, address, `cannot give ${address} back to ${from}`);
      } catch {
        probe(address);
      }
    }
  } catch {
    // said below: the state is checked, not the writes
  }
  const now = pci.boundDriver(address);
  if (now === from && readOverride(address) === before) {
    return from === null ? 'driver_override is as it was' : `gave it back to ${from}, driver_override as it was`;
  }
  const steps = [`echo '${before}' > ${override}`];
  if (from !== null) steps.push(`echo ${address} > ${path.join(bus, 'drivers', from, 'bind')}`);
  return `could not put it back as it was (it is ${now === null ? 'bound to no driver' : `bound to ${now}`}); to undo: ${steps.join('; ')}`;
}

// Runs fn() while this process owns the device (lib/host/claim.js), and lets go after.
function withClaim(address, fn) {
  const fd = claim.claimDevice(address);
  try {
    return fn();
  } finally {
    claim.releaseClaim(fd);
  }
}

// Takes the device from the driver it has, if any, behind the unbind guard.
function detach(address, force) {
  const dir = pci.deviceDir(address);
  const driver = driverDir(dir);
  if (driver === null) return;
  checkInactive(address, dir, force);
  writeAttribute(path.join(driver, 'unbind'), address, `cannot unbind the kernel driver of ${address}`);
}

// The bus's drivers_probe, checked before the first write of a bind or unbind.
function checkProbe(address) {
  const file = path.join(pci.busDir(), 'drivers_probe');
  if (!fs.existsSync(file)) {
    throw new IxyError('ENODRIVER', `no ${file}: ${pci.pciRoot()} is not a PCI bus's devices directory`);
  }
  checkAttribute(file, `cannot probe drivers for ${address}`);
}

function probe(address) {
  writeAttribute(path.join(pci.busDir(), 'drivers_probe'), address, `cannot probe drivers for ${address}`);
}

// Writes `text` to the sysfs attribute `file` (driver_override, drivers_probe, an unbind
// file), refusing links and files of the wrong kind as openPlain (lib/host/sysfs-safety.js) does. O_TRUNC changes
// nothing in sysfs and keeps a fake tree's file holding only the last write.
function writeAttribute(file, text, what) {
  let fd;
  try {
    fd = openPlain(file, fs.constants.O_WRONLY | fs.constants.O_TRUNC);
    fs.writeSync(fd, text);
  } catch (err) {
    throw fromNative(err, what);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

// Throws what writeAttribute(file) would for a link or a file of the wrong kind, writing
// nothing: for checking every file of a multi-step change before its first step.
function checkAttribute(file, what) {
  try {
    fs.closeSync(openPlain(file, fs.constants.O_WRONLY));
  } catch (err) {
    throw fromNative(err, what);
  }
}

function overrideFile(address) {
  const file = pci.deviceFile(address, 'driver_override');
  if (!fs.existsSync(file)) {
    throw new IxyError('EUNSUPPORTED', `${address} has no driver_override (${file}): binding needs Linux 3.16 or later`);
  }
  return file;
}

// driver_override as the kernel shows it ("(null)" when unset), '' for none.
function readOverride(address) {
  let text;
  try {
    text = fs.readFileSync(overrideFile(address), 'latin1').trim();
  } catch (err) {
    if (err instanceof IxyError) return '';
    throw err;
  }
  return text === '(null)' ? '' : text;
}

// The device's IOMMU group number (its `iommu_group` link), or null.
function iommuGroup(address) {
  try {
    return path.basename(fs.readlinkSync(pci.deviceFile(address, 'iommu_group')));
  } catch {
    return null;
  }
}

// VFIO opens a device only when every device of its IOMMU group is bound to vfio-pci, to
// pci-stub or to no driver (a bridge's pcieport aside): the other members that are not, as
// [{ address, driver }], for the user to bind too.
const VIABLE_DRIVERS = new Set(['vfio-pci', 'pci-stub', 'pcieport']);

function groupPeers(address) {
  const devices = path.join(pci.deviceDir(address), 'iommu_group', 'devices');
  let names;
  try {
    names = fs.readdirSync(devices);
  } catch {
    return [];
  }
  return names.filter((name) => name !== address).sort().map((name) => {
    let driver = null;
    try {
      driver = path.basename(fs.readlinkSync(path.join(devices, name, 'driver')));
    } catch {
      // no driver bound
    }
    return { address: name, driver };
  }).filter((peer) => peer.driver !== null && !VIABLE_DRIVERS.has(peer.driver));
}

module.exports = { bind, unbind };
