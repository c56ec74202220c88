'use strict';

// Descriptor rings of the Intel NICs with advanced descriptors (ixgbe, igb): what a
// descriptor holds, where the rings live, and how a ring is handed to the NIC.
const { DmaMemory } = require('../memory/mempool');
const { IxyError } = require('../host/errors');
const { CHECKSUM_IP_GOOD, CHECKSUM_IP_BAD, CHECKSUM_L4_GOOD, CHECKSUM_L4_BAD } = require('../memory/batch');

// Advanced descriptors are 16 bytes, seen as four 32-bit words: word k of the descriptor
// at word offset w is words[w + k]. The driver writes the "read" format, the NIC
// overwrites it with the "write-back" format. Receive: 82599 datasheet 7.1.6, 82576
// 7.1.5; transmit: 82599 7.2.3.2.4, 82576 7.2.2.3. The bits below are the same on both.
const DESCRIPTOR_BYTES = 16;
// RX read: words 0-1 packet buffer address, words 2-3 header buffer address (0).
// RX write-back: word 2 extended status (19:0) and errors (31:20; their bits differ
// between the NICs: each register layout names them, RXD_ERR_*), word 3 length (15:0).
const RXD_STAT_DD = 1 << 0; // descriptor done
const RXD_STAT_EOP = 1 << 1; // end of packet
const RXD_STAT_UDPCS = 1 << 4; // the frame is UDP and its checksum was checked
const RXD_STAT_L4CS = 1 << 5; // the TCP/UDP checksum was checked
const RXD_STAT_IPCS = 1 << 6; // the IPv4 header checksum was checked
// TX data descriptor: words 0-1 buffer address, word 2 DTALEN (15:0), DTYP (23:20) and
// DCMD (31:24), word 3 PAYLEN (31:14). Write-back: word 3 bit 0 is STA.DD.
const TXD_DTYP_DATA = 3 << 20;
const TXD_DCMD_EOP = 1 << 24; // end of packet
const TXD_DCMD_IFCS = 1 << 25; // insert FCS
const TXD_DCMD_RS = 1 << 27; // report status: write back DD
const TXD_DCMD_DEXT = 1 << 29; // advanced descriptor
const TXD_PAYLEN_SHIFT = 14;
const TXD_STAT_DD = 1 << 0;

// The CHECKSUM_* flags (lib/memory/batch.js) of RX write-back status `s` of `frame` (its
// error bits named by `layout`: RXD_ERR_IPE, RXD_ERR_L4E). Cold: PacketBatch.checksumOf().
function checksumFlags(s, layout, frame, length) {
  let flags = 0;
  if ((s & RXD_STAT_IPCS) !== 0) flags |= (s & layout.RXD_ERR_IPE) !== 0 ? CHECKSUM_IP_BAD : CHECKSUM_IP_GOOD;
  if ((s & RXD_STAT_L4CS) !== 0) {
    const bad = (s & layout.RXD_ERR_L4E) !== 0;
    // 82599 erratum: a UDP frame sent without a checksum (field 0, allowed over IPv4 by
    // RFC 768) may be flagged L4E. Linux's ixgbe and DPDK ignore L4E for those; so do we.
    const unchecked = bad && (s & RXD_STAT_UDPCS) !== 0 && udpChecksumField(frame, length) === 0;
    if (!unchecked) flags |= bad ? CHECKSUM_L4_BAD : CHECKSUM_L4_GOOD;
  }
  return flags;
}

// The UDP checksum field of an IPv4 frame (Ethernet header of 14 bytes), or -1.
function udpChecksumField(b, length) {
  const at = 14 + (b[14] & 0x0f) * 4 + 6;
  return at + 2 <= length ? (b[at] << 8) | b[at + 1] : -1;
}

// Where the rings live: one DMA region shared by every RX and TX queue, each ring a span of
// it. The hot loops index the region's one Uint32Array, `rings.words`, at the ring's
// offset: a property set once on a module's object is a constant to TurboFan, so indexing
// it needs no map check or length and data-pointer loads per descriptor (lib/memory/arena.js
// says the same of the index arena). The region is made with the first ring and freed
// with the last, so a process that has closed its devices holds no hugepages; made a
// second time, `words` is an ordinary property to V8 (slower, still correct).

// Two hugepages: 256 rings of 1024 descriptors, or 32 of the largest (8192, 128 KiB).
const REGION_BYTES = 4 * 1024 * 1024;

const rings = {}; // rings.words, rings.doubles: the region's views, once it exists
let memory = null;
const spans = []; // rings handed out, sorted by offset: { at, bytes, phys, view } (`at` in words)

// A zeroed span of `bytes` (a power of two up to 2 MiB) at an offset that is a multiple
// of its size: so it never crosses a hugepage boundary (its bytes are physically
// contiguous) and meets the 128-byte alignment of ring base addresses (RDBAL, TDBAL:
// 82599 datasheet 8.2.3). Returns { at: its first word in `words`, bytes, phys, view }.
function allocRing(bytes) {
  if (memory === null) {
    memory = new DmaMemory(REGION_BYTES);
    rings.words = new Uint32Array(memory.buffer);
    rings.doubles = new Float64Array(memory.buffer); // 64-bit halves of descriptors (held-frames.js)
  }
  let start = 0; // in bytes
  let k = 0;
  // First fit: move past every span that overlaps the candidate, to the next aligned offset.
  while (k < spans.length && start + bytes > spans[k].at * 4) {
    const end = (spans[k].at * 4) + spans[k].bytes;
    if (end > start) start = Math.ceil(end / bytes) * bytes;
    k++;
  }
  if (start + bytes > REGION_BYTES) {
    if (spans.length === 0) freeRegion();
    throw new IxyError('ENOMEM', `descriptor ring memory (${REGION_BYTES >> 20} MiB, shared by every open queue) has no room for a ring of ${bytes} bytes: ` +
      'use fewer queues or smaller rings');
  }
  const view = rings.words.subarray(start / 4, (start + bytes) / 4);
  view.fill(0); // a span used before may hold old descriptors with DD set
  const span = { at: start / 4, bytes, phys: memory.physOf(start), view };
  spans.splice(k, 0, span);
  return span;
}

// Gives a ring's span back (after its queue has stopped); the last one frees the region.
// A span given back twice is ignored the second time.
function releaseRing(span) {
  const k = spans.indexOf(span);
  if (k < 0) return;
  spans.splice(k, 1);
  if (spans.length === 0) freeRegion();
}

function freeRegion() {
  memory.free();
  memory = null;
}

// How many rings are handed out (for tests).
function ringsInUse() {
  return spans.length;
}

// Handing descriptors to the NIC: moving the tail register (RDT, TDT) gives it those
// before the tail, so every descriptor store must be visible before the tail store (82599
// 7.1, 7.2). x86 makes stores visible in program order, and V8 keeps typed-array stores
// in program order, so a plain store says "after the descriptors"; Atomics.store would
// add a locked instruction per batch that waits for every earlier store, packet bytes
// included. Processors that may reorder stores (arm64, ...) get Atomics.store's barrier.
const STORES_IN_ORDER = process.arch === 'x64' || process.arch === 'ia32';

function writeTail(regs, index, value) {
  if (STORES_IN_ORDER) regs[index] = value;
  else Atomics.store(regs, index, value);
}

Object.assign(rings, {
  DESCRIPTOR_BYTES, RXD_STAT_DD, RXD_STAT_EOP, RXD_STAT_UDPCS, RXD_STAT_L4CS, RXD_STAT_IPCS,
  TXD_DTYP_DATA, TXD_DCMD_EOP, TXD_DCMD_IFCS, TXD_DCMD_RS, TXD_DCMD_DEXT, TXD_PAYLEN_SHIFT, TXD_STAT_DD,
  REGION_BYTES, allocRing, releaseRing, ringsInUse, writeTail, checksumFlags,
});
module.exports = rings;
