'use strict';

// A kernel network interface through AF_XDP (`xdp:<ifname>[@queue]`): the kernel keeps the
// NIC, and the queues ixy opens send their frames to ixy's sockets instead of the kernel's
// stack. Behind the same Device API as ixy's own drivers: rxQueues/txQueues with receive()
// and send(), batches of buffer ids of one Mempool (the thread's UMEM, umem.js).
//
// Open: the interface's XDP program (program.js: native XDP where the driver has it, else
// generic), then per queue a socket (socket.js) with its fill ring filled, then its
// XSKMAP entry, from which moment the queue's frames come to ixy. Close: the reverse.
const { Device } = require('../device/device');
const { makePairCounts, addPairCounts } = require('../intel/pair-counts');
const { IxyError, shown, checkInteger } = require('../host/errors');
const { checkOptionNames, checkOptionsObject } = require('../host/option-names');
const { native } = require('../host/native');
const { parseName, describe, linkSpeed } = require('./iface');
const { attach, detach } = require('./program');
const { openSocket, closeSocket } = require('./socket');
const { XdpRxQueue } = require('./rx-queue');
const { XdpTxQueue } = require('./tx-queue');
const { xdpError } = require('./errors');
const { RING_SIZE, MEMPOOL_ENTRIES } = require('./limits');

const DEFAULTS = {
  rxQueues: 1,
  txQueues: 1,
  mode: 'auto', // 'copy' | 'zerocopy' | 'auto': zero-copy where the driver offers it
  xdpMode: 'auto', // 'native' | 'generic' | 'auto': native XDP where the driver has it
  rxRingSize: RING_SIZE, // RX and fill ring entries
  txRingSize: RING_SIZE, // TX and completion ring entries
  mempoolEntries: MEMPOOL_ENTRIES,
  debug: undefined,
  signal: null,
  force: false,
  idle: undefined,
  idleRate: undefined,
  linkTimeout: undefined,
  workers: false, // the queues are bound by worker threads (queue-pair.js), not here
  bufferSize: 2048,
  // The Intel drivers' choice between dropping at once and holding frames in the NIC's
  // packet buffer: here there is none to make. The kernel drops a frame that finds no fill
  // buffer or a full RX ring (stats().rxMissed), so true is what happens and false is
  // EUNSUPPORTED (checkDropWhenFull()).
  rxDropWhenFull: true,
};

// The options only this backend takes, with the commands' flags for them: open() refuses
// them (EUNSUPPORTED) for a device ixy drives itself (lib/open.js).
const OWN_OPTIONS = { mode: '--xdp-bind', xdpMode: '--xdp-mode' };

// What the backend cannot do, and what to use instead: one line, code EUNSUPPORTED.
const UNSUPPORTED = {
  rssKey: 'AF_XDP leaves RSS to the kernel driver: set the key with ethtool -X',
  promiscuous: 'the kernel keeps the interface\'s filters: ip link set <interface> promisc on',
  rxFreeThreshold: 'the fill ring is refilled on every receive, there is no tail to batch',
};

// The device handle Device takes (lib/host/device-handle.js), for a kernel interface: a
// name and no interrupt line of its own (the kernel keeps the NIC's interrupts; idle
// 'interrupt' sleeps on the sockets instead, XdpDevice.interrupts()).
function xdpHandle(name) {
  return { address: name, canInterrupt: () => false };
}

class XdpDevice extends Device {
  constructor(name, options = {}) {
    super(xdpHandle(name), 'af_xdp');
    checkOptionsObject('open()', options);
    for (const key of Object.keys(UNSUPPORTED)) {
      if (options[key] !== undefined && options[key] !== null) throw new IxyError('EUNSUPPORTED', `${name}: ${key}: ${UNSUPPORTED[key]}`);
    }
    if (options.bufferSize !== undefined && options.bufferSize !== 2048) {
      throw new IxyError('EUNSUPPORTED', `${name}: bufferSize: AF_XDP chunks are 2 KiB here (frames of up to 1792 bytes), got ${shown(options.bufferSize)}`);
    }
    checkOptionNames('open()', options, Object.keys(DEFAULTS));
    checkDropWhenFull(name, options.rxDropWhenFull);
    if (options.debug === true) throw new IxyError('EUNSUPPORTED', `${name}: buffer ownership checks (debug) are not available on AF_XDP: use them on the device model`);
    const o = { ...DEFAULTS };
    for (const [key, value] of Object.entries(options)) if (value !== undefined) o[key] = value; // undefined: the default
    this.options = o;
    this.pairCounts = o.workers ? makePairCounts(Math.max(o.rxQueues, o.txQueues)) : null; // what the workers moved
    if (!['auto', 'copy', 'zerocopy'].includes(o.mode)) throw new IxyError('EINVAL', `mode must be 'auto', 'copy' or 'zerocopy', got ${shown(o.mode)}`);
    if (!['auto', 'native', 'generic'].includes(o.xdpMode)) throw new IxyError('EINVAL', `xdpMode must be 'auto', 'native' or 'generic', got ${shown(o.xdpMode)}`);
    for (const key of ['rxRingSize', 'txRingSize']) {
      const size = o[key];
      if (!Number.isInteger(size) || size < 64 || size > 16384 || (size & (size - 1)) !== 0) {
        throw new IxyError('EINVAL', `${key} must be a power of two from 64 to 16384, got ${shown(size)}`);
      }
    }
    checkInteger('mempoolEntries', o.mempoolEntries, 256, 1 << 19);
    const { iface, queue } = parseName(name);
    this.iface = iface;
    this.info = describe(iface);
    this.mode = null; // 'copy' or 'zerocopy', once bound
    this.xdpMode = null; // 'native' or 'generic'
    this.queueIds = this.pickQueues(queue, o);
    this.sockets = [];
    this.rxRings = [];
    this.txRings = [];
    this.program = null;
    this.txMinLength = 14;
    this.interruptCapable = true; // each RX queue's socket is a line (interrupts())
    this.kernelFillsRings = true; // in its NAPI poll, maybe on this thread's CPU
  }

  // The interface's queues this device binds: queue (xdp:if@N), or 0..n-1 for the larger of
  // rxQueues and txQueues. The socket of queue q serves RX and TX queue q alike.
  pickQueues(queue, o) {
    const max = this.info.rxQueues;
    for (const key of ['rxQueues', 'txQueues']) checkInteger(key, o[key], 0, queue === null ? max : 1, ` (${this.iface} has ${max} RX queue${max === 1 ? '' : 's'})`);
    const n = Math.max(o.rxQueues, o.txQueues, 1);
    if (queue !== null) {
      if (queue >= max) throw new IxyError('EINVAL', `${this.iface} has no queue ${queue}: it has ${max} (0..${max - 1}; ethtool -L ${this.iface} combined N sets more)`);
      return [queue];
    }
    return Array.from({ length: n }, (_, i) => i);
  }

  init() {
    const o = this.options;
    if (o.workers) {
      for (const q of this.queueIds) this.program = attach(this.iface, this.info, q, o.xdpMode);
      this.xdpMode = this.program.mode;
      this.owners = new Int32Array(new SharedArrayBuffer(4 * this.queueIds.length));
      return;
    }
    for (const q of this.queueIds) {
      this.program = attach(this.iface, this.info, q, o.xdpMode);
      this.xdpMode = this.program.mode;
      let sock;
      try {
        sock = openSocket(this.iface, this.info.ifindex, q, o);
      } catch (err) {
        detach(this.program, q);
        throw err;
      }
      this.sockets.push(sock);
      sock.queue = q;
      this.mode = sock.zerocopy ? 'zerocopy' : 'copy';
      const rx = new XdpRxQueue(sock);
      const tx = new XdpTxQueue(sock);
      rx.fill();
      this.rxRings.push(rx);
      this.txRings.push(tx);
      const i = this.rxRings.length - 1;
      if (i < o.rxQueues) this.rxQueues.push(rx);
      if (i < o.txQueues) this.txQueues.push(tx);
      try {
        native().xdpMapSet(this.program.map, q, sock.fd);
      } catch (err) {
        throw xdpError(err, this.iface);
      }
    }
  }

  // With workers, the queue pairs' counts (lib/intel/pair-counts.js) are the device's.
  stats() {
    const s = super.stats();
    return this.pairCounts === null ? s : addPairCounts(s, this.pairCounts, this.options.rxQueues, this.options.txQueues);
  }

  // What a worker thread needs to bind queue i (ixy.attachQueue(handle, i), queue-pair.js).
  workerHandle() {
    this.checkOpen('workerHandle()');
    if (!this.options.workers) throw new IxyError('EINVAL', `${this.address} was opened without { workers: true }: its queues belong to this thread`);
    const o = this.options;
    return {
      backend: 'af_xdp', address: this.address, iface: this.iface, ifindex: this.info.ifindex, map: this.program.map,
      queueIds: this.queueIds, owners: this.owners, counts: this.pairCounts, rxQueues: o.rxQueues, txQueues: o.txQueues,
      rxRingSize: o.rxRingSize, txRingSize: o.txRingSize, mempoolEntries: o.mempoolEntries, mode: o.mode,
    };
  }

  // idle 'interrupt' (lib/device/idle.js): RX queue `queue`'s socket, readable once the
  // kernel has frames for it (XdpRxQueue.interruptLine()). The kernel raises and masks the
  // NIC's interrupts itself (NAPI), so armInterrupt() and disarmInterrupt() have nothing to
  // do: they stay Device's no-ops.
  interrupts(queue = 0) {
    this.checkOpen("idle 'interrupt'");
    if (this.options.workers) throw new IxyError('EUNSUPPORTED', `${this.address}: idle 'interrupt': the queues are the worker threads', which sleep on their own sockets (lib/loop/worker-loop.js)`);
    this.checkQueue('RX', queue, this.rxQueues.length);
    return this.rxQueues[queue].interruptLine();
  }

  // A loop over every RX queue (queue undefined) sleeps on all their sockets at once, and
  // the first with frames wakes it; receive() of one queue on that queue's alone.
  interruptLines(queue) {
    if (queue !== undefined) return [this.interrupts(queue)];
    this.checkOpen("idle 'interrupt'");
    return this.rxQueues.map((_, i) => this.interrupts(i));
  }

  // Sockets to sleep on: the default idle is 'interrupt' (bestIdle()) for a device that
  // receives here, in this thread. An idle loop then costs no CPU (backoff's timers cost a
  // few %) and wakes with the first frame; under load an empty poll waits on the sockets
  // rather than polling again (Idler.waitForFrames(); bench/PERFORMANCE.md, AF_XDP).
  hasInterrupts() {
    return !this.closed && !this.options.workers && this.rxQueues.length > 0;
  }

  get mac() {
    this.checkOpen('mac');
    return this.info.mac;
  }

  get linkSpeed() {
    this.checkOpen('linkSpeed');
    return linkSpeed(this.iface);
  }

  // The kernel's promiscuous setting, from sysfs (IFF_PROMISC); ixy leaves it as it is.
  get promiscuous() {
    return false;
  }

  set promiscuous(on) {
    throw new IxyError('EUNSUPPORTED', `${this.address}: the kernel keeps the interface's filters: ip link set ${this.iface} promisc ${on ? 'on' : 'off'}`);
  }

  // Frames the kernel could not give a socket: no fill buffer, or a full RX ring.
  readMissed() {
    let missed = 0;
    for (const s of this.sockets) {
      const st = native().xdpStats(s.fd);
      missed += st[0] + st[3] + st[4];
    }
    return missed;
  }

  // The kernel drains each TX ring briefly, then the queues leave the XSKMAP, so that the
  // kernel's stack gets their frames again.
  stop() {
    if (this.stopped) return;
    this.stopped = true;
    const deadline = Date.now() + 100;
    while (this.txRings.some((tx) => !tx.drained()) && Date.now() < deadline) { /* spin */ }
    for (const s of this.sockets) {
      try {
        native().xdpMapDelete(this.program.map, s.queue);
      } catch { /* the program goes with its link anyway */ }
    }
  }

  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    for (let i = 0; i < this.sockets.length; i++) {
      this.txRings[i].close();
      this.rxRings[i].close();
      closeSocket(this.sockets[i]);
      detach(this.program, this.sockets[i].queue);
    }
    if (this.options.workers && this.program !== null) for (const q of this.queueIds) detach(this.program, q);
    this.sockets = [];
    this.forgetQueues();
  }

  get pools() {
    return this.sockets.length ? [this.sockets[0].umem] : [];
  }
}

// rxDropWhenFull: undefined or null (the default, as for ixgbe and igb) or true (the kernel
// drops what finds the RX ring full); false asks for frames to be held, which no AF_XDP
// queue can do.
function checkDropWhenFull(name, value) {
  if (value === undefined || value === null || value === true) return;
  if (value === false) throw new IxyError('EUNSUPPORTED', `${name}: rxDropWhenFull false: the kernel drops the frames an AF_XDP queue has no fill buffer or RX ring room for, it cannot hold them; leave the option out`);
  throw new IxyError('EINVAL', `rxDropWhenFull must be true or false, got ${shown(value)}`);
}

// ixy.open('xdp:eth1'): the device, its queues bound, their frames coming to ixy, once the
// link is up (attaching a native XDP program restarts some drivers' links, veth's too).
async function openXdp(name, options = {}) {
  const dev = new XdpDevice(name, options);
  try {
    dev.init();
    const timeout = dev.options.linkTimeout === undefined ? 10000 : dev.options.linkTimeout;
    const deadline = Date.now() + timeout;
    while (dev.linkSpeed === 0) {
      const signal = dev.options.signal;
      if (signal && signal.aborted) throw new IxyError('EABORTED', `stopped while waiting for link on ${name}`);
      if (Date.now() > deadline) throw new IxyError('ELINKTIMEOUT', `link on ${name} did not come up within ${timeout / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } catch (err) {
    try {
      dev.close();
    } catch { /* the first error says what went wrong */ }
    throw err;
  }
  return dev;
}

module.exports = { XdpDevice, openXdp, DEFAULTS, OWN_OPTIONS };
