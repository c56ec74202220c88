'use strict';

// Bidirectional forwarder between two ports, one queue each way, like ixy's ixy-fwd:
// receive a batch on one port, touch one byte of every packet (so the data really travels
// through this core's cache, as in any real application), send it out on the other.
// Unlike ixy-fwd, which adds 1 to that byte, the frames leave as they came: byte 1 is the
// destination MAC's, and real traffic (ARP, TCP) through a forwarder must reach its owner.
const { open } = require('../open');
const { PacketBatch } = require('../memory/batch');
const { IxyError } = require('../host/errors');
const { runLoop } = require('../loop');
const { idleMode } = require('../device/idle');
const { warmUp } = require('../warm-up');
const { noTraffic } = require('../loop/rates');
const { Report } = require('../loop/report');

// Moves one batch from rx to tx. Frames the TX ring has no room for stay in the batch and
// go first at the next step, which receives nothing until they are sent: a full TX ring
// then holds frames back in the RX ring and the NIC's packet buffer, whose room (thousands
// of frames) outlasts a stall of this process, instead of dropping them. So each direction
// needs a batch of its own; batch.count is what it holds back between steps.
function forwardBatch(rxQueue, txQueue, batch) {
  let n = batch.count;
  if (n === 0) {
    n = rxQueue.receive(batch);
    if (n === 0) return;
    // Byte 1 is the destination MAC's: the frame's first line comes to this core and the
    // frame leaves unchanged. The frames are of rxQueue's pool, which TurboFan knows as a
    // constant where it does not know batch.pool.
    batch.touchFrames(n, 1, rxQueue.pool);
  }
  const sent = txQueue.send(batch);
  if (sent === n) batch.count = 0;
  else batch.keepFrom(sent); // the unsent frames, for the next step
}

// idle: 'backoff', 'spin' or 'interrupt' (lib/device/idle.js; default: deviceOptions.idle, else
// the best the two ports can do). stop: an AbortSignal that stops it as SIGINT does, during
// the link wait too (lib/apps/stop-signal.js).
// json: the reports as JSON lines (lib/loop/report.js).
async function forward(addressA, addressB, { batchSize = 32, seconds = 0, out = process.stdout, deviceOptions = {}, idle, stop, json = false } = {}) {
  const report = new Report({ json, out });
  if (addressA === addressB) {
    throw new IxyError('EINVAL', 'forward needs two different ports');
  }
  const idleAs = idleMode(idle, deviceOptions.idle);
  const towardB = new PacketBatch(batchSize);
  const towardA = new PacketBatch(batchSize);
  // Before the ports go live, so that their first frames find the step optimised for
  // frames; its stand-ins are closed with the ports (lib/warm-up/index.js says why). Frames it
  // left held go back to the stand-ins' pools.
  const standIns = warmUp((rx, tx, direction) => forwardBatch(rx, tx, direction === 0 ? towardB : towardA), { bufferSize: deviceOptions.bufferSize });
  towardB.freeFrom(0);
  towardA.freeFrom(0);
  let a;
  let b;
  try {
    a = await open(addressA, { ...deviceOptions, signal: stop });
    b = await open(addressB, { ...deviceOptions, signal: stop });
  } catch (err) {
    const totals = err.code === 'EABORTED' ? { [addressA]: a ? a.stats() : noTraffic(), [addressB]: noTraffic() } : null;
    if (a) a.close();
    standIns.close();
    if (totals === null) throw err;
    writeTotals(report, totals, 0, 0);
    if (json) report.line('end', '', { reason: 'signal' });
    report.close();
    if (report.failure) throw report.failure;
    return { reason: 'signal', stats: totals, pools: [] };
  }
  const rxA = a.rxQueues[0];
  const txA = a.txQueues[0];
  const rxB = b.rxQueues[0];
  const txB = b.txQueues[0];
  report.line('start', `forwarding ${a.address} (${a.mac}) <-> ${b.address} (${b.mac}), batch ${batchSize}`,
    { command: 'forward', devices: [{ address: a.address, mac: a.mac }, { address: b.address, mac: b.mac }], batch: batchSize });
  try {
    // A port that went away (EDEVICELOST) ends the loop; the totals still come, the other
    // port's among them (a gone port counts nothing in hardware from then on), then the error.
    // So does a report stream that failed (its totals go to stderr, lib/loop/report.js).
    let lost = null;
    const reason = await runLoop({
      devices: [a, b],
      seconds,
      lines: report,
      idle: idleAs,
      stop,
      step: () => {
        forwardBatch(rxA, txB, towardB);
        forwardBatch(rxB, txA, towardA);
        return false;
      },
    }).catch((err) => {
      if (err.code !== 'EDEVICELOST' && err !== report.failure) throw err;
      lost = err;
      return 'failed';
    });
    // Stopped before the totals are read: stop() takes the frames still on a TX ring that
    // the NIC never sent out of the TX totals and into the dropped ones (as a reset after
    // a hang does), so that every frame received is counted once, sent or dropped.
    a.stop();
    b.stop();
    const totals = { [a.address]: a.stats(), [b.address]: b.stats() };
    writeTotals(report, totals, towardA.count, towardB.count);
    if (json) report.line('end', '', { reason });
    if (lost) throw lost;
    if (report.failure) throw report.failure; // the totals went to stderr
    return { reason, stats: totals, pools: [...a.pools, ...b.pools] };
  } finally {
    // Both stop before either frees memory: each TX ring holds the other port's buffers.
    a.stop();
    b.stop();
    towardB.freeFrom(0);
    towardA.freeFrom(0);
    a.close();
    b.close();
    standIns.close();
    report.close();
  }
}

// The totals line of each port. Frames still held back for a full TX ring when the loop
// ended (heldA toward A, heldB toward B) are dropped too, by the port they were to leave.
function writeTotals(report, totals, heldA, heldB) {
  const [[addressA, a], [addressB, b]] = Object.entries(totals);
  for (const [s, held] of [[a, heldA], [b, heldB]]) {
    s.txUnsent = s.txDropped;
    s.txHeldBack = held;
    s.txDropped += held;
  }
  for (const [address, s] of [[addressA, a], [addressB, b]]) {
    report.total(address, s, {}, ` (${s.txHeldBack} held back for a full TX ring, ${s.txUnsent} unsent on the ring at a reset after a hang or at the stop)`);
  }
}

module.exports = { forward, forwardBatch };
