'use strict';

// The UMEM: the frame memory AF_XDP sockets share with the kernel, managed as a Mempool.
// Chunk k of the UMEM is buffer id k. The kernel writes a received frame XDP_PACKET_HEADROOM
// (256) bytes into its chunk (and reads a frame to send wherever its descriptor says), so
// the pool's views start 256 bytes into the memory: buffer id's bytes, frame first, are
// bytes[(id << bufferShift) ...] as on every ixy NIC, and a descriptor's address is
// id * chunk + FRAME_OFFSET. A frame may have chunk - 256 bytes (bufferSize says so).
//
// Every AF_XDP socket of a thread shares one UMEM (XDP_SHARED_UMEM), so that a frame
// received on one interface goes out of another as the same buffer id: `ixy forward
// xdp:a xdp:b` copies nothing. The first socket registers it; those after name any live
// socket of the group. The UMEM's memory goes when its last socket has closed.
const { Mempool, DmaMemory } = require('../memory/mempool');
const { native } = require('../host/native');
const { words } = require('../memory/arena');
const { IxyError } = require('../host/errors');

const FRAME_OFFSET = 256; // XDP_PACKET_HEADROOM (include/linux/bpf.h... netdevice.h)
const CHUNK = 2048; // a power of two from 2048 to the page size (aligned chunk mode)

// Plain pages, for a machine without hugepages: the kernel pins them all the same (a UMEM
// needs no physical addresses), only the TLB misses more often.
class PlainMemory {
  constructor(size) {
    this.buffer = native().xdpAllocPlain(size);
    this.size = size;
    this.hugepages = false;
  }

  physOf() {
    return 0;
  }

  free() {
    if (this.buffer !== null) native().free(this.buffer);
    this.buffer = null;
  }
}

// Hugepages where there are, plain pages otherwise.
function umemMemory(bytes) {
  try {
    return new DmaMemory(bytes);
  } catch (err) {
    if (err.code !== 'ENOHUGEPAGES' && err.code !== 'ENOHUGETLBFS') throw err;
    return new PlainMemory(bytes);
  }
}

class Umem extends Mempool {
  // entries buffers; one more chunk is taken and kept off the free stack, so that the last
  // buffer's view (which ends FRAME_OFFSET bytes into the chunk after its own) stays inside.
  constructor(entries) {
    super({ entries: entries + 1, bufferSize: CHUNK, debug: false, memory: umemMemory((entries + 1) * CHUNK) });
    const buffer = this.memory.buffer;
    this.chunk = CHUNK;
    this.bytes = new Uint8Array(buffer, FRAME_OFFSET, entries * CHUNK);
    for (let i = 0; i <= entries; i++) this.buffers[i] = i < entries ? new Uint8Array(buffer, i * CHUNK + FRAME_OFFSET, CHUNK - FRAME_OFFSET) : null;
    // The stack holds ids entries..0 from its bottom: the reserved chunk (id `entries`) is
    // at the bottom, so dropping it is a shift by one.
    words.copyWithin(this.freeAt, this.freeAt + 1, this.freeAt + entries + 1);
    this.freeCount = entries;
    this.entries = entries;
    this.bufferSize = CHUNK - FRAME_OFFSET; // the longest frame a buffer takes
    this.sockets = new Set(); // fds of the live sockets over this UMEM
  }

  // For XDP_UMEM_REG: all of the memory, in whole pages.
  get region() {
    return this.memory.buffer;
  }
}

let shared = null; // this thread's UMEM, while a socket uses it

// The thread's UMEM, made with `entries` buffers if there is none yet. Returns it and the fd
// of a socket to share it with (-1: the caller's socket registers it).
function acquireUmem(entries) {
  if (shared === null || shared.memory.buffer === null) shared = new Umem(entries);
  const first = shared.sockets.values().next();
  return { umem: shared, sharedFd: first.done ? -1 : first.value };
}

function addSocket(umem, fd) {
  umem.sockets.add(fd);
}

// A socket of the UMEM has closed; the last one takes the memory with it.
function removeSocket(umem, fd) {
  umem.sockets.delete(fd);
  if (umem.sockets.size === 0) {
    umem.close();
    if (shared === umem) shared = null;
  }
}

// Throws ENOMEM unless the UMEM has `n` free buffers for a new socket's fill ring.
function checkRoom(umem, n, iface) {
  if (umem.freeCount < n) {
    throw new IxyError('ENOMEM', `${iface}: the shared UMEM has ${umem.freeCount} free buffers, a socket needs ${n}: open the first xdp: interface with a larger { mempoolEntries } (it was ${umem.entries})`);
  }
}

module.exports = { Umem, FRAME_OFFSET, CHUNK, acquireUmem, addSocket, removeSocket, checkRoom };
