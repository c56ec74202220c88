'use strict';

// The PCI layer, shared by every driver: find a device in sysfs, read its identity and
// config space, take it away from the kernel driver, let it do DMA, and map its BARs.
// Everything here is plain file I/O except mapping, which needs the addon.
const fs = require('fs');
const path = require('path');
const { IxyError, fromNative } = require('./errors');
const { native } = require('./native');

const ADDRESS_FORMAT = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

// PCI config space offsets (PCI Local Bus Specification 3.0, section 6.2).
const PCI_COMMAND = 0x04;
const PCI_COMMAND_BUS_MASTER = 1 << 2;

// The sysfs root. IXY_PCI_ROOT points the driver at another directory of the same shape,
// for example the one the device model creates; nothing else in the driver knows of it.
function pciRoot() {
  return process.env.IXY_PCI_ROOT || '/sys/bus/pci/devices';
}

// Checked before any path is built from the address, so that "../x" never reaches fs.
function validateAddress(address) {
  if (typeof address !== 'string' || !ADDRESS_FORMAT.test(address)) {
    throw new IxyError('EBADADDR', `'${address}' is not a PCI address: expected the form 0000:03:00.0 (domain:bus:device.function, lower-case hex)`);
  }
  return address;
}

function devicePath(address, ...rest) {
  return path.join(pciRoot(), validateAddress(address), ...rest);
}

function readHexFile(address, name) {
  return parseInt(fs.readFileSync(devicePath(address, name), 'utf8').trim(), 16);
}

// Vendor, device and class from sysfs. A missing directory is the user's mistake.
function readIdentity(address) {
  const dir = devicePath(address);
  if (!fs.existsSync(dir)) {
    throw new IxyError('ENODEV', `no PCI device ${address} (looked in ${pciRoot()}); 'ixy list' shows the devices there are`);
  }
  try {
    return {
      address,
      vendor: readHexFile(address, 'vendor'),
      device: readHexFile(address, 'device'),
      class: readHexFile(address, 'class'),
    };
  } catch (err) {
    throw new IxyError('ENODEV', `cannot read the identity of ${address}: ${err.message}`);
  }
}

// The kernel driver bound to the device, or null. In sysfs `driver` is a link to it.
function boundDriver(address) {
  try {
    return path.basename(fs.readlinkSync(devicePath(address, 'driver')));
  } catch {
    return null;
  }
}

// Writing our address to driver/unbind detaches the kernel driver, which would otherwise
// fight us for the device. No driver bound: nothing to do.
function unbindDriver(address) {
  const unbind = devicePath(address, 'driver', 'unbind');
  if (!fs.existsSync(unbind)) return;
  try {
    fs.writeFileSync(unbind, address);
  } catch (err) {
    throw permissionOr(err, `cannot unbind the kernel driver of ${address}`);
  }
}

function readConfig16(address, offset) {
  const buf = Buffer.alloc(2);
  const fd = openConfig(address, 'r');
  try {
    fs.readSync(fd, buf, 0, 2, offset);
  } finally {
    fs.closeSync(fd);
  }
  return buf.readUInt16LE(0);
}

function writeConfig16(address, offset, value) {
  const buf = Buffer.alloc(2);
  buf.writeUInt16LE(value, 0);
  const fd = openConfig(address, 'r+');
  try {
    fs.writeSync(fd, buf, 0, 2, offset);
  } finally {
    fs.closeSync(fd);
  }
}

function openConfig(address, mode) {
  try {
    return fs.openSync(devicePath(address, 'config'), mode);
  } catch (err) {
    throw permissionOr(err, `cannot open the config space of ${address}`);
  }
}

// A device may only read and write host memory (DMA) when its Bus Master bit is set
// (PCI 3.0, 6.2.2). An unbound device usually has it off.
function enableBusMastering(address) {
  const command = readConfig16(address, PCI_COMMAND);
  writeConfig16(address, PCI_COMMAND, command | PCI_COMMAND_BUS_MASTER);
}

// The whole config space as sysfs gives it (256 bytes, or 4 KiB for PCIe as root): for
// walking capability lists (virtio finds its register blocks that way).
function readConfigSpace(address) {
  try {
    return fs.readFileSync(devicePath(address, 'config'));
  } catch (err) {
    throw permissionOr(err, `cannot read the config space of ${address}`);
  }
}

// The sysfs file of BAR `index`. An I/O-port BAR cannot be mapped, but this file can be
// read and written with pread/pwrite (legacy virtio's registers live there).
function resourcePath(address, index) {
  return devicePath(address, `resource${index}`);
}

// Maps BAR `index` (memory BARs only) and returns an ArrayBuffer over the registers.
function mapBar(address, index = 0) {
  const file = devicePath(address, `resource${index}`);
  try {
    return native().mapResource(file);
  } catch (err) {
    throw permissionOr(err, `cannot map ${file}`);
  }
}

function permissionOr(err, what) {
  if (err.code === 'EACCES' || err.code === 'EPERM') {
    return new IxyError('ENOTROOT', `${what}: permission denied: run as root`);
  }
  return fromNative(err, what);
}

// Every PCI function under the root, with what sysfs says of it.
function listDevices() {
  let names;
  try {
    names = fs.readdirSync(pciRoot());
  } catch (err) {
    throw new IxyError('ENODEV', `cannot list PCI devices in ${pciRoot()}: ${err.code}`);
  }
  return names
    .filter((name) => ADDRESS_FORMAT.test(name))
    .sort()
    .map((address) => ({ ...readIdentity(address), driver: boundDriver(address) }));
}

module.exports = {
  pciRoot,
  validateAddress,
  readIdentity,
  boundDriver,
  unbindDriver,
  enableBusMastering,
  readConfig16,
  readConfigSpace,
  resourcePath,
  mapBar,
  listDevices,
};
