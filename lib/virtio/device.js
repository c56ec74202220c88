'use strict';

// The virtio-net driver: legacy and transitional devices (1af4:1000) through the I/O BAR,
// modern ones (1af4:1041) through PCI capabilities and memory BARs; the same queues and
// batch API on top of both. Initialisation follows virtio 1.1, 3.1.1 (and 3.1.2 for
// legacy); the network specifics follow 5.1. One queue pair, or several where the device
// offers multiqueue, spread by its RSS where it offers that (rss.js).
const C = require('./constants');
const { Device } = require('../device/device');
const { Mempool } = require('../memory/mempool');
const { IxyError, shown } = require('../host/errors');
const { checkOptionNames } = require('../host/option-names');
const { sleep } = require('../host/register-access');
const { LegacyTransport } = require('./legacy-transport');
const { ModernTransport } = require('./modern-transport');
const { Virtqueue } = require('./virtqueue');
const { VirtioRxQueue } = require('./rx-queue');
const { VirtioTxQueue } = require('./tx-queue');
const { VirtioCtrlQueue } = require('./ctrl-queue');
const { configureSteering } = require('./rss');

const LEGACY_DEVICE_ID = 0x1000;
const bit = (n) => 1n << BigInt(n);

// What we accept when offered: MAC and link status in the config, the control queue for
// promiscuous mode, ANY_LAYOUT (some hypervisors, VirtualBox among them, misbehave without
// it), VERSION_1 (required of modern devices) and ACCESS_PLATFORM (a device behind an IOMMU
// refuses a driver without it: the addresses we give are what the IOMMU maps, through VFIO,
// or physical ones where it passes them through). Nothing else: no offloads, no mergeable
// buffers, no event index, no indirect descriptors.
const WANTED = bit(C.NET_F_MAC) | bit(C.NET_F_STATUS) | bit(C.NET_F_CTRL_VQ) | bit(C.NET_F_CTRL_RX) |
  bit(C.F_ANY_LAYOUT) | bit(C.F_VERSION_1) | bit(C.F_ACCESS_PLATFORM);
// ... and with more than one queue pair: multiqueue, RSS and hash reports (rss.js).
const WANTED_MULTIQUEUE = bit(C.NET_F_MQ) | bit(C.NET_F_RSS) | bit(C.NET_F_HASH_REPORT);

const DEFAULTS = {
  force: false, // take the NIC even while its kernel interface is in use (lib/host/iface.js)
  rxQueues: 1,
  txQueues: 1,
  mempoolEntries: 4096,
  bufferSize: 2048,
  promiscuous: true,
  linkTimeout: 10000,
  debug: undefined, // buffer ownership checks in its pools (lib/memory/ownership-checks.js); undefined: IXY_DEBUG_BUFFERS
  signal: null, // an AbortSignal: once aborted, the link wait gives up (EABORTED)
};

// virtio-net reports no link speed without VIRTIO_NET_F_SPEED_DUPLEX (which QEMU leaves
// unset by default); a link that is up reports this nominal figure.
const NOMINAL_SPEED = 10000;

class VirtioDevice extends Device {
  // device: its handle (lib/host/device-handle.js) or its address.
  constructor(device, options = {}) {
    super(device, 'virtio');
    const handle = this.handle;
    checkOptionNames('open()', options, [...Object.keys(DEFAULTS), 'idle', 'idleRate']);
    this.options = { ...DEFAULTS, ...options };
    // Queue pairs: as many as the larger of rxQueues and txQueues (at least one; more need
    // VIRTIO_NET_F_MQ). 0 hides a direction from the user (`ixy pcap` only receives); the
    // device still gets both virtqueues of every pair.
    for (const key of ['rxQueues', 'txQueues']) {
      const n = this.options[key];
      if (!Number.isInteger(n) || n < 0 || n > C.NET_CTRL_MQ_VQ_PAIRS_MAX) {
        throw new IxyError('EINVAL', `${key} must be an integer from 0 to ${C.NET_CTRL_MQ_VQ_PAIRS_MAX} for virtio, got ${shown(n)}`);
      }
    }
    this.pairs = Math.max(this.options.rxQueues, this.options.txQueues, 1);
    handle.take({ force: this.options.force }); // one owner from here; close() lets go
    try {
      this.transport = handle.id.device === LEGACY_DEVICE_ID ? new LegacyTransport(handle) : new ModernTransport(handle);
    } catch (err) {
      handle.close();
      throw err;
    }
    this.interruptCapable = this.transport.kind === 'modern'; // MSI-X vector 0 for RX
    this.pools = [];
    this.rxRings = []; // every pair's receive queue, shown to the user or not (rxQueues)
    this.txRings = [];
    this.ctrl = null;
    try {
      // Every way out of the process stops the device from here on (lib/host/exit-guard.js):
      // stop() resets it on 'exit'; a fatal signal clears Bus Master alone (no registers).
      handle.guard(this);
      // QEMU's legacy device enables bus mastering by itself on ACK|DRIVER; others do not.
      handle.enableBusMastering();
      this.init();
    } catch (err) {
      try {
        this.close();
      } catch {
        // the first error is the one that says what went wrong
      }
      throw err;
    }
  }

  static async open(device, options = {}) {
    const dev = new VirtioDevice(device, options);
    const address = dev.address;
    try {
      const deadline = Date.now() + dev.options.linkTimeout;
      while (dev.linkSpeed === 0) {
        if (dev.options.signal && dev.options.signal.aborted) throw new IxyError('EABORTED', `stopped while waiting for link on ${address}`);
        if (Date.now() > deadline) throw new IxyError('ELINKTIMEOUT', `link on ${address} did not come up within ${dev.options.linkTimeout / 1000} s`);
        await sleep(10);
      }
    } catch (err) {
      dev.close();
      throw err;
    }
    return dev;
  }

  // 3.1.1 Driver Requirements: Device Initialization, step by step.
  init() {
    const t = this.transport;
    t.reset(); // 1. reset
    t.status = C.STATUS_ACKNOWLEDGE; // 2. we noticed the device
    t.status = C.STATUS_ACKNOWLEDGE | C.STATUS_DRIVER; // 3. we can drive it
    this.negotiate(); // 4.-6. features
    // 5.1.6 (1.2): the header grows by the hash report with VIRTIO_NET_F_HASH_REPORT.
    this.headerBytes = this.has(C.NET_F_HASH_REPORT) ? C.NET_HDR_HASH : this.has(C.F_VERSION_1) ? C.NET_HDR_MODERN : C.NET_HDR_LEGACY;
    this.setupQueues(); // 7. device-specific setup
    for (const rx of this.rxRings) rx.fill(); // 5.1.6.3: receive buffers before DRIVER_OK is allowed
    t.status |= C.STATUS_DRIVER_OK; // 8. live
    if (t.status & C.STATUS_DEVICE_NEEDS_RESET) throw new IxyError('EIO', `virtio device ${this.address} needs a reset after initialisation`);
    for (const rx of this.rxRings) rx.notify(); // the device may now look at the buffers
    // 1.2 5.1.6.5.5: pairs beyond the first are used once the control queue says so.
    if (this.multiqueue) configureSteering(this, this.options.rxQueues, this.pairs);
    if (this.ctrl !== null) this.promiscuous = this.options.promiscuous;
  }

  // 3.1.1 steps 4-6 (2.2 Feature Bits): take the offered subset of WANTED (and, for more
  // than one queue pair, of WANTED_MULTIQUEUE: those need VIRTIO_NET_F_MQ or
  // VIRTIO_NET_F_RSS, and the control queue that sets them up); modern devices must
  // confirm with FEATURES_OK.
  negotiate() {
    const t = this.transport;
    const offered = t.deviceFeatures();
    if (t.kind === 'modern' && (offered & bit(C.F_VERSION_1)) === 0n) {
      throw new IxyError('EUNSUPPORTED', `virtio device ${this.address} does not offer VIRTIO_F_VERSION_1`);
    }
    this.features = offered & (this.pairs > 1 ? WANTED | WANTED_MULTIQUEUE : WANTED);
    this.multiqueue = this.has(C.NET_F_MQ) || this.has(C.NET_F_RSS);
    if (this.pairs > 1 && (!this.multiqueue || !this.has(C.NET_F_CTRL_VQ))) {
      const o = this.options;
      throw new IxyError('EUNSUPPORTED', `virtio device ${this.address} (${t.kind}) offers no multiqueue (VIRTIO_NET_F_MQ with a control queue): rxQueues ${o.rxQueues} and txQueues ${o.txQueues} need ${this.pairs} queue pairs, it has 1`);
    }
    t.setDriverFeatures(this.features);
    if (t.needsFeaturesOk) {
      t.status |= C.STATUS_FEATURES_OK;
      if ((t.status & C.STATUS_FEATURES_OK) === 0) {
        t.status |= C.STATUS_FAILED;
        throw new IxyError('EUNSUPPORTED', `virtio device ${this.address} rejected the features ixy needs`);
      }
    }
  }

  // idle 'interrupt' (lib/device/device.js interrupts()): the receive queue of a modern device has
  // MSI-X vector 0 from the start (ModernTransport.activateQueue), so nothing is set up
  // here; a legacy device has no MSI-X vectors of ours (interruptCapable false).
  //
  // 2.6.7 Used Buffer Notification Suppression: the device interrupts after using a
  // receive buffer only while AVAIL_F_NO_INTERRUPT is clear.
  armInterrupt() {
    for (const rx of this.rxRings) rx.vq.avail[0] = 0;
  }

  disarmInterrupt() {
    for (const rx of this.rxRings) rx.vq.avail[0] = C.AVAIL_F_NO_INTERRUPT;
  }

  has(feature) {
    return (this.features & bit(feature)) !== 0n;
  }

  // 4.1.5.1.3 Virtqueue Configuration, for receiveq(i) and transmitq(i) of every pair in
  // use and the control queue (5.1.2: after the device's last pair with multiqueue). Each
  // receive queue has its own mempool; they all raise MSI-X vector 0.
  setupQueues() {
    const t = this.transport;
    const o = this.options;
    const maxPairs = this.multiqueue ? t.readConfig16(C.NET_CONFIG_MAX_VIRTQUEUE_PAIRS) : 1;
    if (this.pairs > maxPairs) {
      throw new IxyError('EUNSUPPORTED', `virtio device ${this.address} has ${maxPairs} queue pairs (max_virtqueue_pairs); rxQueues ${o.rxQueues} and txQueues ${o.txQueues} need ${this.pairs}`);
    }
    const vq = (index, vector) => {
      const size = t.queueSize(index);
      if (size === 0) throw new IxyError('EUNSUPPORTED', `virtio device ${this.address} has no queue ${index}`);
      const ring = new Virtqueue(size);
      t.activateQueue(index, ring, vector);
      return ring;
    };
    for (let i = 0; i < this.pairs; i++) {
      const pool = new Mempool({ entries: o.mempoolEntries, bufferSize: o.bufferSize, debug: o.debug });
      this.pools.push(pool);
      const rx = new VirtioRxQueue(vq(2 * i, 0), pool, this.headerBytes, t.notifier(2 * i));
      this.rxRings.push(rx);
      const tx = new VirtioTxQueue(vq(2 * i + 1, C.NO_VECTOR), this.headerBytes, t.notifier(2 * i + 1));
      this.txRings.push(tx);
      tx.prepare();
      if (i < o.rxQueues) this.rxQueues.push(rx);
      if (i < o.txQueues) this.txQueues.push(tx);
    }
    if (this.has(C.NET_F_CTRL_VQ)) {
      const index = this.multiqueue ? 2 * maxPairs : C.CTRL_QUEUE_SINGLE_PAIR;
      this.ctrl = new VirtioCtrlQueue(vq(index, C.NO_VECTOR), t.notifier(index));
    }
  }

  // 5.1.4: the MAC from the device config (VIRTIO_NET_F_MAC).
  get mac() {
    this.checkOpen('mac');
    if (!this.has(C.NET_F_MAC)) return '00:00:00:00:00:00';
    const bytes = [];
    for (let i = 0; i < 6; i++) bytes.push(this.transport.readConfig8(C.NET_CONFIG_MAC + i));
    return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
  }

  // 5.1.4: link status where the device reports it (VIRTIO_NET_F_STATUS), else up.
  get linkSpeed() {
    this.checkOpen('linkSpeed');
    if (!this.has(C.NET_F_STATUS)) return NOMINAL_SPEED;
    return (this.transport.readConfig16(C.NET_CONFIG_STATUS) & C.NET_S_LINK_UP) ? NOMINAL_SPEED : 0;
  }

  // 5.1.6.5.1 Packet Receive Filtering: promiscuous and all-multicast together, as on the
  // Intel NICs. Needs VIRTIO_NET_F_CTRL_RX; QEMU's device starts promiscuous.
  get promiscuous() {
    this.checkOpen('promiscuous');
    return this.promiscuousOn === true;
  }

  set promiscuous(on) {
    this.checkOpen('promiscuous');
    if (this.ctrl === null || !this.has(C.NET_F_CTRL_RX)) {
      throw new IxyError('EUNSUPPORTED', `virtio device ${this.address} has no control queue for receive filtering`);
    }
    this.ctrl.command(C.NET_CTRL_RX, C.NET_CTRL_RX_PROMISC, on ? 1 : 0, 'promiscuous mode');
    this.ctrl.command(C.NET_CTRL_RX, C.NET_CTRL_RX_ALLMULTI, on ? 1 : 0, 'all-multicast mode');
    this.promiscuousOn = on;
  }

  // Lets TX drain briefly, then resets the device: after a reset it touches no more memory.
  stop() {
    if (this.stopped || !this.transport) return;
    this.stopped = true;
    const deadline = Date.now() + 100;
    while (this.txRings.some((tx) => !tx.drained()) && Date.now() < deadline) { /* spin */ }
    try {
      this.transport.reset();
    } catch {
      // a device that does not reset is released anyway
    }
  }

  close() {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    // Bus Master off before memory goes back (PCI 3.0, 6.2.2), and out of the exit guard,
    // as for the Intel NICs (lib/intel/nic.js).
    const busMasterError = this.handle.stopGuard(this);
    for (const tx of this.txRings) tx.close();
    for (const rx of this.rxRings) rx.close();
    this.forgetQueues();
    if (this.ctrl) this.ctrl.close();
    for (const pool of this.pools) pool.close();
    if (this.transport) this.transport.close();
    this.transport = null;
    this.handle.close();
    if (busMasterError) throw busMasterError;
  }
}

module.exports = { VirtioDevice, DEFAULTS };
