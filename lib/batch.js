'use strict';

// A batch of packets moving between an application and a queue: buffer ids, their
// lengths and a count, in arrays made once and reused for every call. All buffers of a
// batch belong to one mempool (`pool`), so freeing never needs a per-packet lookup.
// ids, lengths and status are spans of the index arena (arena.js): the queues read and
// write them at their offsets idsAt, lengthsAt and statusAt.
const { IxyError } = require('./errors');
const arena = require('./arena');
const { RXD_STAT_UDPCS, RXD_STAT_L4CS, RXD_STAT_IPCS } = require('./advanced/rings');

// What checksumOf(i) reports, bit by bit. Neither bit of a pair: not checked (not IPv4,
// not TCP/UDP, a UDP frame sent without a checksum, or a NIC that does not check).
const CHECKSUM_IP_GOOD = 1;
const CHECKSUM_IP_BAD = 2;
const CHECKSUM_L4_GOOD = 4;
const CHECKSUM_L4_BAD = 8;

const MAX_BATCH = 4096;

class PacketBatch {
  // status: keep each received frame's descriptor status word, for checksumOf(). Off by
  // default: it costs a pass over the frames in every receive.
  // hashes: keep each received frame's RSS hash (see `hashes` below).
  constructor(capacity = 32, pool = null, { status = false, hashes = false } = {}) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_BATCH) {
      throw new IxyError('EBATCH', `batch size must be 1..${MAX_BATCH}, got ${capacity}`);
    }
    this.capacity = capacity;
    this.ids = arena.allocWords(capacity);
    this.lengths = arena.allocWords(capacity);
    // With `status`: per received frame, the status word of its RX descriptor (extended
    // status and errors, as the NIC wrote it); statusLayout names its bits. Read it with
    // checksumOf(). Without: null, and statusAt -1.
    this.status = status ? arena.allocWords(capacity) : null;
    this.idsAt = arena.offsetOf(this.ids);
    this.lengthsAt = arena.offsetOf(this.lengths);
    this.statusAt = status ? arena.offsetOf(this.status) : -1;
    // With `hashes`: per received frame, the RSS hash the NIC computed (82599 7.1.2.8:
    // Toeplitz over the IPv4 addresses and TCP/UDP ports), 0 for frames it does not hash
    // and on a device opened with one RX queue (no RSS). Without: null, and hashesAt -1.
    this.hashes = hashes ? arena.allocWords(capacity) : null;
    this.hashesAt = hashes ? arena.offsetOf(this.hashes) : -1;
    this.statusLayout = null;
    this.count = 0;
    // How many of the first packets the last Device.txBatch() handed to the NIC: those are
    // the driver's now, ids[sent..count) are still the caller's (see release()).
    this.sent = 0;
    this.pool = pool;
  }

  // The bytes of packet i (a view over the whole buffer; the frame is the first lengths[i]).
  data(i) {
    return this.pool.buffers[this.ids[i]];
  }

  // The NIC's verdict on received frame i's checksums: CHECKSUM_* bits (0: nothing
  // checked). Frames with wrong checksums are delivered like any other: this is how to
  // tell them apart. Per frame and cold: nothing in receive() decodes it.
  checksumOf(i) {
    if (this.status === null) {
      throw new IxyError('EINVAL', 'checksumOf() needs a batch that keeps status words: new PacketBatch(n, null, { status: true })');
    }
    const R = this.statusLayout;
    if (R === null || !Number.isInteger(i) || i < 0 || i >= this.count) return 0;
    const s = this.status[i];
    let flags = 0;
    if ((s & RXD_STAT_IPCS) !== 0) flags |= (s & R.RXD_ERR_IPE) !== 0 ? CHECKSUM_IP_BAD : CHECKSUM_IP_GOOD;
    if ((s & RXD_STAT_L4CS) !== 0) {
      const bad = (s & R.RXD_ERR_L4E) !== 0;
      // 82599 erratum: a UDP frame sent without a checksum (field 0, allowed over IPv4 by
      // RFC 768) may be flagged L4E. Linux's ixgbe and DPDK ignore L4E for those; so do we.
      const unchecked = bad && (s & RXD_STAT_UDPCS) !== 0 && udpChecksumField(this.data(i), this.lengths[i]) === 0;
      if (!unchecked) flags |= bad ? CHECKSUM_L4_BAD : CHECKSUM_L4_GOOD;
    }
    return flags;
  }

  // Throws EINVAL, before anything is sent, unless every frame of the batch is one the NIC
  // may be given: count within the capacity, each id a buffer of the batch's pool (any
  // other id makes the NIC read memory outside it) and each length within [minLength,
  // the buffer size] (the NIC would read past the buffer, or refuse the frame).
  checkForSend(minLength) {
    const count = this.count;
    if (count > this.capacity) throw unsendable(`batch count ${count} is above its capacity ${this.capacity}`);
    if (count === 0) return;
    const pool = this.pool;
    if (pool === null) throw unsendable('the batch has frames but no pool');
    // The arena at the spans' offsets, as the queues read them; one unsigned compare
    // covers both ends of the length range.
    const words = arena.words;
    const idsAt = this.idsAt;
    const lengthsAt = this.lengthsAt;
    const entries = pool.entries;
    const span = pool.bufferSize - minLength;
    for (let k = 0; k < count; k++) {
      if (words[idsAt + k] >= entries || ((words[lengthsAt + k] - minLength) | 0) >>> 0 > span) {
        const id = words[idsAt + k];
        if (id >= entries) {
          throw unsendable(`frame ${k} of the batch is buffer ${id}, which is not in the batch's pool (0..${entries - 1})`);
        }
        throw unsendable(`frame ${k} of the batch is ${words[lengthsAt + k]} bytes; a frame must be ${minLength}..${pool.bufferSize} bytes (the buffer size)`);
      }
    }
  }

  // Gives packets [from, count) back to their pool and empties the batch.
  freeFrom(from = 0) {
    if (from < this.count) this.pool.freeMany(this.ids, from, this.count);
    this.count = 0;
  }

  // Gives back every buffer the batch still owns, ids[sent..count), and empties it: what
  // to call when done with a received batch, whether or not part of it was sent.
  release() {
    this.freeFrom(this.sent);
    this.sent = 0;
  }
}

function unsendable(text) {
  return new IxyError('EINVAL', `${text}: nothing was sent`);
}

// The UDP checksum field of an IPv4 frame (Ethernet header of 14 bytes), or -1.
function udpChecksumField(b, length) {
  const at = 14 + (b[14] & 0x0f) * 4 + 6;
  return at + 2 <= length ? (b[at] << 8) | b[at + 1] : -1;
}

module.exports = { PacketBatch, CHECKSUM_IP_GOOD, CHECKSUM_IP_BAD, CHECKSUM_L4_GOOD, CHECKSUM_L4_BAD };
