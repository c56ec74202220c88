'use strict';

// A NIC played in software, for the driver's own RX and TX queue classes: their registers
// are plain memory, and between two steps standInNic() does what the NIC would. Nothing
// here touches a device. Two users:
// - lib/warm-up/index.js, which runs an app's hot path here before the real device goes live;
// - the benchmark of the driver's own cost without the model (bench/stand-in.js),
//   whose C twin is `c-forward --mode stand-in`, and tests that watch V8 compile the loop.
const rings = require('../intel/rings');
const { RxQueue } = require('../intel/rx-queue');
const { TxQueue } = require('../intel/tx-queue');
const { Mempool } = require('../memory/mempool');

const { RXD_STAT_DD, RXD_STAT_EOP, TXD_STAT_DD } = rings;
const GOOD_FRAME = RXD_STAT_DD | RXD_STAT_EOP;
const REGISTER_BYTES = 0x80000; // the 82599's 512 KiB of registers, enough for the 82576's

// An RX and a TX queue of `ring` descriptors on registers in plain memory, laid out as
// `layout` (a driver's register table: intel/ixgbe/registers.js, intel/igb/registers.js),
// started, with a mempool of `entries` buffers of `bufferSize` bytes (or `pool`, which
// stays its owner's); RX descriptors go back in groups of rxFree, as `ixy forward` opens them.
function openPort(layout, ring, { entries = 4096, rxFree = ring / 4, bufferSize = 2048, pool = null } = {}) {
  const regs = new Uint32Array(REGISTER_BYTES / 4);
  if (pool === null) pool = new Mempool({ entries, bufferSize });
  const rx = new RxQueue(regs, layout, 0, ring, pool, rxFree);
  const tx = new TxQueue(regs, layout, 0, ring);
  rx.start();
  tx.start();
  return { regs, pool, rx, tx, rxHead: 0, txHead: 0 };
}

// What the NIC would do between two steps: complete every RX descriptor up to RDT (at most
// rxLimit of them) as a frame of `length` bytes (the buffer itself is not written), and,
// unless holdTx, mark every TX descriptor up to TDT done. The heads are kept in locals, as
// c-forward's stand_in_nic() does, and the rings indexed through rings.words as the
// queues' own loops do: the benchmark counts the stand-in's cost in both languages, and it
// should be as small in JavaScript as in C.
function standInNic(port, length = 60, rxLimit = port.rx.size, holdTx = false) {
  const { regs, rx, tx } = port;
  const ring = rings.words; // a local, so TurboFan folds it (lib/intel/rings.js)
  const mask = rx.mask;
  const rxAt = rx.ringAt;
  let head = port.rxHead;
  const rdt = regs[rx.tailIndex];
  const ready = (rdt - head) & mask;
  const end = ready <= rxLimit ? rdt : (head + rxLimit) & mask;
  // Offsets as int32 sums (`| 0`), as in the queues' loops: no overflow checks.
  for (; head !== end; head = (head + 1) & mask) {
    ring[(rxAt + (head << 2) + 3) | 0] = length;
    ring[(rxAt + (head << 2) + 2) | 0] = GOOD_FRAME;
  }
  port.rxHead = head;
  if (holdTx) return;
  head = port.txHead;
  const txAt = tx.ringAt;
  for (const tdt = regs[tx.tailIndex]; head !== tdt; head = (head + 1) & mask) ring[(txAt + (head << 2) + 3) | 0] = TXD_STAT_DD;
  port.txHead = head;
}

// Closes both queues (nothing to stop: no NIC reads these rings): their buffers go back to
// their pools, which stay their owners' to close. Ports that sent each other's buffers
// close their queues first, then their pools.
function closeQueues(port) {
  port.rx.close();
  port.tx.close();
}

module.exports = { openPort, standInNic, closeQueues };
