'use strict';

// Sizes the AF_XDP backend shares between its files.
const MAX_BATCH = 4096; // PacketBatch's largest capacity (lib/memory/batch.js)
const RING_SIZE = 2048; // each of the four rings' entries: the kernel's own default
const MEMPOOL_ENTRIES = 16384; // the thread's UMEM: 32 MiB of 2 KiB chunks, for several sockets

module.exports = { MAX_BATCH, RING_SIZE, MEMPOOL_ENTRIES };
