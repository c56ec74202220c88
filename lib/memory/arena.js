'use strict';

// The index arena: one Uint32Array, made once when this module loads, that holds every
// small array the hot path reads or writes per packet: each mempool's free stack and
// physical addresses, the buffer id behind each ring descriptor, each batch's ids and
// lengths. Each is a span of the arena; everyone else sees a span as a normal Uint32Array
// (a subarray view), while receive(), send() and the forward loop index the arena itself
// at the span's offset (`words[idsAt + i]`).
//
// Why one array: TurboFan compiles a module-level constant as a constant, so indexing it
// needs no map check and no load of its length or data pointer; a typed array reached
// through an object pays those again on every loop iteration, per array. Hot functions
// read it into a local first (`const words = arena.words`), which TurboFan folds in every
// loop, nested ones included.
//
// Spans are handed out first fit. A span comes back when its view is garbage-collected
// (a FinalizationRegistry), never earlier, so no one can write through a view into a span
// someone else was given. Whoever keeps a span's offset must keep its view too.
const { IxyError } = require('../host/errors');

// 2^24 words, 64 MiB of address space. The pages are zero-filled on first use, so only
// the spans in use cost memory: a mempool of 4096 buffers takes 48 KiB.
const WORDS = 1 << 24;
const words = new Uint32Array(WORDS);
// The same memory as 64-bit elements: doubles[k] is words[2k] and words[2k + 1], for
// copying 64-bit patterns made as two words (lib/intel/held-frames.js), never for arithmetic.
const doubles = new Float64Array(words.buffer);

// Free spans, sorted by offset, neighbours merged: [{ at, length }].
const free = [{ at: 0, length: WORDS }];

function reserve(length) {
  for (let k = 0; k < free.length; k++) {
    const span = free[k];
    if (span.length < length) continue;
    const at = span.at;
    span.at += length;
    span.length -= length;
    if (span.length === 0) free.splice(k, 1);
    return at;
  }
  throw new IxyError('ENOMEM', `the index arena has no room for ${length} more words: ` +
    'drop mempools and batches you no longer use, or use smaller mempools');
}

function release({ at, length }) {
  words.fill(0, at, at + length);
  let k = 0;
  while (k < free.length && free[k].at < at) k++;
  free.splice(k, 0, { at, length });
  const next = free[k + 1];
  if (next && at + length === next.at) {
    free[k].length += next.length;
    free.splice(k + 1, 1);
  }
  const prev = free[k - 1];
  if (prev && prev.at + prev.length === at) {
    prev.length += free[k].length;
    free.splice(k, 1);
  }
}

const collected = new FinalizationRegistry(release);

// A new zeroed span of `length` words, as a view; offsetOf(view) is where it starts.
function allocWords(length) {
  if (!Number.isInteger(length) || length < 1) throw new RangeError(`bad span length ${length}`);
  const at = reserve(length);
  const view = words.subarray(at, at + length);
  collected.register(view, { at, length });
  return view;
}

function offsetOf(view) {
  return view.byteOffset / Uint32Array.BYTES_PER_ELEMENT;
}

// How many words are not in any span (for tests and diagnostics).
function freeWords() {
  let sum = 0;
  for (const span of free) sum += span.length;
  return sum;
}

module.exports = { words, doubles, allocWords, offsetOf, freeWords, WORDS };
