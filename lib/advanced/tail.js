'use strict';

// Moving a ring's tail register (RDT, TDT) hands the descriptors before it to the NIC, so
// every descriptor store must be visible before the tail store is (82599 datasheet 7.1
// and 7.2: software writes descriptors, then moves the tail).
//
// On x86 (x64, ia32) stores become visible in program order, and V8 keeps stores to typed
// arrays in program order, so a plain store already says "after the descriptors". Atomics.store
// would add a builtin call and a locked instruction per batch that waits until every
// earlier store has reached the cache, the packet bytes the application just wrote
// included: 1-5% of the forwarding rate (test/bench/PERFORMANCE.md). Processors that may
// reorder stores (arm64 and others) get Atomics.store, whose barrier gives the order.
const STORES_IN_ORDER = process.arch === 'x64' || process.arch === 'ia32';

function writeTail(regs, index, value) {
  if (STORES_IN_ORDER) regs[index] = value;
  else Atomics.store(regs, index, value);
}

module.exports = { writeTail };
