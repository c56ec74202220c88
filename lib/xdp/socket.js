'use strict';

// One AF_XDP socket: bound to one queue of one interface, over the thread's UMEM, with its
// four rings mapped (native/xdp.cc). A ring is a Uint32Array over its mapping, made once:
// producer and consumer are free-running u32 indexes (their difference, >>> 0, is the
// entries in flight), the descriptors follow at descAt. The side that produces writes the
// descriptors first and then the producer index with Atomics.store; the side that consumes
// reads the producer with Atomics.load before the descriptors (the kernel pairs these with
// its own acquire/release), and hands entries back with Atomics.store of the consumer.
const { native } = require('../host/native');
const { xdpError } = require('./errors');
const { acquireUmem, addSocket, removeSocket, checkRoom } = require('./umem');

const XDP_COPY = 1 << 1;
const XDP_ZEROCOPY = 1 << 2;
const XDP_USE_NEED_WAKEUP = 1 << 3;
const NEED_WAKEUP = 1; // XDP_RING_NEED_WAKEUP in a ring's flags word

class XskRing {
  constructor(ring, size) {
    this.buffer = ring.buffer;
    this.words = new Uint32Array(ring.buffer);
    this.producerAt = ring.producer / 4;
    this.consumerAt = ring.consumer / 4;
    this.flagsAt = ring.flags / 4;
    this.descAt = ring.desc / 4;
    this.size = size;
    this.mask = size - 1;
  }

  needsWakeup() {
    return (this.words[this.flagsAt] & NEED_WAKEUP) !== 0;
  }
}

// mode: 'auto' (zero-copy where the driver offers it, else copy), 'copy' or 'zerocopy'. A
// socket sharing the UMEM inherits the first socket's mode (the kernel's rule).
function openSocket(iface, ifindex, queue, { rxRingSize, txRingSize, mempoolEntries, mode }) {
  const addon = native();
  const { umem, sharedFd } = acquireUmem(mempoolEntries);
  try {
    checkRoom(umem, rxRingSize, iface);
    const tries = mode === 'auto' ? [XDP_ZEROCOPY, XDP_COPY] : [mode === 'copy' ? XDP_COPY : XDP_ZEROCOPY];
    let s = null;
    for (let i = 0; s === null; i++) {
      try {
        s = addon.xdpSocket(ifindex, queue, umem.region, umem.chunk, rxRingSize, txRingSize, tries[i] | XDP_USE_NEED_WAKEUP, sharedFd);
      } catch (err) {
        const retry = i + 1 < tries.length && (err.code === 'EOPNOTSUPP' || err.code === 'EINVAL');
        if (!retry) throw xdpError(err, iface, umem.region.byteLength);
      }
    }
    addSocket(umem, s.fd);
    return {
      fd: s.fd,
      zerocopy: s.zerocopy,
      umem,
      rx: new XskRing(s.rx, rxRingSize),
      tx: new XskRing(s.tx, txRingSize),
      fill: new XskRing(s.fill, rxRingSize),
      comp: new XskRing(s.comp, txRingSize),
    };
  } catch (err) {
    if (umem.sockets.size === 0) removeSocket(umem, -1);
    throw err;
  }
}

// Unmaps the rings and closes the socket (the kernel then stops using its buffers).
function closeSocket(sock) {
  const addon = native();
  for (const ring of [sock.rx, sock.tx, sock.fill, sock.comp]) addon.free(ring.buffer);
  addon.closeFd(sock.fd);
  removeSocket(sock.umem, sock.fd);
}

module.exports = { openSocket, closeSocket, NEED_WAKEUP };
