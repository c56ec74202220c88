'use strict';

// What keeps a driver that runs as root and writes into sysfs from doing harm: the tree it
// may reach (IXY_PCI_ROOT confined to itself), files opened without following links, the
// unbind guard (never take a NIC from the kernel while its interface is in use), and the
// IOMMU refusal (physical addresses are no DMA addresses behind a translating IOMMU).
// Everything here takes the device's directory as lib/host/pci.js resolved it.
const fs = require('fs');
const path = require('path');
const iface = require('./iface');
const { IxyError, fromNative } = require('./errors');

const { O_WRONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

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

// Where the device's `driver` entry leads, or null when no driver is bound. In sysfs it is
// a link to /sys/bus/pci/drivers/NAME (in a fake tree, the drivers/ beside IXY_PCI_ROOT);
// the device model makes it a plain directory inside the device directory. Anything else (a
// link to /tmp, to /etc, ...) is refused: the unbind file inside it is written as root.
function driverDir(dir) {
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

// Takes the device (directory `dir`) from its kernel driver: writing its address to
// driver/unbind detaches the driver, which would otherwise fight us for the device, unless
// one of its interfaces is in use and `force` is not given (lib/host/iface.js). No driver
// bound: nothing to do.
function unbindDriver(address, dir, force = false) {
  const driver = driverDir(dir);
  if (driver === null) return;
  iface.checkInactive(address, dir, force);
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
// to vfio-pci uses the IOMMU instead (lib/host/vfio.js) and is not asked.
function checkIommu(address, dir) {
  const file = path.join(dir, 'iommu_group', 'type');
  let type;
  try {
    confineGroup(dir);
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
function confineGroup(dir) {
  const group = path.join(dir, 'iommu_group');
  let real;
  try {
    real = fs.realpathSync(group);
  } catch {
    return; // none, or leading nowhere: the readers say so
  }
  confine(real, group);
}

module.exports = { pciRoot, busDir, confine, openPlain, driverDir, unbindDriver, checkIommu, confineGroup };
