'use strict';

// The options open() takes for ixgbe and igb, their defaults, and the checks that turn a
// wrong one into one EINVAL line before anything touches the device (lib/intel/nic.js).
const { IxyError, shown, checkInteger } = require('../host/errors');
const { checkOptionNames } = require('../host/option-names');

const DEFAULTS = {
  force: false, // take the NIC even while its kernel interface is in use (lib/host/iface.js)
  rxQueues: 1,
  txQueues: 1,
  rxRingSize: 512,
  rxFreeThreshold: null, // descriptors per RDT write; null: a quarter of the RX ring
  // SRRCTL.DROP_EN: an RX queue without a free descriptor drops its frames at once, instead
  // of holding them (and every queue's frames behind them) in the packet buffer. null: the
  // driver's choice (dropWhenFullDefault()).
  rxDropWhenFull: null,
  txRingSize: 512,
  mempoolEntries: null, // per RX queue; null: 4096, or twice the RX ring if that is more
  bufferSize: 2048,
  promiscuous: true,
  linkTimeout: 10000, // ms
  debug: undefined, // buffer ownership checks in its pools (lib/memory/ownership-checks.js); undefined: IXY_DEBUG_BUFFERS
  // The queues belong to worker threads (lib/queue-pair.js): the device does the
  // global init and RSS, each worker attaches its queue pair with workerHandle().
  workers: false,
  // RSS (with rxQueues above 1): the 40-byte Toeplitz key, a Buffer or Uint8Array; null:
  // the driver's default key.
  rssKey: null,
  signal: null, // an AbortSignal: once aborted, the link wait gives up (EABORTED)
};

// What open() takes for ixgbe and igb: DEFAULTS, and the idle mode and rate open() itself reads.
const OPTION_NAMES = [...Object.keys(DEFAULTS), 'idle', 'idleRate'];

// The RSS key's length: the ten 32-bit RSSRK registers of the 82599 (8.2.3.7) and of the 82576.
const RSS_KEY_BYTES = 40;

// The options, checked, with every one left out (or given as undefined) set to its
// default. maxQueues and maxRingSize are the NIC's; rxQueueLimit, where RX queues are
// fewer than TX queues: { max, why } (why: the reason, in the message).
function nicOptions(options, maxQueues, maxRingSize, rxQueueLimit = null) {
  checkOptionNames('open()', options, OPTION_NAMES);
  const o = withDefaults(DEFAULTS, options);
  checkOptions(o, maxQueues, maxRingSize);
  if (rxQueueLimit !== null) checkInteger('rxQueues', o.rxQueues, 0, rxQueueLimit.max, rxQueueLimit.why);
  o.rssKey = checkRssKey(o.rssKey);
  return o;
}

// The key as a copy (a caller's later change to its array changes nothing), or null.
function checkRssKey(key) {
  if (key === null) return null;
  if (!(key instanceof Uint8Array) || key.length !== RSS_KEY_BYTES) {
    const what = key instanceof Uint8Array ? `${key.length} bytes` : shown(key);
    throw new IxyError('EINVAL', `rssKey must be a Buffer or Uint8Array of ${RSS_KEY_BYTES} bytes (the NIC's Toeplitz key), got ${what}`);
  }
  return Buffer.from(key);
}

function withDefaults(defaults, options) {
  const o = { ...defaults };
  for (const [key, value] of Object.entries(options)) if (value !== undefined) o[key] = value;
  return o;
}

// Ring lengths must be multiples of 128 bytes (8 descriptors); powers of two also let
// indices wrap with a mask. For open() and for a worker's queue pair alike.
function checkRingSize(key, n, maxRingSize) {
  checkInteger(key, n, 64, maxRingSize);
  if ((n & (n - 1)) !== 0) {
    throw new IxyError('EINVAL', `${key} must be a power of two from 64 to ${maxRingSize}, got ${n}`);
  }
}

function checkOptions(o, maxQueues, maxRingSize) {
  for (const key of ['rxQueues', 'txQueues']) checkInteger(key, o[key], 0, maxQueues);
  for (const key of ['rxRingSize', 'txRingSize']) checkRingSize(key, o[key], maxRingSize);
  // SRRCTL.BSIZEPACKET gives the receive buffer size in KiB, 1..16 (0 is not allowed:
  // 82599 8.2.3.8.7, and likewise on the 82576); mempool buffers are powers of two.
  const size = o.bufferSize;
  if (!Number.isInteger(size) || size < 1024 || size > 16384 || (size & (size - 1)) !== 0) {
    throw new IxyError('EINVAL', `bufferSize must be 1024, 2048, 4096, 8192 or 16384 bytes (the NIC's receive buffer sizes), got ${shown(size)}`);
  }
  checkInteger('linkTimeout (ms)', o.linkTimeout, 0, 2 ** 31 - 1);
  if (typeof o.workers !== 'boolean') {
    throw new IxyError('EINVAL', `workers must be true or false, got ${shown(o.workers)}`);
  }
  if (o.rxDropWhenFull === null) o.rxDropWhenFull = dropWhenFullDefault(o.rxQueues, o.workers);
  if (typeof o.rxDropWhenFull !== 'boolean') {
    throw new IxyError('EINVAL', `rxDropWhenFull must be true or false, got ${shown(o.rxDropWhenFull)}`);
  }
  if (typeof o.promiscuous !== 'boolean') {
    throw new IxyError('EINVAL', `promiscuous must be true or false, got ${shown(o.promiscuous)}`);
  }
  // Every RX descriptor holds a buffer of the queue's pool, and receive() hands out a frame
  // only when it has a fresh buffer to put in its place: a pool no bigger than the ring
  // would receive one ring's worth and then nothing, ever. Half the pool for the ring, the
  // rest for frames in flight (a forwarder's other TX ring, the application's batches).
  if (o.mempoolEntries === null) o.mempoolEntries = Math.max(4096, 2 * o.rxRingSize);
  if (!Number.isInteger(o.mempoolEntries) || o.mempoolEntries < 2 * o.rxRingSize) {
    throw new IxyError('EINVAL', `mempoolEntries must be at least twice rxRingSize (${2 * o.rxRingSize}): the ring holds ${o.rxRingSize} buffers, and as many must be free for frames in flight; got ${shown(o.mempoolEntries)}`);
  }
  // See RxQueue: the NIC keeps at least half the ring whatever the threshold.
  const half = o.rxRingSize / 2;
  if (o.rxFreeThreshold === null) o.rxFreeThreshold = o.rxRingSize / 4;
  checkInteger('rxFreeThreshold', o.rxFreeThreshold, 1, half, ' (half the RX ring)');
}

// SRRCTL.DROP_EN when open() was not told. Queues of worker threads hold what they cannot
// take in the packet buffer, as one queue does (and DPDK's default): a worker that loses its
// core for a few ms then loses no frame while the buffer lasts (512 KiB, 6,600 frames of 64
// bytes), where a queue that drops at once has only its ring (384 armed descriptors, 0.4 ms
// at 1 Mpps); the cost is that a stalled worker holds up the others' frames behind its own.
// Several queues polled by one thread drop at once, as Linux's ixgbe sets them.
function dropWhenFullDefault(rxQueues, workers) {
  return !workers && rxQueues > 1;
}

module.exports = { nicOptions, checkRingSize, dropWhenFullDefault };
