'use strict';

// How a PCI device is reached: the three backends a device handle (lib/host/device-handle.js)
// chooses from, once, in backendFor(). Each offers the same small interface:
//
//   kind                       'sysfs' | 'model' | 'vfio'
//   needsRoot, canInterrupt    what it asks of the user, what idle 'interrupt' gets
//   check()                    before the claim: may this process drive the device this way?
//   take(force)                after the claim: take the device from the kernel
//   readConfig(offset, bytes), writeConfig(offset, buf)    config space
//   mapBar(index, minBytes)    an ArrayBuffer over a memory BAR
//   guardConfig()              where the exit guard clears Bus Master (lib/host/exit-guard.js)
//   interruptLine(setup)       the device's InterruptLine (lib/host/interrupts.js), or null
//   close()                    lets go of what take() and interruptLine() opened
//
// DMA mapping is the backend's only where an IOMMU translates: lib/host/vfio.js maps every
// DmaMemory into its container; sysfs and the model use physical addresses.
const fs = require('fs');
const path = require('path');
const pci = require('./pci');
const vfio = require('./vfio');
const { IxyError } = require('./errors');
const { checkIommu, unbindDriver, confineGroup } = require('./sysfs-safety');
const { modelInterruptLine } = require('./model-irq');

// sysfs as root: config space through the `config` file, BARs mapped from `resourceN`,
// physical addresses from pagemap, no interrupts (sysfs gives user space none).
class SysfsBackend {
  constructor(address, dir) {
    this.address = address;
    this.dir = dir;
    this.kind = 'sysfs';
    this.needsRoot = true;
    this.canInterrupt = false;
  }

  check() {
    checkIommu(this.address, this.dir);
  }

  take(force) {
    unbindDriver(this.address, this.dir, force);
  }

  readConfig(offset, bytes) {
    return pci.readConfigFile(this.dir, offset, bytes);
  }

  writeConfig(offset, buf) {
    pci.writeConfigFile(this.dir, offset, buf);
  }

  mapBar(index, minBytes) {
    return pci.mapResource(this.dir, index, minBytes);
  }

  guardConfig() {
    return [path.join(this.dir, 'config')];
  }

  interruptLine() {
    return null;
  }

  close() {}
}

// The device model (native/model), which poses as sysfs under IXY_PCI_ROOT: sysfs in every
// respect but one, its interrupts, which it takes over its control socket
// (lib/host/model-irq.js). The one named seam between the driver and the model.
class ModelBackend extends SysfsBackend {
  constructor(address, dir, socket) {
    super(address, dir);
    this.kind = 'model';
    this.canInterrupt = true;
    this.socket = socket;
    this.line = null;
  }

  interruptLine(setup) {
    if (this.line === null) this.line = modelInterruptLine(this.address, this.socket, setup);
    return this.line;
  }

  close() {
    if (this.line !== null) this.line.close();
    this.line = null;
  }
}

// VFIO (lib/host/vfio.js): a device bound to vfio-pci, reached through its /dev/vfio group
// once take() opened it; no root needed, the IOMMU maps DMA.
class VfioBackend {
  constructor(address, dir) {
    this.address = address;
    this.dir = dir;
    this.kind = 'vfio';
    this.needsRoot = false;
    this.canInterrupt = true;
    this.device = null; // the VfioDevice, from take()
  }

  check() {} // the IOMMU translates, and VFIO maps for it

  take() {
    confineGroup(this.dir);
    this.device = vfio.open(this.address, this.dir);
  }

  readConfig(offset, bytes) {
    return this.opened().readConfig(offset, bytes);
  }

  writeConfig(offset, buf) {
    this.opened().writeConfig(offset, buf);
  }

  mapBar(index, minBytes) {
    return this.opened().mapBar(index, minBytes);
  }

  guardConfig() {
    return [this.opened().fd, this.device.configOffset];
  }

  interruptLine(setup) {
    return this.opened().interruptLine(setup);
  }

  opened() {
    if (this.device === null) throw new IxyError('ENODEV', `${this.address} is not open through VFIO: open() it first`);
    return this.device;
  }

  close() {
    if (this.device !== null) this.device.close();
    this.device = null;
  }
}

const BACKENDS = { sysfs: SysfsBackend, model: ModelBackend, vfio: VfioBackend };

// The one place that asks how the device in `dir`, bound to kernel driver `driver`, is
// reached: bound to vfio-pci, through VFIO; beside a device model's control socket,
// through the model; otherwise sysfs.
function backendFor(address, dir, driver) {
  if (driver === vfio.VFIO_DRIVER) return new VfioBackend(address, dir);
  const socket = modelSocket(dir);
  return socket === null ? new SysfsBackend(address, dir) : new ModelBackend(address, dir, socket);
}

// The control socket of the model whose device directory is `dir` (IXY_PCI_ROOT = the
// model's directory, the socket beside the devices), or null when it is no model's. A link
// is none: the model makes the socket itself, and a link planted in a fake tree could lead
// to any service's socket.
function modelSocket(dir) {
  const socket = path.join(path.dirname(dir), 'control.sock');
  try {
    return fs.lstatSync(socket).isSocket() ? socket : null;
  } catch {
    return null;
  }
}

// The backend of kind `kind` in a worker thread, for the device the main thread took
// (DeviceHandle.forWorker()): VFIO gives the device to one process's container, opened
// there; the other two map the BAR from the same file.
function workerBackend(kind, address, dir) {
  if (kind === 'vfio' || !(kind in BACKENDS)) {
    throw new IxyError('EUNSUPPORTED', `${address} is reached through ${kind}: queue pairs in worker threads need the sysfs backend for now`);
  }
  return new SysfsBackend(address, dir);
}

module.exports = { backendFor, workerBackend };
