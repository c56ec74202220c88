'use strict';

// Interrupts through VFIO: the device's first interrupt vector (MSI-X, or MSI when it has
// none) signals an eventfd, and the addon's FdWatcher hands that to the event loop. A loop
// with nothing to do awaits wait() and costs nothing until the NIC interrupts: the
// NAPI pattern, where the interrupt only says "poll now" and the driver polls until the
// queues are empty before it re-arms (lib/device/idle.js).
// Only a device driven through VFIO can do this (sysfs gives user space no interrupts), or
// the device model, which signals an eventfd as VFIO does (lib/host/model-irq.js).
const fs = require('fs');
const { IxyError } = require('./errors');
const { native } = require('./native');

const VFIO_PCI_MSI_IRQ_INDEX = 1;
const VFIO_PCI_MSIX_IRQ_INDEX = 2;

// Routes the VFIO device's first vector (MSI-X, else MSI) to a new eventfd: the source of an
// InterruptLine, { eventFd, release() }.
function vfioVector(vfioDevice) {
  const addon = native();
  const fd = vfioDevice.fd;
  const msix = addon.vfioIrqCount(fd, VFIO_PCI_MSIX_IRQ_INDEX) > 0;
  const index = msix ? VFIO_PCI_MSIX_IRQ_INDEX : VFIO_PCI_MSI_IRQ_INDEX;
  if (!msix && addon.vfioIrqCount(fd, VFIO_PCI_MSI_IRQ_INDEX) === 0) {
    throw new IxyError('EUNSUPPORTED', `${vfioDevice.address} has neither MSI-X nor MSI: ixy does not use its legacy interrupt`);
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

class InterruptLine {
  // source: lib/host/vfio.js's VfioDevice (its first vector is enabled here), or an eventfd
  // another host backend signals, { eventFd, release() } (lib/host/model-irq.js).
  constructor(source) {
    const { eventFd, release } = source.eventFd === undefined ? vfioVector(source) : source;
    this.eventFd = eventFd;
    this.release = release;
    this.count = 0; // interrupts seen
    this.waiting = null; // the pending wait() every caller shares, or null
    this.resolve = null;
    this.timer = null;
    this.watcher = new (native().FdWatcher)(this.eventFd, () => this.fired());
  }

  // The eventfd was signalled: the device interrupted.
  fired() {
    this.count++;
    this.settle(true);
  }

  settle(value) {
    if (this.watcher !== null) this.watcher.stop();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const resolve = this.resolve;
    this.resolve = null;
    this.waiting = null;
    if (resolve !== null) resolve(value);
  }

  // Resolves with true at the next interrupt, or with false after `timeoutMs` (a safety net
  // for a frame that slipped in between the driver's last poll and its arming; it costs a
  // wake-up every `timeoutMs` of idleness). Only while waiting does the line keep the
  // process alive. Loops of one device (one per RX queue) share its line: a wait() while
  // one is pending joins it, and the one interrupt wakes them all.
  wait(timeoutMs) {
    if (this.waiting === null) {
      this.waiting = new Promise((resolve) => {
        this.resolve = resolve;
        this.timer = setTimeout(() => this.settle(false), timeoutMs);
        this.watcher.start();
      });
    }
    return this.waiting;
  }

  // Ends a pending wait() at once (another line woke the loop, or the device closes).
  cancel() {
    if (this.resolve !== null) this.settle(false);
  }

  close() {
    if (this.watcher === null) return;
    this.cancel();
    this.watcher.close();
    this.watcher = null;
    this.release();
    fs.closeSync(this.eventFd);
  }
}

module.exports = { InterruptLine };
