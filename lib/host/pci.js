'use strict';

// The PCI layer through sysfs: a device's directory, its identity, its config space, Bus
// Master, and its BARs. Plain file I/O, except that mapping a BAR needs the addon. What
// keeps this safe as root (confinement, no links, the unbind guard, the IOMMU refusal) is in
// lib/host/sysfs-safety.js; which backend reaches a device is decided once, in
// lib/host/device-handle.js.
const fs = require('fs');
const path = require('path');
const { IxyError, fromNative, shown, quoted } = require('./errors');
const { native } = require('./native');
const { pciRoot, busDir, confine, openPlain } = require('./sysfs-safety');

const ADDRESS_FORMAT = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

// PCI config space offsets (PCI Local Bus Specification 3.0, section 6.2).
const PCI_COMMAND = 0x04;
const PCI_COMMAND_BUS_MASTER = 1 << 2;

const { O_RDONLY, O_RDWR } = fs.constants;

// Checked before any path is built from the address, so that "../x" never reaches fs.
function validateAddress(address) {
  if (typeof address !== 'string' || !ADDRESS_FORMAT.test(address)) {
    throw new IxyError('EBADADDR', `${typeof address === 'string' ? quoted(address) : shown(address)} is not a PCI address: expected the form 0000:03:00.0 (domain:bus:device.function, lower-case hex)`);
  }
  return address;
}

// The device's directory, resolved. In sysfs /sys/bus/pci/devices/X is itself a link into
// /sys/devices/...; resolving it once and opening every file inside the result without
// following a link in the last component means that a link planted in the directory
// (config -> /etc/shadow, resource0 -> some file) is refused instead of written to as root.
// A device handle resolves it once and keeps it; the tools (bind, list) ask each time.
function deviceDir(address) {
  validateAddress(address);
  const link = path.join(pciRoot(), address);
  let dir;
  try {
    dir = confine(fs.realpathSync(link), link);
  } catch (err) {
    if (err instanceof IxyError) throw err;
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') {
      throw new IxyError('ENODEV', `no PCI device ${address} (looked in ${pciRoot()}); 'ixy list' shows the devices there are`);
    }
    if (err.code === 'EACCES' || err.code === 'EPERM') {
      throw new IxyError('ENOTROOT', `ixy needs root to reach ${link} (permission denied): run it with sudo`);
    }
    throw fromNative(err, `cannot resolve the device directory of ${address}`);
  }
  if (!fs.statSync(dir).isDirectory()) {
    throw new IxyError('ENODEV', `${link} is not a directory: not a PCI device`);
  }
  return dir;
}

// The path of file `name` in the device's resolved directory.
function deviceFile(address, name) {
  return path.join(deviceDir(address), name);
}

// sysfs writes vendor and device as 0x and 4 lower-case hex digits, class with 6, and a
// newline. Anything else is not a PCI device directory: parseInt would read "0x8086junk"
// as 0x8086 and drive whatever is there.
const ID_FORMATS = { vendor: /^0x[0-9a-f]{4}\n?$/, device: /^0x[0-9a-f]{4}\n?$/, class: /^0x[0-9a-f]{6}\n?$/ };

function readIdFile(address, dir, name) {
  const file = path.join(dir, name);
  let text;
  try {
    const fd = openPlain(file, O_RDONLY);
    try {
      const buf = Buffer.alloc(64);
      text = buf.toString('latin1', 0, fs.readSync(fd, buf, 0, buf.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if (err instanceof IxyError) throw err;
    throw new IxyError('ENODEV', `cannot read the identity of ${address}: ${err.message}`);
  }
  if (!ID_FORMATS[name].test(text)) {
    const digits = name === 'class' ? 6 : 4;
    throw new IxyError('ENODEV', `${file} is malformed (${JSON.stringify(text.slice(0, 16))}): sysfs writes 0x and ${digits} lower-case hex digits; is this a PCI device directory?`);
  }
  return parseInt(text.slice(2), 16);
}

// Vendor, device and class from sysfs. A missing directory is the user's mistake.
function readIdentity(address, dir = deviceDir(address)) {
  return {
    address,
    vendor: readIdFile(address, dir, 'vendor'),
    device: readIdFile(address, dir, 'device'),
    class: readIdFile(address, dir, 'class'),
  };
}

// The kernel driver bound to the device, or null. In sysfs `driver` is a link to it.
function boundDriver(address, dir = null) {
  try {
    return path.basename(fs.readlinkSync(path.join(dir || deviceDir(address), 'driver')));
  } catch {
    return null;
  }
}

// What a device handle needs to know, read once: the directory, the identity and the
// kernel driver bound to it.
function lookUp(address) {
  const dir = deviceDir(address);
  return { dir, id: readIdentity(address, dir), driver: boundDriver(address, dir) };
}

// Config space through sysfs's `config` file: 64 bytes at least (the type-0 header, PCI
// 3.0, 6.1). Reads return what there is: 256 bytes, or 4 KiB for PCIe as root.
function openConfig(dir, flags) {
  const file = path.join(dir, 'config');
  try {
    return openPlain(file, flags, 64);
  } catch (err) {
    throw fromNative(err, `cannot open ${file}`);
  }
}

function readConfigFile(dir, offset, bytes) {
  const fd = openConfig(dir, O_RDONLY);
  try {
    const buf = Buffer.alloc(bytes);
    let n = 0;
    for (let got; n < bytes && (got = fs.readSync(fd, buf, n, bytes - n, offset + n)) > 0;) n += got;
    return buf.subarray(0, n);
  } catch (err) {
    throw fromNative(err, `cannot read the config space in ${dir}`);
  } finally {
    fs.closeSync(fd);
  }
}

function writeConfigFile(dir, offset, buf) {
  const fd = openConfig(dir, O_RDWR);
  try {
    fs.writeSync(fd, buf, 0, buf.length, offset);
  } finally {
    fs.closeSync(fd);
  }
}

// A device may only read and write host memory (DMA) when its Bus Master bit is set (PCI
// 3.0, 6.2.2); an unbound device usually has it off. With the bit clear the device issues
// no memory requests at all, whatever its queues still hold, so memory given back to the
// system stays untouched. `config`: a backend's { readConfig(offset, n), writeConfig(offset, buf) }.
function setBusMaster(config, on) {
  const command = config.readConfig(PCI_COMMAND, 2).readUInt16LE(0);
  const wanted = on ? command | PCI_COMMAND_BUS_MASTER : command & ~PCI_COMMAND_BUS_MASTER;
  if (wanted === command && !on) return;
  const buf = Buffer.alloc(2);
  buf.writeUInt16LE(wanted, 0);
  config.writeConfig(PCI_COMMAND, buf);
}

// Opens the sysfs file of BAR `index` for pread/pwrite: an I/O-port BAR cannot be mapped,
// but its file can be read and written (legacy virtio's registers live there).
function openResource(dir, index) {
  const file = path.join(dir, `resource${index}`);
  try {
    return openPlain(file, O_RDWR);
  } catch (err) {
    throw fromNative(err, `cannot open ${file}`);
  }
}

// Maps BAR `index` (memory BARs only) and returns an ArrayBuffer over the registers. The
// file must hold at least minBytes (the highest register the driver touches, rounded up):
// anything smaller is not the device the driver thinks it is.
function mapResource(dir, index, minBytes) {
  const file = path.join(dir, `resource${index}`);
  try {
    return native().mapResource(file, minBytes);
  } catch (err) {
    throw fromNative(err, `cannot map ${file}`);
  }
}

module.exports = {
  ADDRESS_FORMAT,
  pciRoot,
  busDir,
  deviceDir,
  deviceFile,
  readIdentity,
  boundDriver,
  lookUp,
  readConfigFile,
  writeConfigFile,
  setBusMaster,
  openResource,
  mapResource,
};
