'use strict';

// The PCI layer, shared by every driver: find a device in sysfs, read its identity and
// config space, take it away from the kernel driver, let it do DMA, and map its BARs.
// Plain sysfs file I/O, except that a device bound to vfio-pci is reached through
// lib/host/vfio.js (config space, BARs) and mapping a sysfs BAR needs the addon.
const fs = require('fs');
const path = require('path');
const iface = require('./iface');
const { IxyError, fromNative, shown, quoted } = require('./errors');
const { native } = require('./native');
const vfio = require('./vfio');
const modelIrq = require('./model-irq');

const ADDRESS_FORMAT = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

// PCI config space offsets (PCI Local Bus Specification 3.0, section 6.2).
const PCI_COMMAND = 0x04;
const PCI_COMMAND_BUS_MASTER = 1 << 2;

// The sysfs root. IXY_PCI_ROOT points the driver at another directory of the same shape,
// for example the one the device model creates; nothing else in the driver knows of it.
function pciRoot() {
  return process.env.IXY_PCI_ROOT || '/sys/bus/pci/devices';
}

// The bus directory above it (/sys/bus/pci: drivers/, drivers_probe).
function busDir() {
  return path.dirname(pciRoot());
}

// With IXY_PCI_ROOT set, the fake tree is all the driver may reach through it: every link
// resolved there (the device directory, its driver, its IOMMU group) must lead inside the
// root's parent (the fake /sys/bus/pci) and never into the real /sys or /proc, or a fake
// device could make the driver unbind or drive a real one. Returns `real` or throws.
const inside = (p, dir) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}${path.sep}`);

function confine(real, link) {
  if (!process.env.IXY_PCI_ROOT) return real;
  const bus = fs.realpathSync(busDir());
  const area = inside(bus, '/sys') ? '/sys' : bus;
  if (inside(real, area) && (area === '/sys' || (!inside(real, '/sys') && !inside(real, '/proc')))) return real;
  throw new IxyError('EDEVFILE', `${link} leads to ${real}, outside ${area} where IXY_PCI_ROOT points: refusing to reach through a fake tree to what it does not hold; check what created ${link}`);
}

// Checked before any path is built from the address, so that "../x" never reaches fs.
function validateAddress(address) {
  if (typeof address !== 'string' || !ADDRESS_FORMAT.test(address)) {
    throw new IxyError('EBADADDR', `${typeof address === 'string' ? quoted(address) : shown(address)} is not a PCI address: expected the form 0000:03:00.0 (domain:bus:device.function, lower-case hex)`);
  }
  return address;
}

// A device as this process names it in maps: its address under the current root, since
// tests point IXY_PCI_ROOT at several models in one process.
function deviceKey(address) {
  return `${pciRoot()}\0${validateAddress(address)}`;
}

// Device directories, resolved once. In sysfs /sys/bus/pci/devices/X is itself a link into
// /sys/devices/...; resolving it once and opening every file inside the result without
// following a link in the last component means that a link planted in the directory
// (config -> /etc/shadow, resource0 -> some file) is refused instead of written to as root.
const resolvedDirs = new Map(); // deviceKey -> the resolved directory
const { O_RDONLY, O_RDWR, O_WRONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

function deviceDir(address) {
  const key = deviceKey(address);
  let dir = resolvedDirs.get(key);
  if (dir === undefined) {
    try {
      dir = fs.realpathSync(path.join(pciRoot(), address));
      confine(dir, path.join(pciRoot(), address));
    } catch (err) {
      if (err instanceof IxyError) throw err;
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') {
        throw new IxyError('ENODEV', `no PCI device ${address} (looked in ${pciRoot()}); 'ixy list' shows the devices there are`);
      }
      throw fromNative(err, `cannot resolve the device directory of ${address}`);
    }
    if (!fs.statSync(dir).isDirectory()) {
      throw new IxyError('ENODEV', `${path.join(pciRoot(), address)} is not a directory: not a PCI device`);
    }
    resolvedDirs.set(key, dir);
  }
  return dir;
}

// The device's interrupt line (lib/host/interrupts.js): through VFIO when the device was
// opened through it, else from the device model (lib/host/model-irq.js); null where
// neither gives one (sysfs gives user space no interrupts). setup() programs the device's
// vectors once the line exists.
function interruptLine(address, setup) {
  return vfio.interruptLine(address, setup) || modelIrq.interruptLine(address, deviceDir(address), setup);
}

// Whether interruptLine() gives a line for the device.
function hasInterruptLine(address) {
  return vfio.deviceOf(address) !== undefined || modelIrq.available(address, deviceDir(address));
}

// Lets go of the device's files (claim.releaseDevice calls this): its VFIO group, if any,
// and its resolved directory, which the next open resolves again.
function forgetDevice(address) {
  vfio.close(address);
  modelIrq.close(address);
  resolvedDirs.delete(deviceKey(address));
}

// The path of file `name` in the device's resolved directory.
function deviceFile(address, name) {
  return path.join(deviceDir(address), name);
}

// Opens `file` without following a link in its last component (O_NOFOLLOW: open fails with
// ELOOP) and checks that it is a regular file, as every sysfs attribute is, of at least
// minBytes. O_NONBLOCK keeps a planted FIFO from hanging the open; it changes nothing for
// regular files.
function openPlain(file, flags, minBytes = 0) {
  let fd;
  try {
    fd = fs.openSync(file, flags | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if (err.code === 'ELOOP') {
      throw new IxyError('EDEVFILE', `${file} is a symbolic link; sysfs makes none there: refusing to follow it (check what created ${path.dirname(file)})`);
    }
    throw err;
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile() || st.size < minBytes) {
    fs.closeSync(fd);
    const what = st.isFile() ? `has ${st.size} bytes, fewer than ${minBytes}` : 'is not a regular file';
    throw new IxyError('EDEVFILE', `${file} ${what}, unlike the sysfs file it stands for: refusing to use it`);
  }
  return fd;
}

function readSmallFile(fd) {
  const buf = Buffer.alloc(64);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  return buf.toString('latin1', 0, n);
}

// sysfs writes vendor and device as 0x and 4 lower-case hex digits, class with 6, and a
// newline. Anything else is not a PCI device directory: parseInt would read "0x8086junk"
// as 0x8086 and drive whatever is there.
const ID_FORMATS = { vendor: /^0x[0-9a-f]{4}\n?$/, device: /^0x[0-9a-f]{4}\n?$/, class: /^0x[0-9a-f]{6}\n?$/ };

function readIdFile(address, name) {
  const file = deviceFile(address, name);
  let text;
  try {
    const fd = openPlain(file, O_RDONLY);
    try {
      text = readSmallFile(fd);
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
function readIdentity(address) {
  deviceDir(address);
  return {
    address,
    vendor: readIdFile(address, 'vendor'),
    device: readIdFile(address, 'device'),
    class: readIdFile(address, 'class'),
  };
}

// The kernel driver bound to the device, or null. In sysfs `driver` is a link to it.
function boundDriver(address) {
  try {
    return path.basename(fs.readlinkSync(deviceFile(address, 'driver')));
  } catch {
    return null;
  }
}

// Where the device's `driver` entry leads, or null when no driver is bound. In sysfs it is
// a link to /sys/bus/pci/drivers/NAME (in a fake tree, the drivers/ beside IXY_PCI_ROOT);
// the device model makes it a plain directory inside the device directory. Anything else (a
// link to /tmp, to /etc, ...) is refused: the unbind file inside it is written as root.
function driverDir(address) {
  const dir = deviceDir(address);
  const link = path.join(dir, 'driver');
  try {
    fs.lstatSync(link);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw fromNative(err, `cannot look at ${link}`);
  }
  let target;
  try {
    target = fs.realpathSync(link);
  } catch (err) {
    throw new IxyError('EDEVFILE', `${link} leads nowhere (${err.code}): refusing to unbind through it; check what created ${dir}`);
  }
  confine(target, link);
  const drivers = path.join(fs.realpathSync(busDir()), 'drivers');
  const inBus = path.dirname(target) === drivers;
  const inDevice = target.startsWith(`${dir}${path.sep}`) && fs.statSync(target).isDirectory();
  if (!inBus && !inDevice) {
    throw new IxyError('EDEVFILE', `${link} leads to ${target}, not to a driver in ${drivers}: refusing to write its unbind file; check what created ${dir}`);
  }
  return target;
}

// Takes the device from the kernel. Bound to vfio-pci: open it through VFIO (lib/host/vfio.js),
// and from then on its registers, config space and DMA go through there. Any other driver:
// writing our address to driver/unbind detaches it, as it would otherwise fight us for the
// device, unless one of its interfaces is in use and `force` is not given (lib/host/iface.js).
// No driver bound: nothing to do.
function unbindDriver(address, force = false) {
  const driver = driverDir(address);
  if (driver === null) return;
  if (vfio.isVfioBound(path.basename(driver))) {
    confineGroup(address);
    vfio.open(address, deviceDir(address));
    return;
  }
  iface.checkInactive(address, deviceDir(address), force);
  const unbind = path.join(driver, 'unbind');
  let fd;
  try {
    fd = openPlain(unbind, O_WRONLY);
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw fromNative(err, `cannot unbind the kernel driver of ${address}`);
  }
  try {
    fs.writeSync(fd, address);
  } catch (err) {
    throw fromNative(err, `cannot unbind the kernel driver of ${address}`);
  } finally {
    fs.closeSync(fd);
  }
}

// Physical addresses from /proc/self/pagemap are what the CPU sees. Behind an IOMMU that
// translates (Linux group types DMA and DMA-FQ, Documentation/ABI/testing/
// sysfs-kernel-iommu_groups) the device's addresses are I/O virtual addresses: its DMA to
// physical addresses faults or lands in the wrong place. Only no IOMMU, or a group in
// identity (passthrough) mode, work. Checked before the device is touched. A device bound
// to vfio-pci uses the IOMMU instead (lib/host/vfio.js).
function checkIommu(address) {
  if (vfio.isVfioBound(boundDriver(address))) return;
  const file = path.join(deviceDir(address), 'iommu_group', 'type');
  let type;
  try {
    confineGroup(address);
    type = fs.readFileSync(file, 'latin1').trim();
  } catch (err) {
    if (err instanceof IxyError) throw err;
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return; // no IOMMU group: no IOMMU
    throw fromNative(err, `cannot read ${file}`);
  }
  if (type !== 'identity') {
    throw new IxyError('EIOMMU', `${address} is behind an IOMMU in ${JSON.stringify(type.slice(0, 32))} mode (${file}), where physical addresses do not work for DMA: bind it to vfio-pci ('ixy bind ${address}'), or boot with iommu=pt`);
  }
}

// The device's iommu_group, where it has one, must lead inside the fake tree too (confine).
function confineGroup(address) {
  const group = path.join(deviceDir(address), 'iommu_group');
  let real;
  try {
    real = fs.realpathSync(group);
  } catch {
    return; // none, or leading nowhere: the readers below say so
  }
  confine(real, group);
}

function readConfig16(address, offset) {
  const viaVfio = vfio.deviceOf(address);
  if (viaVfio) return viaVfio.readConfig(offset, 2).readUInt16LE(0);
  const buf = Buffer.alloc(2);
  const fd = openConfig(address, O_RDONLY);
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
  const viaVfio = vfio.deviceOf(address);
  if (viaVfio) return viaVfio.writeConfig(offset, buf);
  const fd = openConfig(address, O_RDWR);
  try {
    fs.writeSync(fd, buf, 0, 2, offset);
  } finally {
    fs.closeSync(fd);
  }
}

// Config space: 64 bytes at least (the type-0 header, PCI 3.0, 6.1).
function openConfig(address, flags) {
  const file = deviceFile(address, 'config');
  try {
    return openPlain(file, flags, 64);
  } catch (err) {
    throw fromNative(err, `cannot open the config space of ${address}`);
  }
}

// A device may only read and write host memory (DMA) when its Bus Master bit is set
// (PCI 3.0, 6.2.2). An unbound device usually has it off.
function enableBusMastering(address) {
  const command = readConfig16(address, PCI_COMMAND);
  writeConfig16(address, PCI_COMMAND, command | PCI_COMMAND_BUS_MASTER);
}

// The opposite, for every way a driver lets go of a device: with the bit clear the device
// issues no memory requests at all (PCI 3.0, 6.2.2), whatever its queues still hold, so
// memory given back to the system stays untouched.
function disableBusMastering(address) {
  const command = readConfig16(address, PCI_COMMAND);
  if (command & PCI_COMMAND_BUS_MASTER) writeConfig16(address, PCI_COMMAND, command & ~PCI_COMMAND_BUS_MASTER);
}

// The whole config space as sysfs gives it (256 bytes, or 4 KiB for PCIe as root): for
// walking capability lists (virtio finds its register blocks that way).
function readConfigSpace(address) {
  const viaVfio = vfio.deviceOf(address);
  if (viaVfio) return viaVfio.readConfig(0, Math.min(4096, viaVfio.configSize));
  const fd = openConfig(address, O_RDONLY);
  try {
    const buf = Buffer.alloc(4096);
    let n = 0;
    for (let got; n < buf.length && (got = fs.readSync(fd, buf, n, buf.length - n, n)) > 0;) n += got;
    return buf.subarray(0, n);
  } catch (err) {
    throw fromNative(err, `cannot read the config space of ${address}`);
  } finally {
    fs.closeSync(fd);
  }
}

// Opens the sysfs file of BAR `index` for pread/pwrite: an I/O-port BAR cannot be mapped,
// but its file can be read and written (legacy virtio's registers live there).
function openResource(address, index) {
  const file = deviceFile(address, `resource${index}`);
  try {
    return openPlain(file, O_RDWR);
  } catch (err) {
    throw fromNative(err, `cannot open ${file}`);
  }
}

// Maps BAR `index` (memory BARs only) and returns an ArrayBuffer over the registers. The
// file must hold at least minBytes (the highest register the driver touches, rounded up):
// anything smaller is not the device the driver thinks it is.
function mapBar(address, index = 0, minBytes = 1) {
  const viaVfio = vfio.deviceOf(address);
  if (viaVfio) return viaVfio.mapBar(index, minBytes);
  const file = deviceFile(address, `resource${index}`);
  try {
    return native().mapResource(file, minBytes);
  } catch (err) {
    throw fromNative(err, `cannot map ${file}`);
  }
}

module.exports = {
  pciRoot,
  busDir,
  validateAddress,
  deviceKey,
  deviceDir,
  deviceFile,
  forgetDevice,
  interruptLine,
  hasInterruptLine,
  openPlain,
  openConfig,
  readIdentity,
  boundDriver,
  driverDir,
  unbindDriver,
  checkIommu,
  enableBusMastering,
  disableBusMastering,
  readConfig16,
  readConfigSpace,
  openResource,
  mapBar,
  ADDRESS_FORMAT,
};
