'use strict';

// Receive-side scaling on the Intel NICs with a register BAR (82599 datasheet 7.1.2.8,
// 82576 datasheet 7.1.2): the NIC hashes each IPv4 frame (Toeplitz over source and
// destination address, and TCP or UDP ports) with the 40-byte key in RSSRK; the hash's low
// 7 bits pick one of the 128 RETA entries, which names the RX queue. Both chips lay out key
// and table alike (one byte per key byte and per entry, four to a register, the lowest
// first) and take the same IPv4 hash-field bits in MRQC; what differs (offsets, MRQC's
// enable value) is each driver's register table, `layout`. Programmed in the receive
// initialization (82599 4.6.7, 82576 4.5.9), before receive is enabled, and only with more
// than one RX queue: with one, MRQC stays at its reset value and every frame goes to queue 0.
const { setReg, setBits } = require('../host/register-access');
const { RSS_KEY } = require('../device/rss-key');

// RETA entries name one of 16 queues: a 4-bit queue index on the 82599, and on the 82576
// with RSS alone (no VMDq) the low 4 bits of each entry (QEMU's igb reads them so too).
const RSS_MAX_QUEUES = 16;

// Key (40 bytes; null: RSS_KEY), redirection table (queues 0..n-1 in turn, over the first
// 16 when there are more), the write-back's hash, and RSS on with its hash fields
// (layout.MRQC_RSS).
function setupRss(regs, layout, queues, key = null) {
  const L = layout;
  const n = Math.min(queues, RSS_MAX_QUEUES);
  const k = key === null ? RSS_KEY : key;
  // RSSRK: key byte 4i+j in bits 8j+7:8j of RSSRK(i).
  for (let i = 0; i < L.RSSRK_COUNT; i++) setReg(regs, L.RSSRK(i), (k[4 * i] | (k[4 * i + 1] << 8) | (k[4 * i + 2] << 16) | (k[4 * i + 3] << 24)) >>> 0);
  // RETA: entry 4i+j in byte j of RETA(i).
  for (let i = 0; i < L.RETA_COUNT; i++) {
    let value = 0;
    for (let j = 0; j < 4; j++) value |= ((4 * i + j) % n) << (8 * j);
    setReg(regs, L.RETA(i), value);
  }
  // RXCSUM.PCSD: the write-back's second dword carries the RSS hash (instead of the
  // fragment checksum or IP id), which PacketBatch's `hashes` hands out. QEMU's igb
  // computes no hash at all without PCSD.
  setBits(regs, L.RXCSUM, L.RXCSUM_PCSD);
  setReg(regs, L.MRQC, L.MRQC_RSS);
}

// The queue RETA (as setupRss wrote it for `queues`) names for a hash.
function queueOfHash(hash, queues) {
  return (hash & 127) % Math.min(queues, RSS_MAX_QUEUES);
}

module.exports = { setupRss, queueOfHash, RSS_MAX_QUEUES };
