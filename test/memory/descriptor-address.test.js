'use strict';

// receive() and send() copy each buffer's physical address from the pool's table into
// descriptors (words 0-1), on every packet. The copy must keep every bit, in the
// interpreter and in optimised code alike, for any address a pool can hold: low words with
// bit 31 set (not a small integer), high words up to bit 51 (x86-64's widest physical
// address), and address 0. The device model only ever sees the addresses this machine's
// hugepages happen to have. Checked in a child process that may ask V8 to optimise.
const assert = require('assert');
const { runOptimising } = require('../support/helpers');

// An RX and a TX queue on a register file in plain memory, one pool whose address table
// is overwritten with made-up addresses, and the stand-in NIC (lib/warm-up/stand-in.js), which completes
// every RX descriptor up to RDT and every TX descriptor up to TDT. Before it does, each
// of those descriptors must carry exactly the two halves of its buffer's entry.
const CHILD = `
  const SIZE = 64;
  const port = openPort(ixgbeLayout, SIZE, { entries: 256, rxFree: 8 });
  const { regs, pool, rx, tx } = port;
  // Bit 31 of the low word and bits up to 51 set; address 0 for the next buffer the pool
  // hands out (a double 0, which V8 may keep as a small integer before optimising).
  const zero = pool.freeIds[pool.freeCount - 1];
  for (let id = 0; id < pool.entries; id++) {
    pool.phys[2 * id] = id === zero ? 0 : (0x80000000 | (id << 11)) >>> 0;
    pool.phys[2 * id + 1] = id === zero ? 0 : 0xfffff - id;
  }
  for (let i = 0; i < SIZE; i++) rx.writeReadDescriptor(i, rx.bufferIds[i]); // the ring, anew
  const batch = new PacketBatch(16);
  let wrong = [];
  let seen = new Set();
  function check(ring, i, entry) {
    const id = entry & 0xfffff;
    seen.add(id);
    if (ring[4 * i] !== pool.phys[2 * id] || ring[4 * i + 1] !== pool.phys[2 * id + 1]) {
      wrong.push({ i, id, lo: ring[4 * i], hi: ring[4 * i + 1] });
    }
  }
  function step() {
    // The descriptors the stand-in NIC is about to use: where it writes frames, and what it sends.
    for (let i = port.rxHead; i !== regs[rx.tailIndex]; i = (i + 1) % SIZE) check(rx.ring, i, rx.bufferIds[i]);
    for (let i = port.txHead; i !== regs[tx.tailIndex]; i = (i + 1) % SIZE) check(tx.ring, i, tx.bufferIds[i]);
    standInNic(port);
    rx.receive(batch);
    batch.freeFrom(tx.send(batch));
  }
  const receive = RxQueue.prototype.receive;
  const send = TxQueue.prototype.send;
  // Running TurboFan's code. Not %GetOptimizationStatus(f) & 16: its bits moved in V8 14
  // (Node 26), where "optimised" is bit 3.
  const optimised = (f) => %ActiveTierIsTurbofan(f);
  %NeverOptimizeFunction(step);
  %PrepareFunctionForOptimization(receive);
  %PrepareFunctionForOptimization(send);
  for (let i = 0; i < 100; i++) step();
  const interpreted = { wrong, packets: tx.packets, zero: seen.has(zero), buffers: seen.size };
  wrong = [];
  seen = new Set();
  %OptimizeFunctionOnNextCall(receive);
  %OptimizeFunctionOnNextCall(send);
  step();
  for (let i = 0; i < 1000; i++) step();
  const optimisedRun = { wrong, packets: tx.packets - interpreted.packets, zero: seen.has(zero), buffers: seen.size };
  process.stdout.write(JSON.stringify({ interpreted, optimisedRun,
    optimised: { receive: optimised(receive), send: optimised(send) } }));
`;

describe('descriptor addresses', function () {
  it('receive() and send() write every bit of each buffer address, interpreted and optimised', function () {
    this.timeout(20000);
    const r = runOptimising(CHILD);
    assert.deepStrictEqual(r.optimised, { receive: true, send: true }, 'the run did not get optimised code');
    assert.deepStrictEqual(r.interpreted.wrong.slice(0, 3), []);
    assert.deepStrictEqual(r.optimisedRun.wrong.slice(0, 3), []);
    // Each run moved many frames, on many buffers, address 0 among them.
    for (const run of [r.interpreted, r.optimisedRun]) {
      assert.ok(run.packets > 1000 && run.buffers > 100 && run.zero, JSON.stringify(run));
    }
  });
});
