'use strict';

// Receive-side scaling on the 82599 (datasheet 7.1.2.8): the NIC hashes each IPv4 frame
// (Toeplitz over source and destination address, and TCP or UDP ports) with the 40-byte
// key in RSSRK; the hash's low 7 bits pick one of the 128 RETA entries, which names the
// RX queue. Programmed in the receive initialization (4.6.7), before RXEN, and only with
// more than one RX queue: with one, MRQC stays at its reset value and every frame goes to
// queue 0.
const R = require('./registers');
const { setReg, setBits } = require('../../host/register-access');

// The default RSS key (open()'s rssKey replaces it): the one Microsoft's RSS verification
// suite publishes (also DPDK's default), so that the hashes the NIC reports can be checked
// against published values.
const RSS_KEY = Buffer.from(
  '6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa', 'hex');

// The 82599's RETA entries name one of 16 queues (4 bits each).
const RSS_MAX_QUEUES = 16;

// Key (40 bytes; null: RSS_KEY), redirection table (queues 0..n-1 in turn; open() allows
// at most RSS_MAX_QUEUES), hash fields (IPv4 addresses; TCP and UDP ports) and RSS on in MRQC.
function setupRss(regs, queues, key = null) {
  const n = Math.min(queues, RSS_MAX_QUEUES);
  const k = key === null ? RSS_KEY : key;
  // 8.2.3.7 RSSRK: key byte 4i+j in bits 8j+7:8j of RSSRK(i).
  for (let i = 0; i < R.RSSRK_COUNT; i++) setReg(regs, R.RSSRK(i), (k[4 * i] | (k[4 * i + 1] << 8) | (k[4 * i + 2] << 16) | (k[4 * i + 3] << 24)) >>> 0);
  // 8.2.3.7 RETA: entry 4i+j in byte j of RETA(i).
  for (let i = 0; i < R.RETA_COUNT; i++) {
    let value = 0;
    for (let j = 0; j < 4; j++) value |= ((4 * i + j) % n) << (8 * j);
    setReg(regs, R.RETA(i), value);
  }
  // 8.2.3.7.5 RXCSUM.PCSD: the write-back's second dword carries the RSS hash (instead of
  // the fragment checksum), which PacketBatch's `hashes` hands out.
  setBits(regs, R.RXCSUM, R.RXCSUM_PCSD);
  // 8.2.3.7.12 MRQC: MRQE 0001b (RSS only, no DCB or pools) and the fields to hash.
  setReg(regs, R.MRQC, R.MRQC_MRQE_RSS | R.MRQC_RSS_FIELD_IPV4 | R.MRQC_RSS_FIELD_IPV4_TCP | R.MRQC_RSS_FIELD_IPV4_UDP);
}

// The queue RETA (as setupRss wrote it for `queues`) names for a hash.
function queueOfHash(hash, queues) {
  return (hash & 127) % Math.min(queues, RSS_MAX_QUEUES);
}

module.exports = { setupRss, queueOfHash, RSS_KEY, RSS_MAX_QUEUES };
