'use strict';

// The VFIO backend: a device bound to the kernel's vfio-pci driver is driven through
// /dev/vfio instead of sysfs and physical addresses (Linux Documentation/driver-api/vfio.rst).
//
// - Registers: the BAR is mapped through the device fd's region 0, config space is read and
//   written at region 7 of the same fd.
// - DMA: the IOMMU translates every address the device uses. Each piece of DMA memory is
//   mapped into the process's one VFIO container at an I/O virtual address (IOVA) that we
//   choose: its physical address when this process can read it (root), so that one buffer
//   works for VFIO and sysfs devices alike; otherwise addresses counted up from 4 GiB. The
//   device can reach nothing else: a wrong descriptor address is an IOMMU fault.
// - Lifetime: when the process dies the kernel closes the fds, resets the device and drops
//   the mappings, so a killed forwarder leaves no DMA running into freed memory.
// A device handle (lib/host/device-handle.js) opens a device bound to vfio-pci here, once;
// the drivers do not know which backend runs.
const fs = require('fs');
const path = require('path');
const { IxyError, fromNative } = require('./errors');
const { native } = require('./native');
const { InterruptLine } = require('./interrupts');

const VFIO_DRIVER = 'vfio-pci';
const CONFIG_REGION = 7; // VFIO_PCI_CONFIG_REGION_INDEX
const FIRST_IOVA = 2 ** 32; // clear of the low 4 GiB, where interrupt windows live
const VFIO_PCI_MSI_IRQ_INDEX = 1;
const VFIO_PCI_MSIX_IRQ_INDEX = 2;

const devices = new Set(); // every open VfioDevice: a group leaves the container with its last
const memories = new Set(); // every live DmaMemory: each is mapped while a device is open
let nextIova = FIRST_IOVA;
let containerUsed = false;

class VfioDevice {
  constructor(address, group) {
    this.address = address;
    this.group = group;
    this.fd = native().vfioOpenDevice(group, address);
    this.interrupts = null; // InterruptLine, once a loop sleeps on it
    try {
      const config = native().vfioRegionInfo(this.fd, CONFIG_REGION);
      this.configOffset = config.offset;
      this.configSize = config.size; // 256, or 4096 for PCIe; reading past it is EFAULT
    } catch (err) {
      fs.closeSync(this.fd);
      throw err;
    }
  }

  mapBar(index, minBytes) {
    return native().vfioMapRegion(this.fd, index, minBytes);
  }

  readConfig(offset, bytes) {
    const buf = Buffer.alloc(Math.min(bytes, this.configSize - offset));
    const got = fs.readSync(this.fd, buf, 0, buf.length, this.configOffset + offset);
    return buf.subarray(0, got);
  }

  writeConfig(offset, buf) {
    fs.writeSync(this.fd, buf, 0, buf.length, this.configOffset + offset);
  }

  // The interrupt line (lib/host/interrupts.js), made on first use after `setup()` (the
  // driver's register programming).
  interruptLine(setup) {
    if (!this.interrupts) {
      setup();
      this.interrupts = new InterruptLine(firstVector(this));
    }
    return this.interrupts;
  }

  // Closes the device (closing the fd hands it back to vfio-pci, which resets it), and lets
  // its IOMMU group go once no device of it is open.
  close() {
    if (!devices.delete(this)) return;
    if (this.interrupts) this.interrupts.close();
    fs.closeSync(this.fd);
    releaseGroupIfUnused(this.group);
  }
}

// The IOMMU group of the device in directory `dir` (sysfs `iommu_group` link).
function iommuGroup(address, dir) {
  let target;
  try {
    target = fs.readlinkSync(path.join(dir, 'iommu_group'));
  } catch {
    throw new IxyError('ENOIOMMU', `${address} is bound to vfio-pci but is in no IOMMU group: boot with the IOMMU on (intel_iommu=on or amd_iommu=on)`);
  }
  return Number(path.basename(target));
}

// The other devices of the group that a kernel driver other than vfio-pci holds: while one
// is, the group is not viable (the IOMMU cannot isolate the device from it).
function groupBlockers(address, dir) {
  const devicesDir = path.join(dir, 'iommu_group', 'devices');
  const blockers = [];
  for (const other of fs.readdirSync(devicesDir)) {
    if (other === address) continue;
    let driver = null;
    try {
      driver = path.basename(fs.readlinkSync(path.join(devicesDir, other, 'driver')));
    } catch {
      // no driver: harmless
    }
    if (driver !== null && driver !== VFIO_DRIVER && driver !== 'pcieport') blockers.push(`${other} (${driver})`);
  }
  return blockers;
}

// Opens `address` (bound to vfio-pci, sysfs directory `dir`) through VFIO and maps every
// live DMA memory into the container. Returns the VfioDevice.
function open(address, dir) {
  const group = iommuGroup(address, dir);
  let device;
  try {
    device = new VfioDevice(address, group);
  } catch (err) {
    releaseGroupIfUnused(group); // it may have joined the container before the failure
    if (err.code === 'EVFIOVIABLE') {
      const blockers = groupBlockers(address, dir);
      throw new IxyError('EVFIOVIABLE', `IOMMU group ${group} of ${address} is not viable: ${blockers.join(', ') || 'another device'} still bound to a kernel driver; bind ${blockers.length > 1 ? 'them' : 'it'} to vfio-pci too ('ixy bind ADDRESS')`);
    }
    throw vfioError(err, address);
  }
  devices.add(device);
  if (!containerUsed) {
    containerUsed = true;
    try {
      for (const memory of memories) mapMemory(memory);
    } catch (err) {
      device.close();
      throw err;
    }
  }
  return device;
}

function vfioError(err, address) {
  if (err.code === 'EVFIOPERM' || err.code === 'ENOVFIO' || err.code === 'ENOIOMMU' || err.code === 'EBUSY' || err.code === 'EMEMLOCK') {
    return new IxyError(err.code, `${address}: ${err.message}`);
  }
  return fromNative(err, `VFIO for ${address}`);
}

// Routes the device's first vector (MSI-X, else MSI) to a new eventfd: an InterruptLine's
// { eventFd, release() }.
function firstVector(device) {
  const addon = native();
  const fd = device.fd;
  const msix = addon.vfioIrqCount(fd, VFIO_PCI_MSIX_IRQ_INDEX) > 0;
  const index = msix ? VFIO_PCI_MSIX_IRQ_INDEX : VFIO_PCI_MSI_IRQ_INDEX;
  if (!msix && addon.vfioIrqCount(fd, VFIO_PCI_MSI_IRQ_INDEX) === 0) {
    throw new IxyError('EUNSUPPORTED', `${device.address} has neither MSI-X nor MSI: ixy does not use its legacy interrupt`);
  }
  const [eventFd] = addon.vfioEnableIrqs(fd, index, 1);
  const release = () => {
    try {
      native().vfioDisableIrqs(fd, index);
    } catch {
      // the device fd may be closed already; its interrupts went with it
    }
  };
  return { eventFd, release };
}

// The group leaves the container once no open device of it is left, so that another
// process can open it. With the last group the container loses its DMA mappings: the next
// device maps every memory again.
function releaseGroupIfUnused(group) {
  if ([...devices].some((d) => d.group === group)) return;
  if (native().vfioReleaseGroup(group)) {
    containerUsed = false;
    for (const memory of memories) memory.iommuMapped = false;
  }
}

// IOVAs for a DmaMemory whose physical addresses this process cannot know: one per page.
function iovasFor(size, pageSize) {
  const base = nextIova;
  nextIova += size;
  const pages = [];
  for (let at = 0; at < size; at += pageSize) pages.push(base + at);
  return pages;
}

// Every DmaMemory calls this once made: it is mapped now, or when the first device opens.
function track(memory) {
  memories.add(memory);
  if (containerUsed) {
    try {
      mapMemory(memory);
    } catch (err) {
      memories.delete(memory);
      throw err;
    }
  }
}

// And this before it is freed: the IOMMU mapping goes before the memory does.
function untrack(memory) {
  if (!memories.delete(memory) || !memory.iommuMapped) return;
  for (const iova of memory.pagePhys) native().vfioUnmapDma(iova, memory.pageSize);
  memory.iommuMapped = false;
}

// Page by page: physical addresses (the IOVAs when known) are contiguous only per page.
function mapMemory(memory) {
  const { buffer, pagePhys, pageSize } = memory;
  let mapped = 0;
  try {
    for (; mapped < pagePhys.length; mapped++) native().vfioMapDma(buffer, mapped * pageSize, pageSize, pagePhys[mapped]);
  } catch (err) {
    for (let i = 0; i < mapped; i++) native().vfioUnmapDma(pagePhys[i], pageSize);
    throw err.code === 'EMEMLOCK' ? new IxyError('EMEMLOCK', err.message) : fromNative(err, 'IOMMU mapping');
  }
  memory.iommuMapped = true;
}

module.exports = { VFIO_DRIVER, open, iovasFor, track, untrack };
