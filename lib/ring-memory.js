'use strict';

// Descriptor rings live in one DMA region shared by every RX and TX queue of the ixgbe and
// igb drivers, each ring a span of it. The hot loops (receive, send, reclaim) index the
// region's one Uint32Array, `ringMemory.words`, at the ring's offset, for the reason
// lib/arena.js gives for the index arena: TurboFan compiles a property that is set once
// on a module's object as a constant, so indexing it needs no map check and no loads of
// the array's length and data pointer on every loop iteration, where a ring of its own
// (`this.ring`) paid for them per descriptor. It also saves memory: a ring of 512
// descriptors is 8 KiB, and each used to take a 2 MiB hugepage of its own.
//
// The region is made with the first ring and freed with the last, so a process that has
// closed its devices holds no hugepages. Making it again sets `words` a second time; V8
// then reads it as an ordinary property (slower, still correct).
const { DmaMemory } = require('./memory');
const { IxyError } = require('./errors');

// Two hugepages: 256 rings of 1024 descriptors, or 32 of the largest (8192, 128 KiB).
const REGION_BYTES = 4 * 1024 * 1024;

const ringMemory = {}; // ringMemory.words: the region's Uint32Array, once it exists
let memory = null;
const spans = []; // rings handed out, sorted by offset: { at, bytes, phys, view } (`at` in words)

// A zeroed span of `bytes` (a power of two up to 2 MiB) at an offset that is a multiple
// of its size: so it never crosses a hugepage boundary (its bytes are physically
// contiguous) and meets the 128-byte alignment ring base addresses need (RDBAL, TDBAL:
// 82599 datasheet 8.2.3). Returns { at: its first word in `words`, bytes, phys, view }.
function allocRing(bytes) {
  if (memory === null) {
    memory = new DmaMemory(REGION_BYTES);
    ringMemory.words = new Uint32Array(memory.buffer);
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
  const view = ringMemory.words.subarray(start / 4, (start + bytes) / 4);
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

// How many rings are handed out (for tests and diagnostics).
function ringsInUse() {
  return spans.length;
}

Object.assign(ringMemory, { allocRing, releaseRing, ringsInUse, REGION_BYTES });
module.exports = ringMemory;
