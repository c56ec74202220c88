'use strict';

// One queue of an AF_XDP device, driven by a worker thread (`--workers n`): the main thread
// opened the device with { workers: true }, which attached the XDP program and bound no
// socket; each worker binds its own socket to queue i over a UMEM of its own thread (memory
// cannot move between threads) and puts it in the program's XSKMAP. A file descriptor is
// the process's, so the worker reaches the main thread's map by its number. The handle's
// owner table makes queue i one thread's (EBUSY for a second), as for ixgbe and igb.
const { IxyError, shown } = require('../host/errors');
const { native } = require('../host/native');
const { openSocket, closeSocket } = require('./socket');
const { XdpRxQueue } = require('./rx-queue');
const { XdpTxQueue } = require('./tx-queue');
const { xdpError } = require('./errors');
const { slotView, RX_PACKETS, TX_PACKETS } = require('../intel/pair-counts');

const TX_MIN_LENGTH = 14;

class XdpQueuePair {
  constructor(h, index) {
    if (!Number.isInteger(index) || index < 0 || index >= h.queueIds.length) {
      throw new IxyError('EINVAL', `queue pair ${shown(index)} does not exist: ${h.address} was opened with ${h.queueIds.length}`);
    }
    this.address = h.address;
    this.index = index;
    this.queueId = h.queueIds[index];
    this.map = h.map;
    this.owners = h.owners;
    this.stopped = false;
    this.closed = false;
    this.sock = null;
    this.rx = null;
    this.tx = null;
    this.pool = null;
    this.own();
    this.stopOnExit = () => this.close();
    process.once('exit', this.stopOnExit);
    try {
      this.sock = openSocket(h.iface, h.ifindex, this.queueId, h);
      this.pool = this.sock.umem;
      const rx = new XdpRxQueue(this.sock);
      rx.fill();
      if (index < h.rxQueues) this.rx = rx;
      this.rxRing = rx;
      this.tx = index < h.txQueues ? new XdpTxQueue(this.sock) : null;
      // The queues count into the device's shared slots (lib/intel/pair-counts.js), which
      // the main thread's stats() adds up: still one add per batch.
      if (h.counts) {
        if (this.rx !== null) this.rx.totals = slotView(h.counts, index, RX_PACKETS, 2);
        if (this.tx !== null) this.tx.totals = slotView(h.counts, index, TX_PACKETS, 2);
      }
      try {
        native().xdpMapSet(this.map, this.queueId, this.sock.fd);
      } catch (err) {
        throw xdpError(err, h.iface);
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  own() {
    const me = require('worker_threads').threadId + 1;
    const was = Atomics.compareExchange(this.owners, this.index, 0, me);
    if (was !== 0) throw new IxyError('EBUSY', `queue pair ${this.index} of ${this.address} is owned by thread ${was - 1}: one thread per queue; close() its QueuePair first`);
    this.owner = me;
  }

  rxBatch(batch) {
    batch.sent = 0;
    return this.rx.receive(batch);
  }

  txBatch(batch) {
    batch.checkForSend(TX_MIN_LENGTH);
    const sent = this.tx.send(batch);
    batch.sent = sent;
    return sent;
  }

  stats() {
    return {
      rxPackets: this.rx ? this.rx.packets : 0, rxBytes: this.rx ? this.rx.bytes : 0,
      txPackets: this.tx ? this.tx.packets : 0, txBytes: this.tx ? this.tx.bytes : 0,
    };
  }

  // idle 'interrupt' in the worker (lib/loop/worker-loop.js): the fd it sleeps on, the
  // socket's, readable once the kernel has put frames on the RX ring.
  readableFd() {
    return this.sock.fd;
  }

  // The worker loop's look once a second (QueuePair.check()): the kernel keeps the NIC, so
  // there is no hung TX queue for ixy to reset and no drop register to take.
  check() {
    return [];
  }

  // TX drains briefly; the queue leaves the XSKMAP (its frames go to the kernel's stack).
  stop() {
    if (this.stopped || this.sock === null) return;
    this.stopped = true;
    const deadline = Date.now() + 100;
    while (this.tx && !this.tx.drained() && Date.now() < deadline) { /* spin */ }
    try {
      native().xdpMapDelete(this.map, this.queueId);
    } catch { /* the main thread closed the map: the program is gone already */ }
  }

  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    if (this.sock !== null) {
      if (this.tx) this.tx.close();
      this.rxRing.close();
      closeSocket(this.sock);
      this.sock = null;
    }
    if (this.owner !== undefined) Atomics.compareExchange(this.owners, this.index, this.owner, 0);
    process.removeListener('exit', this.stopOnExit);
  }
}

module.exports = { XdpQueuePair };
