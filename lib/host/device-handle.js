'use strict';

// A PCI device as a driver holds it: resolved once from its address by resolveDevice(),
// then handed to the driver (ixgbe, igb, virtio) and, as plain data, to worker threads.
//
//   address, dir, id    the PCI address, its resolved sysfs directory, { vendor, device, class }
//   backend             how it is reached (lib/host/backends.js: sysfs, the model, VFIO),
//                       chosen once here; nobody else asks which
//   take({ force })     checks, claims (one owner, lib/host/claim.js) and takes the device
//   mapBar, openResource, readConfigSpace, readConfig16, enable/disableBusMastering
//   canInterrupt(), interruptLine(setup)     idle 'interrupt'
//   guard(device, opts), stopGuard(device)   the exit guard (lib/host/exit-guard.js)
//   close()             ends the claim and closes what the backend opened
//   workerData()        what a worker thread needs to map the same device (forWorker())
//
// Another kind of device (an AF_XDP socket: no PCI, the kernel keeps the NIC) is no
// backend here: lib/open.js chooses it by the form of the name, before a handle is made.
const pci = require('./pci');
const claim = require('./claim');
const exitGuard = require('./exit-guard');
const { fromNative } = require('./errors');
const { backendFor, workerBackend } = require('./backends');

class DeviceHandle {
  constructor(address, dir, id, backend) {
    this.address = address;
    this.dir = dir;
    this.id = id;
    this.backend = backend;
    this.claimFd = null; // the claim, from take() until close()
  }

  // Takes the device for this process: the backend's checks, the claim before anything is
  // written to the device (close() ends it, and so does the process's death), then the
  // backend takes it from the kernel. Nothing is held when it throws.
  take({ force = false } = {}) {
    this.backend.check();
    this.claimFd = claim.claimDevice(this.address, this.dir);
    try {
      this.backend.take(force);
    } catch (err) {
      this.close();
      throw err;
    }
  }

  // An ArrayBuffer over memory BAR `index`, of at least minBytes.
  mapBar(index = 0, minBytes = 1) {
    return this.backend.mapBar(index, minBytes);
  }

  // A file descriptor for pread/pwrite on BAR `index` (an I/O-port BAR: legacy virtio).
  openResource(index) {
    return pci.openResource(this.dir, index);
  }

  // The config space (256 bytes, or 4 KiB for PCIe): for walking capability lists.
  readConfigSpace() {
    return this.backend.readConfig(0, 4096);
  }

  readConfig16(offset) {
    return this.backend.readConfig(offset, 2).readUInt16LE(0);
  }

  enableBusMastering() {
    pci.setBusMaster(this.backend, true);
  }

  disableBusMastering() {
    pci.setBusMaster(this.backend, false);
  }

  // Whether idle 'interrupt' can work here (VFIO and the model interrupt; sysfs cannot).
  canInterrupt() {
    return this.backend.canInterrupt;
  }

  // The device's InterruptLine, made on first use after setup(); null without one.
  interruptLine(setup) {
    return this.backend.interruptLine(setup);
  }

  // From now on `device` (its stop()) is stopped on every way out of the process.
  guard(device, { bar = null, stopBits = [] } = {}) {
    return exitGuard.guard(device, { bar, stopBits, config: this.backend.guardConfig() });
  }

  // Clears Bus Master and takes `device` out of the exit guard, for close() once its queues
  // are stopped and before its memory goes back. Returns the error instead of throwing it:
  // close() releases everything else first and reports it last.
  stopGuard(device) {
    try {
      if (!exitGuard.release(device)) this.disableBusMastering();
      return null;
    } catch (err) {
      return fromNative(err, `cannot clear Bus Master of ${this.address}`);
    }
  }

  // Lets go of the device: what the backend opened, then the claim. Safe to call twice.
  close() {
    this.backend.close();
    if (this.claimFd !== null) claim.releaseClaim(this.claimFd);
    this.claimFd = null;
  }

  // Plain data for workerData: the same device, reached the same way.
  workerData() {
    return { address: this.address, dir: this.dir, backend: this.backend.kind };
  }

  // In a worker thread: the handle of a device the main thread took (workerData()). It
  // maps the BAR; the claim and the guard stay the main thread's.
  static forWorker({ address, dir, backend }) {
    return new DeviceHandle(address, dir, null, workerBackend(backend, address, dir));
  }
}

// The handle of the PCI device at `address`: the address checked, its directory resolved
// and its identity read, once; the backend chosen (lib/host/backends.js).
function resolveDevice(address) {
  const { dir, id, driver } = pci.lookUp(address);
  return new DeviceHandle(address, dir, id, backendFor(address, dir, driver));
}

module.exports = { DeviceHandle, resolveDevice };
