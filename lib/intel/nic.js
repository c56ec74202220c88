'use strict';

// What the Intel NICs with a register BAR and advanced descriptors (ixgbe, igb) share:
// the options, taking the device from the kernel and mapping its registers, the RX and TX
// queues, link speed, MAC, promiscuous mode, the statistics registers, and an orderly
// stop and close. Each reads the driver's register table (`layout`), which also names by
// role what differs between the NICs (LINK, PROMISCUOUS, RECEIVER_ENABLE, the counter
// lists). A driver adds its init sequence, resetAndInit(), which open() calls.
const { Device } = require('../device/device');
const { IxyError } = require('../host/errors');
const { native } = require('../host/native');
const { Mempool } = require('../memory/mempool');
const { RxQueue } = require('./rx-queue');
const { TxQueue, hangEvent } = require('./tx-queue');
const { stopQueues } = require('./ring-queue');
const { nicOptions } = require('./nic-options');
const { makePairCounts, addPairCounts } = require('./pair-counts');
const { sleep, setBits, clearBits, setField, getReg, setReg } = require('../host/register-access');

class IntelNic extends Device {
  // Takes the device (`device`: its handle, lib/host/device-handle.js, or its address):
  // checks the options, claims it and takes it from the kernel, maps BAR0 and, from then
  // on, stops the NIC on every way out of the process (lib/host/exit-guard.js).
  constructor(device, driver, { layout, options, maxQueues, maxRingSize, rxQueueLimit = null }) {
    super(device, driver);
    const handle = this.handle;
    this.layout = layout;
    this.txMinLength = layout.TX_MIN_LENGTH;
    this.interruptCapable = true; // MSI-X receive interrupts (setupInterrupts)
    this.options = nicOptions(options, maxQueues, maxRingSize, rxQueueLimit); // EINVAL for a bad one
    handle.take({ force: this.options.force }); // one owner from here; close() lets go
    try {
      this.bar = handle.mapBar(0, layout.MIN_BAR_BYTES);
    } catch (err) {
      handle.close();
      throw err;
    }
    this.regs = new Uint32Array(this.bar);
    this.pools = [];
    // With `workers`: which thread owns each queue pair (QueuePair), shared with them.
    this.queueOwners = this.options.workers ? new Int32Array(new SharedArrayBuffer(4 * maxQueues)) : null;
    // and what each pair moved (lib/intel/pair-counts.js); this thread reads the drop
    // counters of only the RX queues no worker owns (each worker takes its queue's own).
    this.pairCounts = this.options.workers ? makePairCounts(maxQueues) : null;
    const workerDrops = this.options.workers ? Array.from({ length: this.options.rxQueues }, (_, q) => layout.QUEUE_DROPS(q)) : [];
    this.missedCounters = layout.MISSED_COUNTERS.filter((offset) => !workerDrops.includes(offset));
    this.linkUp = null; // as check() last saw it; null: not checked yet
    this.missed = 0; // frames dropped for want of room (readMissed)
    this.hardwareErrors = 0; // broken frames the NIC dropped itself (readErrors)
    try {
      // A removed NIC answers all ones, and every wait of the init would time out after 2 s.
      if (this.isLost()) {
        throw new IxyError('EDEVICELOST', `${this.address} does not answer (its registers read all ones): the NIC was removed or is powered off`);
      }
      handle.guard(this, { bar: this.bar, stopBits: dmaStopBits(layout, this.options) });
      // An unbound NIC may have bus mastering off, and then it can do no DMA at all.
      handle.enableBusMastering();
    } catch (err) {
      this.closeAfter(err);
    }
  }

  // Opens the device: takes it, runs the driver's init sequence, then waits for link
  // without blocking the event loop.
  static async open(device, options = {}) {
    const dev = new this(device, options);
    try {
      dev.resetAndInit();
      await dev.waitForLink(dev.options.linkTimeout, dev.options.signal);
      dev.linkUp = true; // what check() compares with: a change from here is an event
    } catch (err) {
      dev.closeAfter(err);
    }
    return dev;
  }

  // Closes the device after `err` and throws `err`: the first error is the one that says
  // what went wrong, not one close() may meet on the way.
  closeAfter(err) {
    try {
      this.close();
    } catch {
      // reported: err
    }
    throw err;
  }

  // RX queue q with its own mempool, its ring programmed (RxQueue.configure): the part of
  // each driver's receive initialization that is the same on every NIC here.
  addRxQueue(q) {
    const o = this.options;
    if (o.workers) return null; // a worker's (QueuePair)
    const pool = new Mempool({ entries: o.mempoolEntries, bufferSize: o.bufferSize, debug: o.debug });
    this.pools.push(pool);
    const queue = new RxQueue(this.regs, this.layout, q, o.rxRingSize, pool, o.rxFreeThreshold, o.rxDropWhenFull);
    this.rxQueues.push(queue);
    queue.configure();
    return queue;
  }

  // TX queue q with its ring programmed (TxQueue.configure).
  addTxQueue(q) {
    if (this.options.workers) return null; // a worker's (QueuePair)
    const queue = new TxQueue(this.regs, this.layout, q, this.options.txRingSize);
    this.txQueues.push(queue);
    queue.configure();
    return queue;
  }

  // idle 'interrupt' (Device.interrupts(), once a VFIO interrupt line exists), as 82599 7.3
  // and 82576 7.3 describe MSI-X: every RX queue's cause goes to vector 0 (IVAR), which
  // clears its cause and masks itself when it is sent (EIAC; EIAM with GPIE.EIAME), and
  // EITR(0) 0 sends it at once. armInterrupt() unmasks it (EIMS): one interrupt per idle
  // period, then the driver polls. A cause that came while masked is sent as soon as the
  // vector is unmasked: at most one early wake-up per idle period.
  setupInterrupts() {
    const L = this.layout;
    const regs = this.regs;
    setBits(regs, L.GPIE, L.GPIE_MSIX);
    for (let q = 0; q < this.options.rxQueues; q++) {
      const shift = L.IVAR_RX_SHIFT(q);
      setField(regs, L.IVAR_RX(q), 0xff << shift, L.IVAR_VALID << shift);
    }
    setReg(regs, L.EITR(0), 0);
    setReg(regs, L.EIAC, 1);
    setReg(regs, L.EIAM, 1);
  }

  armInterrupt() {
    setReg(this.regs, this.layout.EIMS, 1);
  }

  disarmInterrupt() {
    setReg(this.regs, this.layout.EIMC, 1);
  }

  // What a worker thread needs to attach queue pair i (ixy.attachQueue(handle, i)): plain
  // data and the shared owner table, so it can be posted to the worker (workerData).
  workerHandle() {
    this.checkOpen('workerHandle()');
    if (!this.options.workers) {
      throw new IxyError('EINVAL', `${this.address} was opened without { workers: true }: its queues belong to this thread`);
    }
    const o = this.options;
    return {
      ...this.handle.workerData(), driver: this.driver, owners: this.queueOwners, counts: this.pairCounts,
      rxQueues: o.rxQueues, txQueues: o.txQueues, rxRingSize: o.rxRingSize, txRingSize: o.txRingSize,
      rxFreeThreshold: o.rxFreeThreshold, rxDropWhenFull: o.rxDropWhenFull, mempoolEntries: o.mempoolEntries, bufferSize: o.bufferSize,
    };
  }

  async waitForLink(timeoutMs, signal = null) {
    const deadline = Date.now() + timeoutMs;
    while (this.linkSpeed === 0) {
      if (signal && signal.aborted) throw aborted(this.address);
      if (Date.now() > deadline) {
        throw new IxyError('ELINKTIMEOUT', `link on ${this.address} did not come up within ${timeoutMs / 1000} s: check the cable or the link partner`);
      }
      await sleep(10);
    }
  }

  // Link speed in Mb/s, 0 when the link is down: the link status register's up bit and
  // speed field (82599 LINKS, 8.2.3.22.20; 82576 STATUS, 8.2.2), as the layout's LINK names them.
  get linkSpeed() {
    this.checkOpen('linkSpeed');
    const { at, up, speedMask, mbps } = this.layout.LINK;
    const status = getReg(this.regs, at);
    if ((status & up) === 0) return 0;
    return mbps[status & speedMask] || 0;
  }

  // Unicast and multicast promiscuous (82599 FCTRL.UPE/MPE, 8.2.3.7.1; 82576 RCTL, 8.10.1).
  get promiscuous() {
    this.checkOpen('promiscuous');
    const [at, bits] = this.layout.PROMISCUOUS;
    return (getReg(this.regs, at) & bits) === bits;
  }

  set promiscuous(on) {
    this.checkOpen('promiscuous');
    const [at, bits] = this.layout.PROMISCUOUS;
    if (on) setBits(this.regs, at, bits);
    else clearBits(this.regs, at, bits);
  }

  // Receive address 0 (RAL0/RAH0) holds the MAC the EEPROM loaded, low byte first.
  get mac() {
    this.checkOpen('mac');
    const low = getReg(this.regs, this.layout.RAL(0));
    const high = getReg(this.regs, this.layout.RAH(0));
    const bytes = [low & 0xff, (low >>> 8) & 0xff, (low >>> 16) & 0xff, low >>> 24, high & 0xff, (high >>> 8) & 0xff];
    return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
  }

  // Takes the count in a clear-on-read register (the layout's CLEAR_ON_READ): one plain
  // read, which clears it on the NIC. The 0 written after a non-zero value is a no-op on
  // the NIC and tells a device that cannot see reads (the model) that the count was taken.
  // Not one atomic exchange: a locked access to device memory is a bus lock on x86, and a
  // PCIe endpoint may refuse the locked read it becomes.
  readClear(offset) {
    const i = offset >> 2;
    const value = this.regs[i];
    if (value === 0) return 0;
    if (value === 0xffffffff && this.isLost()) return 0; // a gone device counts nothing
    this.regs[i] = 0;
    return value;
  }

  // Statistics from zero (82599 4.6.5, 82576 4.5.8): every clear-on-read register read once.
  resetStatistics() {
    for (const offset of this.layout.CLEAR_ON_READ) this.readClear(offset);
    this.missed = 0;
    this.hardwareErrors = 0;
  }

  // Frames dropped for want of room (descriptors, packet buffer): the running total of
  // the layout's MISSED_COUNTERS, less the queue drop counters of the workers' queues.
  readMissed() {
    for (const offset of this.missedCounters) this.missed += this.readClear(offset);
    return this.missed;
  }

  // Device.stats(), with workers: what the queue pairs counted added in (pair-counts.js).
  stats() {
    const s = super.stats();
    if (this.pairCounts === null) return s;
    return addPairCounts(s, this.pairCounts, this.options.rxQueues, this.options.txQueues);
  }

  // Broken frames (bad FCS, wrong size) the NIC dropped before they reached a ring: the
  // running total of the layout's ERROR_COUNTERS.
  readErrors() {
    for (const offset of this.layout.ERROR_COUNTERS) this.hardwareErrors += this.readClear(offset);
    return this.hardwareErrors;
  }

  // What changed since the last look (Device.check() tells it, cold). Throws EDEVICELOST
  // once the NIC is gone: a removed or dead PCIe device answers every read with all ones.
  // Otherwise an event for each change worth telling: link down or up, and a TX queue
  // reset after a hang (TxQueue.hung(): frames pending, no progress, link up).
  deviceEvents() {
    if (this.regs === null) return [];
    if (this.isLost()) {
      throw new IxyError('EDEVICELOST', `${this.address} stopped answering (its registers read all ones): the NIC was removed, powered off or reset by someone else`);
    }
    const events = [];
    const speed = this.linkSpeed;
    if ((speed > 0) !== this.linkUp) {
      if (this.linkUp !== null) {
        events.push({ type: 'link', up: speed > 0, speed, text: speed > 0 ? `link up at ${speed} Mb/s` : 'link down' });
      }
      this.linkUp = speed > 0;
    }
    if (speed === 0) return events;
    for (const q of this.txQueues) {
      if (!q.hung()) continue;
      events.push(hangEvent(q.index, q.reset()));
    }
    return events;
  }

  // A PCIe device that is gone answers every read with all ones; STATUS never reads so.
  isLost() {
    return this.regs !== null && getReg(this.regs, this.layout.STATUS) === 0xffffffff;
  }

  // Lets TX drain (briefly), then stops every queue and the receiver: after this the NIC
  // touches no more host memory. Buffers stay where they are until close().
  stop() {
    if (this.stopped || !this.regs) return;
    this.stopped = true;
    if (this.isLost()) return; // nothing to stop, and every wait would time out
    stopQueues(this.rxQueues, this.txQueues);
    const [at, bit] = this.layout.RECEIVER_ENABLE;
    clearBits(this.regs, at, bit); // receive off (82599 RXCTRL.RXEN, 82576 RCTL.EN)
  }

  // Stops the device, returns every buffer to its pool and releases DMA memory and the BAR.
  // Stop every device first when buffers travel between devices (forwarding): a TX ring
  // may hold another device's buffers. Safe to call twice.
  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    // Bus Master off before any memory goes back: then the NIC can reach none of it,
    // whatever a queue that did not stop still holds (PCI 3.0, 6.2.2). This also leaves
    // the exit guard, which must happen before the BAR is unmapped (the signal handler
    // writes to it). A failure is reported once everything else is released.
    const busMasterError = this.handle.stopGuard(this);
    for (const q of this.txQueues) q.close();
    for (const q of this.rxQueues) q.close();
    this.forgetQueues();
    for (const pool of this.pools) pool.unmap(); // its queues are stopped, or Bus Master off
    if (this.bar) native().free(this.bar);
    this.regs = null;
    this.bar = null;
    this.handle.close();
    if (busMasterError) throw busMasterError;
  }
}

// What the fatal-signal handler clears, in order, to stop all DMA without JavaScript: the
// receiver, every queue's ENABLE (RXDCTL/TXDCTL: 82599 8.2.3.8.6, 8.2.3.9.10; 82576
// 8.10.10, 8.12.13), then the transmitter. [offset, bits] pairs.
function dmaStopBits(L, o) {
  const pairs = [L.RECEIVER_ENABLE];
  for (let q = 0; q < o.rxQueues; q++) pairs.push([L.RXDCTL(q), L.RXDCTL_ENABLE]);
  for (let q = 0; q < o.txQueues; q++) pairs.push([L.TXDCTL(q), L.TXDCTL_ENABLE]);
  pairs.push(L.TRANSMITTER_ENABLE);
  return pairs;
}

// open() gave up waiting for link because its `signal` was aborted (Ctrl-C at start-up).
function aborted(address) {
  return new IxyError('EABORTED', `stopped while waiting for link on ${address}`);
}

module.exports = { IntelNic };
