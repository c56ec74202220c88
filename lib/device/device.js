'use strict';

// What every ixy driver (ixgbe, igb, virtio) offers. A driver subclass sets up rxQueues
// and txQueues (Queue below) whose receive(batch)/send(batch) do the work, and implements
// the device-specific parts: link, MAC, promiscuous mode, hardware counters.
const { EventEmitter } = require('events');
const { IxyError, shown } = require('../host/errors');
const { ReceiveIterator } = require('./receive-iterator');
const { frames, createReadStream } = require('./frames');
const { PacketBatch } = require('../memory/batch');
const { resolveDevice } = require('../host/device-handle');
const { needsVfio, noInterrupts } = require('./idle');

// What every driver's RX and TX queue counts as it moves frames, for stats(): packets and
// bytes, added per batch in receive()/send() as `totals[PACKETS] += n`. A Float64Array,
// not number properties: a property that passes 2^31 (a queue's bytes, within seconds)
// changes the queue's hidden class and throws the optimised receive()/send() away mid-run.
const PACKETS = 0;
const BYTES = 1;

class Queue {
  constructor() {
    // Over an ArrayBuffer of its own: a view of 2 made as `new Float64Array(2)` keeps its
    // elements on V8's heap, where each += loads the view's length and data pointer first.
    this.totals = new Float64Array(new ArrayBuffer(16));
    // TX: frames send() took that the NIC never sent, discarded with the ring when the
    // queue stopped or was reset after a hang (cold paths only).
    this.dropped = 0;
  }

  get packets() {
    return this.totals[PACKETS];
  }

  get bytes() {
    return this.totals[BYTES];
  }
}

// What happens to a device, as events (each also a line of check()): 'link' { up, speed,
// text }, 'txhang' { queue, dropped, text } (a hung TX queue was reset), 'lost' (the
// IxyError EDEVICELOST: the NIC stopped answering). While anyone listens to one of them,
// an unref'd timer runs check() every WATCH_MS; the apps' loop calls it each second too.
const WATCHED = new Set(['link', 'txhang', 'lost']);
const WATCH_MS = 1000;

class Device extends EventEmitter {
  // device: the device handle ixy.open() resolved (lib/host/device-handle.js), or the PCI
  // address of one, for a driver class opened directly (IxgbeDevice.open(address)).
  constructor(device, driver) {
    super();
    this.handle = typeof device === 'string' ? resolveDevice(device) : device;
    this.watcher = null;
    this.lostTold = false;
    this.on('newListener', (name) => {
      if (WATCHED.has(name) && this.watcher === null && !this.closed) {
        this.watcher = setInterval(() => this.watchOnce(), WATCH_MS).unref();
      }
    });
    this.address = this.handle.address;
    this.driver = driver;
    this.rxQueues = [];
    this.txQueues = [];
    this.stopped = false;
    this.closed = false;
    this.txMinLength = 14; // the shortest frame txBatch() takes: an Ethernet header
    this.interruptCapable = false; // the driver programs receive interrupts (setupInterrupts)
    // The kernel fills the RX rings, on this machine's CPUs (AF_XDP), not a NIC by DMA: a
    // loop polling an empty ring takes CPU from the work that would fill it (lib/device/idle.js).
    this.kernelFillsRings = false;
    this.rxPacketBufferBytes = 0; // where frames wait while the RX ring is full (lib/device/idle-bound.js)
  }

  // Receives up to batch.capacity frames from RX queue `queue` into `batch`.
  rxBatch(queue, batch) {
    const rxQueue = this.rxQueues[queue];
    // One compare for a wrong index and a closed device alike (close() empties the list).
    if (rxQueue === undefined) this.missingQueue('RX', queue);
    if (!(batch instanceof PacketBatch)) throw notABatch('rxBatch', batch);
    batch.sent = 0;
    return rxQueue.receive(batch);
  }

  // Queues batch's packets on TX queue `queue`; returns how many were taken (also kept in
  // batch.sent). The rest (batch.ids from that index on) still belong to the caller:
  // batch.release() frees them. A batch the NIC must not see throws EINVAL first
  // (batch.checkForSend()); the queue's own send() leaves that to its caller.
  txBatch(queue, batch) {
    const txQueue = this.txQueues[queue];
    if (txQueue === undefined) this.missingQueue('TX', queue);
    if (!(batch instanceof PacketBatch)) throw notABatch('txBatch', batch);
    batch.checkForSend(this.txMinLength);
    const sent = txQueue.send(batch);
    batch.sent = sent;
    return sent;
  }

  // An async iterator over received batches that lets timers and I/O run between them:
  //   for await (const batch of dev.receive(0, { batchSize: 64 })) { ... }
  // One batch object is reused; see lib/device/receive-iterator.js for who frees what.
  receive(queue = 0, options = {}) {
    this.checkOpen('receive()');
    return new ReceiveIterator(this, queue, options);
  }

  // Received frames as copies, one { data, length, timestamp } at a time (lib/device/frames.js):
  // nothing a caller keeps changes under it. Options as receive()'s.
  frames(queue = 0, options = {}) {
    this.checkOpen('frames()');
    this.checkQueue('RX', queue, this.rxQueues.length);
    return frames(this, queue, options);
  }

  // The same frames as an object-mode Readable (options: receive()'s and highWaterMark).
  createReadStream(queue = 0, options = {}) {
    this.checkOpen('createReadStream()');
    this.checkQueue('RX', queue, this.rxQueues.length);
    return createReadStream(this, queue, options);
  }

  // Packets and bytes are counted by the queues as they move them (exact on every NIC and
  // on the model); RX drops come from the device's counters where it has them, TX drops
  // (frames taken for sending that never left) from the queues.
  stats() {
    this.checkOpen('stats()');
    const s = { rxPackets: 0, rxBytes: 0, txPackets: 0, txBytes: 0, rxErrors: this.readErrors(), rxMissed: this.readMissed(), txDropped: 0 };
    for (const q of this.rxQueues) {
      s.rxPackets += q.packets;
      s.rxBytes += q.bytes;
      s.rxErrors += q.errors;
    }
    for (const q of this.txQueues) {
      s.txPackets += q.packets;
      s.txBytes += q.bytes;
      s.txDropped += q.dropped;
    }
    // Per queue, what the queues counted themselves: with RSS, how the flows spread.
    s.rxQueues = this.rxQueues.map((q) => ({ packets: q.packets, bytes: q.bytes }));
    s.txQueues = this.txQueues.map((q) => ({ packets: q.packets, bytes: q.bytes }));
    return s;
  }

  // Queue pairs in worker threads: ixgbe and igb only (lib/intel/nic.js).
  workerHandle() {
    throw new IxyError('EUNSUPPORTED', `${this.driver} cannot hand its queues to worker threads (ixgbe and igb can)`);
  }

  // Throws ECLOSED once close() has begun: the device's registers, rings and buffers are
  // gone. `what` names the method or property that was used.
  checkOpen(what) {
    if (this.closed) {
      throw new IxyError('ECLOSED', `${what} on ${this.address}, which is closed: open it again with ixy.open()`);
    }
  }

  // For the cold paths (receive(), missingQueue()): throws EINVAL unless `queue` indexes
  // one of `count` queues.
  checkQueue(kind, queue, count) {
    if (!Number.isInteger(queue)) {
      throw new IxyError('EINVAL', `the ${kind} queue index must be an integer, got ${shown(queue)}`);
    }
    if (queue < 0 || queue >= count) {
      throw new IxyError('EINVAL', `${kind} queue ${queue} does not exist: ${this.address} has ${count} ${kind} queue${count === 1 ? '' : 's'}`);
    }
  }

  // rxBatch() or txBatch() found no queue at that index: says why.
  missingQueue(kind, queue) {
    this.checkOpen(kind === 'RX' ? 'rxBatch()' : 'txBatch()');
    this.checkQueue(kind, queue, kind === 'RX' ? this.rxQueues.length : this.txQueues.length);
  }

  // For close(), once the queues are released: the device keeps no queue a caller could
  // reach (the arrays are emptied in place, so their shape stays what V8 knows).
  forgetQueues() {
    this.rxQueues.length = 0;
    this.txQueues.length = 0;
  }

  // idle 'interrupt' (lib/device/idle.js): the line a loop with nothing to do sleeps on, set up on
  // first use. Only a device driven through VFIO has one (sysfs gives user space no
  // interrupts), or one of the device model (lib/host/backends.js). A driver implements
  // setupInterrupts() (its receive queues raise vector 0), armInterrupt() (the next received
  // frame interrupts) and disarmInterrupt(). An AF_XDP device (lib/xdp/device.js) overrides
  // this: its lines are its sockets, one per RX queue.
  interrupts() {
    this.checkOpen("idle 'interrupt'");
    if (!this.interruptCapable) throw noInterrupts(this);
    const setup = () => this.setupInterrupts();
    const line = this.handle.interruptLine(setup);
    if (line === null) {
      throw needsVfio(this.address);
    }
    return line;
  }

  // The lines a loop over RX queue `queue` (undefined: over all of them) sleeps on: the
  // device's one line, which all its queues raise. A device with a line per queue (AF_XDP)
  // gives that queue's, or all of them.
  interruptLines(_queue) {
    return [this.interrupts()];
  }

  // Whether idle 'interrupt' works here (the default then, lib/device/idle.js bestIdle()).
  hasInterrupts() {
    return this.interruptCapable && !this.closed && this.handle.canInterrupt();
  }

  setupInterrupts() {}

  armInterrupt() {}

  disarmInterrupt() {}

  // Subclasses override these. Each returns its running total, accumulated from the
  // device's counters: frames dropped for want of room (descriptors, packet buffer), and
  // broken frames (bad FCS, wrong size) the device dropped before they reached a ring.
  readMissed() {
    return 0;
  }

  readErrors() {
    return 0;
  }

  // For long-running loops, about once a second (cold): a line for each event worth
  // telling (link changes, a TX hang), each also emitted as an event; throws EDEVICELOST,
  // emitted once as 'lost', when the device is gone.
  check() {
    return this.checkEvents().map((e) => e.text);
  }

  // check() as the events themselves: [{ type, text, ... }], each also emitted.
  checkEvents() {
    let events;
    try {
      events = this.deviceEvents();
    } catch (err) {
      if (err.code === 'EDEVICELOST' && !this.lostTold) {
        this.lostTold = true;
        this.emit('lost', err);
      }
      throw err;
    }
    for (const e of events) this.emit(e.type, e);
    return events;
  }

  // What changed since the last look: [{ type, text, ... }]. A driver that can tell overrides it.
  deviceEvents() {
    return [];
  }

  // The watcher's tick: stops once the device is closed or lost.
  watchOnce() {
    if (!this.closed) {
      try {
        this.check();
        return;
      } catch {
        // EDEVICELOST went out as 'lost'; a device that is gone has nothing more to tell.
      }
    }
    clearInterval(this.watcher);
  }

  get mac() {
    throw new Error('not implemented');
  }

  get linkSpeed() {
    return 0;
  }
}

// One compare per batch, not per packet: what else would be read as a batch writes
// buffer ids where they do not belong.
function notABatch(method, batch) {
  return new IxyError('EINVAL', `${method}(queue, batch) takes a PacketBatch, got ${shown(batch)}`);
}

module.exports = { Device, Queue, PACKETS, BYTES };
