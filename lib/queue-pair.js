'use strict';

// One RX/TX queue pair of an ixgbe or igb device, driven by a worker thread. External
// ArrayBuffers (the BAR mapping, DMA memory) cannot move between worker_threads, so the
// worker maps the BAR itself and allocates its own ring and mempool; it touches only queue
// i's registers (82599 8.2.3.8 and 8.2.3.9: RDBAL(i)..RXDCTL(i), TDBAL(i)..TXDCTL(i)),
// which the datasheet lets software enable while the device runs (4.6.7.1, 4.6.8.1). The
// main thread opened the device with { workers: true }: it owns the device (its claim,
// exit guard and global init, RSS included) and hands out workerHandle(), whose shared
// owner table makes a queue pair one thread's: a second owner is EBUSY, as a second owner
// of a NIC is.
const pci = require('./host/pci');
const claim = require('./host/claim');
const vfio = require('./host/vfio');
const { IxyError, shown } = require('./host/errors');
const { native } = require('./host/native');
const { Mempool } = require('./memory/mempool');
const { RxQueue } = require('./intel/rx-queue');
const { TxQueue } = require('./intel/tx-queue');
const { stopQueues } = require('./intel/ring-queue');
const { TeardownStop } = require('./host/teardown-stop');
const rings = require('./intel/rings');

const LAYOUTS = { ixgbe: () => require('./intel/ixgbe/registers'), igb: () => require('./intel/igb/registers') };

class QueuePair {
  constructor(handle, index) {
    const h = checkHandle(handle);
    if (!Number.isInteger(index) || index < 0 || index >= Math.max(h.rxQueues, h.txQueues)) {
      throw new IxyError('EINVAL', `queue pair ${shown(index)} does not exist: ${h.address} was opened with ${h.rxQueues} RX and ${h.txQueues} TX queues`);
    }
    this.address = h.address;
    this.index = index;
    this.layout = LAYOUTS[h.driver]();
    this.owners = h.owners;
    this.stopped = false;
    this.closed = false;
    this.regs = null;
    this.bar = null;
    this.pool = null;
    this.rx = null;
    this.tx = null;
    this.teardownStop = null;
    this.own();
    // A thread that ends without close() (an uncaught exception, process.exit() in the
    // worker) still stops its queues, and lets go of the pair: its memory goes with it, and
    // the NIC must not write there. 'exit' runs in the worker before its memory is freed;
    // worker.terminate() runs no JavaScript, so the addon stops the pair at the thread's
    // teardown too (lib/host/teardown-stop.js).
    this.stopOnExit = () => {
      this.stop();
      this.disown();
    };
    process.once('exit', this.stopOnExit);
    try {
      this.bar = pci.mapBar(h.address, 0, this.layout.MIN_BAR_BYTES);
      this.regs = new Uint32Array(this.bar);
      this.teardownStop = new TeardownStop(this.bar, this.layout, index, this.owners, this.owner);
      if (index < h.rxQueues) {
        this.pool = new Mempool({ entries: h.mempoolEntries, bufferSize: h.bufferSize });
        this.rx = new RxQueue(this.regs, this.layout, index, h.rxRingSize, this.pool, h.rxFreeThreshold, h.rxQueues > 1);
        this.teardownStop.guard(this.pool.memory.buffer);
      }
      if (index < h.txQueues) this.tx = new TxQueue(this.regs, this.layout, index, h.txRingSize);
      this.teardownStop.guard(rings.words.buffer); // the rings' region, made with the first ring
      for (const q of [this.rx, this.tx]) {
        if (q === null) continue;
        q.configure();
        q.start();
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  // Takes the pair in the owner table: 0 free, otherwise the owner's threadId + 1.
  own() {
    const me = require('worker_threads').threadId + 1;
    const was = Atomics.compareExchange(this.owners, this.index, 0, me);
    if (was !== 0) {
      throw new IxyError('EBUSY', `queue pair ${this.index} of ${this.address} is owned by thread ${was - 1}: one thread per queue; close() its QueuePair first`);
    }
    this.owner = me;
  }

  rxBatch(batch) {
    batch.sent = 0;
    return this.rx.receive(batch);
  }

  txBatch(batch) {
    batch.checkForSend(this.layout.TX_MIN_LENGTH);
    const sent = this.tx.send(batch);
    batch.sent = sent;
    return sent;
  }

  // What this pair's queues moved, counted by themselves.
  stats() {
    return {
      rxPackets: this.rx ? this.rx.packets : 0, rxBytes: this.rx ? this.rx.bytes : 0,
      txPackets: this.tx ? this.tx.packets : 0, txBytes: this.tx ? this.tx.bytes : 0,
    };
  }

  // Lets TX drain (briefly) and stops both queues (stopQueues(): the NIC then touches none
  // of this thread's memory). Safe to call twice. Stop every pair before closing one whose
  // buffers another pair's TX ring may hold (forwarding).
  stop() {
    if (this.stopped || this.regs === null) return;
    this.stopped = true;
    stopQueues(this.rx ? [this.rx] : [], this.tx ? [this.tx] : []);
  }

  // Stops the pair, then frees rings, buffers and the BAR mapping and lets go of the pair.
  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    if (this.teardownStop) this.teardownStop.cancel();
    if (this.tx) this.tx.close();
    if (this.rx) this.rx.close();
    if (this.pool) this.pool.close();
    if (this.bar) native().free(this.bar);
    this.regs = null;
    this.bar = null;
    this.disown();
    process.removeListener('exit', this.stopOnExit);
  }

  disown() {
    if (this.owner !== undefined) Atomics.compareExchange(this.owners, this.index, this.owner, 0);
  }
}

// The handle must come from workerHandle() of a device this process has open.
function checkHandle(h) {
  if (h === null || typeof h !== 'object' || typeof h.address !== 'string' || !(h.owners instanceof Int32Array) ||
      !(h.owners.buffer instanceof SharedArrayBuffer) || !(h.driver in LAYOUTS)) {
    throw new IxyError('EINVAL', `attachQueue() takes the handle of device.workerHandle(), got ${shown(h)}`);
  }
  if (h.pciRoot !== pci.pciRoot()) {
    throw new IxyError('EINVAL', `the handle is for devices under ${h.pciRoot}, this thread sees ${pci.pciRoot()} (IXY_PCI_ROOT)`);
  }
  const holder = claim.deviceHolder(h.address);
  if (holder === null || holder.pid !== process.pid) {
    throw new IxyError('ENODEV', `${h.address} is not open in this process: open it with { workers: true } in the main thread first`);
  }
  if (vfio.isVfioBound(pci.boundDriver(h.address))) {
    throw new IxyError('EUNSUPPORTED', `${h.address} is bound to vfio-pci: queue pairs in worker threads need the sysfs backend for now`);
  }
  return h;
}

module.exports = { QueuePair };
