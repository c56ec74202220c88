'use strict';

// Bidirectional forwarder between two ports, one queue each way, like ixy's ixy-fwd:
// receive a batch on one port, touch one byte of every packet (so the data really travels
// through this core's cache, as in any real application), send it out on the other.
// Unlike ixy-fwd, which adds 1 to that byte, the frames leave as they came: byte 1 is the
// destination MAC's, and real traffic (ARP, TCP) through a forwarder must reach its owner.
const { open } = require('../index');
const { PacketBatch } = require('../batch');
const { IxyError } = require('../errors');
const { runLoop } = require('./loop');
const { idleMode } = require('../idle');
const { warmUp } = require('../warm-up');
const { formatTotals } = require('../stats');
const arena = require('../arena');

// Reads byte 1 of the batch's first n frames and writes it back (`|= 0`): the frame's
// first cache line comes to this core and is dirtied, as when an application edits a
// header, and the frame is unchanged (TurboFan keeps the store: --print-opt-code shows
// it). Four frames per trip:
// TurboFan checks the pool's byte view (map, length, data pointer) once per trip of a loop,
// and with one frame per trip those checks were most of the loop's instructions.
function touchFrames(batch, n) {
  const words = arena.words; // a local, so TurboFan folds it (see lib/arena.js)
  const idsAt = batch.idsAt; // batch.ids[i] is words[idsAt + i]
  const bytes = batch.pool.bytes; // the whole pool: buffer id k starts at k << shift
  const shift = batch.pool.bufferShift;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const a = (words[idsAt + i] << shift) + 1;
    const b = (words[idsAt + i + 1] << shift) + 1;
    const c = (words[idsAt + i + 2] << shift) + 1;
    const d = (words[idsAt + i + 3] << shift) + 1;
    bytes[a] |= 0;
    bytes[b] |= 0;
    bytes[c] |= 0;
    bytes[d] |= 0;
  }
  for (; i < n; i++) bytes[(words[idsAt + i] << shift) + 1] |= 0;
}

// Moves one batch from rx to tx; returns how many packets it dropped because the TX ring
// was full (dropped as a switch would: holding them would only stall the other direction).
function forwardBatch(rxQueue, txQueue, batch) {
  const n = rxQueue.receive(batch);
  if (n === 0) return 0;
  touchFrames(batch, n);
  const sent = txQueue.send(batch);
  if (sent === n) return 0;
  batch.freeFrom(sent);
  return n - sent;
}

// idle: 'backoff', 'spin' or 'interrupt' (lib/idle.js; default: deviceOptions.idle, else
// the best the two ports can do).
async function forward(addressA, addressB, { batchSize = 32, seconds = 0, out = process.stdout, deviceOptions = {}, idle } = {}) {
  if (addressA === addressB) {
    throw new IxyError('EINVAL', 'forward needs two different ports');
  }
  const idleAs = idleMode(idle, deviceOptions.idle);
  const batch = new PacketBatch(batchSize);
  // Before the ports go live, so that their first frames find the step optimised for
  // frames; its stand-ins are closed with the ports (lib/warm-up.js says why).
  const standIns = warmUp((rx, tx) => forwardBatch(rx, tx, batch), { bufferSize: deviceOptions.bufferSize });
  let a;
  let b;
  try {
    a = await open(addressA, deviceOptions);
    b = await open(addressB, deviceOptions);
  } catch (err) {
    if (a) a.close();
    standIns.close();
    throw err;
  }
  const rxA = a.rxQueues[0];
  const txA = a.txQueues[0];
  const rxB = b.rxQueues[0];
  const txB = b.txQueues[0];
  out.write(`forwarding ${a.address} (${a.mac}) <-> ${b.address} (${b.mac}), batch ${batchSize}\n`);
  // Frames dropped because the outgoing TX ring was full, by the port they were to leave.
  let droppedTowardA = 0;
  let droppedTowardB = 0;
  try {
    const reason = await runLoop({
      devices: [a, b],
      seconds,
      out,
      idle: idleAs,
      step: () => {
        droppedTowardB += forwardBatch(rxA, txB, batch);
        droppedTowardA += forwardBatch(rxB, txA, batch);
        return false;
      },
    });
    const totals = { [a.address]: a.stats(), [b.address]: b.stats() };
    totals[a.address].txDropped = droppedTowardA;
    totals[b.address].txDropped = droppedTowardB;
    for (const [address, s] of Object.entries(totals)) {
      out.write(`${formatTotals(address, s)}, dropped for a full TX ring ${s.txDropped}\n`);
    }
    return { reason, stats: totals, pools: [...a.pools, ...b.pools] };
  } finally {
    // Both stop before either frees memory: each TX ring holds the other port's buffers.
    a.stop();
    b.stop();
    a.close();
    b.close();
    standIns.close();
  }
}

module.exports = { forward, forwardBatch };
