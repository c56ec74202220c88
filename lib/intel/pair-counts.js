'use strict';

// What the queue pairs of a device opened with { workers: true } moved, in one
// SharedArrayBuffer the device makes and every worker's QueuePair writes its own slot of
// (lib/queue-pair.js): the device's stats() in the main thread adds them up. Packets and
// bytes are the queues' own `totals` arrays, placed in the slot, so the hot loops count
// into shared memory as they count into their own (`totals[PACKETS] += n` per batch) and
// nothing is added per packet; drops and errors are published by the pair when it looks
// (check(), about once a second) and when it stops. One writer per slot; the main thread
// only reads (a Float64 read of an aligned word is never torn on the platforms Node runs on).
const RX_PACKETS = 0; // RX queue totals: packets, bytes (RxQueue.totals)
const TX_PACKETS = 2; // TX queue totals: packets, bytes (TxQueue.totals)
const TX_DROPPED = 4; // frames the TX queue took and the NIC never sent (TxQueue.dropped)
const RX_ERRORS = 5; // broken frames the RX queue dropped (RxQueue.errors)
const RX_DROPPED = 6; // frames the NIC dropped for want of a descriptor on the RX queue (QPRDC, RQDPC)
const FIELDS = 7;
// Pair i's slot starts at word i * SLOT: 128 bytes apart, so that two workers never write
// one cache line (nor a pair of lines the adjacent-line prefetcher fetches together).
const SLOT = 16;

// Slots for `pairs` queue pairs, all zero.
function makePairCounts(pairs) {
  return new Float64Array(new SharedArrayBuffer(8 * SLOT * pairs));
}

// The view of `length` counters of pair `index` from field `field` on.
function slotView(counts, index, field, length) {
  return new Float64Array(counts.buffer, counts.byteOffset + 8 * (index * SLOT + field), length);
}

// Adds what the first `pairs` pairs counted to stats `s` (Device.stats()'s shape), and
// gives its per-queue lists.
function addPairCounts(s, counts, rxPairs, txPairs) {
  s.rxQueues = [];
  s.txQueues = [];
  for (let i = 0; i < Math.max(rxPairs, txPairs); i++) {
    const at = i * SLOT;
    if (i < rxPairs) {
      s.rxPackets += counts[at + RX_PACKETS];
      s.rxBytes += counts[at + RX_PACKETS + 1];
      s.rxErrors += counts[at + RX_ERRORS];
      s.rxMissed += counts[at + RX_DROPPED];
      s.rxQueues.push({ packets: counts[at + RX_PACKETS], bytes: counts[at + RX_PACKETS + 1], dropped: counts[at + RX_DROPPED] });
    }
    if (i < txPairs) {
      s.txPackets += counts[at + TX_PACKETS];
      s.txBytes += counts[at + TX_PACKETS + 1];
      s.txDropped += counts[at + TX_DROPPED];
      s.txQueues.push({ packets: counts[at + TX_PACKETS], bytes: counts[at + TX_PACKETS + 1] });
    }
  }
  return s;
}

module.exports = { makePairCounts, slotView, addPairCounts, FIELDS, SLOT, RX_PACKETS, TX_PACKETS, TX_DROPPED, RX_ERRORS, RX_DROPPED };
