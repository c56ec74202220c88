'use strict';

// A device's interrupt as the event loop sees it: a host backend routes the device's vector
// to an eventfd and signals it there, VFIO through VFIO_DEVICE_SET_IRQS (lib/host/vfio.js),
// the device model over its control socket (lib/host/model-irq.js); the addon's FdWatcher
// hands the eventfd to the event loop. A loop with nothing to do awaits wait() and costs
// nothing until the NIC interrupts: the NAPI pattern, where the interrupt only says "poll
// now" and the driver polls until the queues are empty before it re-arms
// (lib/device/idle.js). A device driven through sysfs has none: sysfs gives user space no
// interrupts. An AF_XDP socket (lib/xdp/device.js) is a line too, without an eventfd: its
// fd is readable while its RX ring holds frames, and the kernel wakes its waiters when it
// puts frames there (as NAPI, in softirq, after the NIC's own interrupt).
const fs = require('fs');
const { native } = require('./native');

class InterruptLine {
  // eventFd: the eventfd the backend signals, which the line reads and closes; release():
  // tells the backend to stop signalling it. Or readableFd: an fd that is readable while
  // there is work (an AF_XDP socket), which the line only watches: it reads nothing from it
  // and leaves it open, and must be closed before it is.
  constructor({ eventFd = -1, readableFd = -1, release = () => {} }) {
    this.eventFd = eventFd;
    this.fd = eventFd >= 0 ? eventFd : readableFd;
    this.release = release;
    this.count = 0; // interrupts seen
    this.waiting = null; // the pending wait() every caller shares, or null
    this.resolve = null;
    this.timer = null;
    this.watcher = new (native().FdWatcher)(this.fd, () => this.fired(), eventFd >= 0);
  }

  // The eventfd was signalled (the device interrupted), or the fd became readable.
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
    if (this.eventFd >= 0) fs.closeSync(this.eventFd);
  }
}

module.exports = { InterruptLine };
