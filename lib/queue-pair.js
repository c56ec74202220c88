'use strict';

// One RX/TX queue pair of an ixgbe or igb device, driven by a worker thread. External
// ArrayBuffers (the BAR mapping, DMA memory) cannot move between worker_threads, so the
// worker maps the BAR itself and allocates its own ring and mempool; it touches only queue
// i's registers (82599 8.2.3.8 and 8.2.3.9: RDBAL(i)..RXDCTL(i), TDBAL(i)..TXDCTL(i)),
// which the datasheet lets software enable while the device runs (4.6.7.1, 4.6.8.1). The
// main thread opened the device with { workers: true }: it owns the device (its claim,
// exit guard and global init, RSS included) and hands out workerHandle(), whose shared
// owner table makes a queue pair one thread's: a second owner is EBUSY, as a second owner
// of a NIC is. The worker reaches the device as the main thread does, through a device
// handle made from the workerHandle() (DeviceHandle.forWorker()).
const claim = require('./host/claim');
const { DeviceHandle } = require('./host/device-handle');
const { IxyError, shown } = require('./host/errors');
const { native } = require('./host/native');
const { Mempool } = require('./memory/mempool');
const { RxQueue } = require('./intel/rx-queue');
const { TxQueue, hangEvent } = require('./intel/tx-queue');
const { slotView, FIELDS, SLOT, RX_PACKETS, TX_PACKETS, TX_DROPPED, RX_ERRORS, RX_DROPPED } = require('./intel/pair-counts');
const { stopQueues } = require('./intel/ring-queue');
const { XdpQueuePair } = require('./xdp/queue-pair');
const { checkRingSize, dropWhenFullDefault } = require('./intel/nic-options');
const { TeardownStop } = require('./host/teardown-stop');
const rings = require('./intel/rings');

const LAYOUTS = { ixgbe: () => require('./intel/ixgbe/registers'), igb: () => require('./intel/igb/registers') };
const MAX_RING_SIZES = { ixgbe: 8192, igb: 4096 }; // as their drivers' open() takes them

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
    // The device's counters (pair-counts.js), this pair's slot as it was at attach (what
    // earlier owners of the pair counted), and this pair's RX drops so far.
    this.counts = h.counts instanceof Float64Array ? h.counts : null;
    this.start = new Float64Array(FIELDS);
    this.rxDropped = 0;
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
      this.bar = DeviceHandle.forWorker(h).mapBar(0, this.layout.MIN_BAR_BYTES);
      this.regs = new Uint32Array(this.bar);
      this.teardownStop = new TeardownStop(this.bar, this.layout, index, this.owners, this.owner);
      if (index < h.rxQueues) {
        this.pool = new Mempool({ entries: h.mempoolEntries, bufferSize: h.bufferSize });
        this.rx = new RxQueue(this.regs, this.layout, index, h.rxRingSize, this.pool, h.rxFreeThreshold, typeof h.rxDropWhenFull === 'boolean' ? h.rxDropWhenFull : dropWhenFullDefault(h.rxQueues, true));
        this.teardownStop.guard(this.pool.memory.buffer);
      }
      if (index < h.txQueues) this.tx = new TxQueue(this.regs, this.layout, index, h.txRingSize);
      if (this.counts !== null) this.shareCounts();
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

  // The queues count into this pair's slot of the device's counters (before they run), on
  // from what earlier owners of the pair left there: the device's stats() add them up.
  shareCounts() {
    const at = this.index * SLOT;
    this.start.set(this.counts.subarray(at, at + FIELDS));
    if (this.rx) this.rx.totals = slotView(this.counts, this.index, RX_PACKETS, 2);
    if (this.tx) this.tx.totals = slotView(this.counts, this.index, TX_PACKETS, 2);
  }

  // What this pair's queues moved since it was attached, counted by themselves, and what
  // they dropped: rxDropped, frames the NIC had no descriptor for on this RX queue (its
  // own drop counter, QPRDC on the 82599, RQDPC on the 82576; as of the last check());
  // txDropped, frames the TX queue took that the NIC never sent (a reset, the stop).
  stats() {
    const rx = this.rx ? this.rx.totals : null;
    const tx = this.tx ? this.tx.totals : null;
    const since = (field, v) => (this.counts === null ? v : v - this.start[field]);
    return {
      rxPackets: rx ? since(RX_PACKETS, rx[0]) : 0, rxBytes: rx ? since(RX_PACKETS + 1, rx[1]) : 0,
      txPackets: tx ? since(TX_PACKETS, tx[0]) : 0, txBytes: tx ? since(TX_PACKETS + 1, tx[1]) : 0,
      rxDropped: this.rxDropped, rxErrors: this.rx ? this.rx.errors : 0, txDropped: this.tx ? this.tx.dropped : 0,
    };
  }

  // Takes this RX queue's drop count (clear-on-read: read, then 0 written after a non-zero
  // value, as AdvancedNic.readClear() does) and publishes drops and errors to the device's
  // counters. Cold: check() and stop().
  publish() {
    if (this.regs === null) return;
    if (this.rx !== null) {
      const i = this.layout.QUEUE_DROPS(this.index) >> 2;
      const value = this.regs[i];
      if (value !== 0 && value !== 0xffffffff) {
        this.regs[i] = 0;
        this.rxDropped += value;
      }
    }
    if (this.counts === null) return;
    const at = this.index * SLOT;
    if (this.rx !== null) {
      this.counts[at + RX_DROPPED] = this.start[RX_DROPPED] + this.rxDropped;
      this.counts[at + RX_ERRORS] = this.start[RX_ERRORS] + this.rx.errors;
    }
    if (this.tx !== null) this.counts[at + TX_DROPPED] = this.start[TX_DROPPED] + this.tx.dropped;
  }

  // The worker's look, about once a second (cold): publishes the counts and, with the link
  // up, resets a hung TX queue (TxQueue.hung()). Returns the events ({ type: 'txhang', ... },
  // as Device.check() gives them). A NIC that reads all ones is gone: the main thread's
  // device tells that (EDEVICELOST).
  check() {
    if (this.regs === null || this.stopped || this.regs[this.layout.STATUS >> 2] === 0xffffffff) return [];
    this.publish();
    const { at, up } = this.layout.LINK;
    if (this.tx === null || (this.regs[at >> 2] & up) === 0 || !this.tx.hung()) return [];
    const event = hangEvent(this.index, this.tx.reset());
    this.publish();
    return [event];
  }

  // Lets TX drain (briefly) and stops both queues (stopQueues(): the NIC then touches none
  // of this thread's memory). Safe to call twice. Stop every pair before closing one whose
  // buffers another pair's TX ring may hold (forwarding).
  stop() {
    if (this.stopped || this.regs === null) return;
    this.stopped = true;
    if (this.regs[this.layout.STATUS >> 2] === 0xffffffff) return; // gone: nothing to stop, every wait would time out
    stopQueues(this.rx ? [this.rx] : [], this.tx ? [this.tx] : []);
    this.publish(); // the frames the stop took out of the TX totals are dropped ones now
  }

  // Stops the pair, then frees rings, buffers and the BAR mapping and lets go of the pair.
  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    if (this.teardownStop) this.teardownStop.cancel();
    if (this.tx) this.tx.close();
    if (this.rx) this.rx.close();
    if (this.pool) this.pool.unmap(); // its queues are stopped (Mempool.close() would ask)
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
  if (h === null || typeof h !== 'object' || typeof h.address !== 'string' || typeof h.dir !== 'string' ||
      !(h.owners instanceof Int32Array) || !(h.owners.buffer instanceof SharedArrayBuffer) || !(h.driver in LAYOUTS)) {
    throw new IxyError('EINVAL', `attachQueue() takes the handle of device.workerHandle(), got ${shown(h)}`);
  }
  const holder = claim.deviceHolder(h.address, { dir: h.dir });
  if (holder === null || holder.pid !== process.pid) {
    throw new IxyError('ENODEV', `${h.address} is not open in this process: open it with { workers: true } in the main thread first`);
  }
  // The same ring rules as open()'s: a handle made by hand may ask for anything.
  for (const key of ['rxRingSize', 'txRingSize']) checkRingSize(`the handle's ${key}`, h[key], MAX_RING_SIZES[h.driver]);
  return h;
}

// In a worker thread: queue pair `index` of a device the main thread opened with
// { workers: true }, from its workerHandle() (ixy.attachQueue()).
function attachQueue(handle, index) {
  if (handle && handle.backend === 'af_xdp') return new XdpQueuePair(handle, index); // lib/xdp/
  return new QueuePair(handle, index);
}

module.exports = { QueuePair, attachQueue };
