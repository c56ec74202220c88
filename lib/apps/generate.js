'use strict';

// Packet generator, like ixy's ixy-pktgen and MoonGen's: frames of a recipe (flows, sizes,
// UDP or TCP, VLAN; lib/traffic/recipe.js) with a 32-bit sequence number, sent as fast as
// the NIC takes them or at a rate, evenly spaced (lib/traffic/pacing.js):
//   pacing 'nic'       the 82599's per-queue rate limiter spaces the frames; the driver
//                      keeps the queue full and sleeps between top-ups;
//   pacing 'software'  each frame goes to the NIC when it falls due;
//   pacing 'burst'     sleep on timers and send what fell due meanwhile as one burst;
//   pacing 'auto'      (default) 'nic' where the NIC can space the rate, else 'software'.
const { open } = require('../open');
const { PacketBatch } = require('../memory/batch');
const { runLoop } = require('../loop');
const { idleMode } = require('../device/idle');
const { IxyError, shown } = require('../host/errors');
const { noTraffic } = require('../loop/rates');
const { Report } = require('../loop/report');
const { Generator } = require('../traffic/generator');
const { FrameRecipe } = require('../traffic/recipe');
const { parseRate, framesPerSecond, bitsPerSecond } = require('../traffic/pacing');
const { nicPacing, softwarePacing, burstStep } = require('./paced-loop');
const { rateFactor, limitRate } = require('../intel/ixgbe/rate-limit');

const PACINGS = ['auto', 'nic', 'software', 'burst'];
const WIRE_OVERHEAD = 24; // FCS, preamble and inter-frame gap: bytes a frame takes on the wire beyond its own
const PACED_RING = 4096; // TX descriptors with pacing 'nic': 4 ms of 1 Mpps while the driver sleeps

// The fastest link ixy drives (the 82599's 10 Gb/s), in Mb/s.
const FASTEST_LINK_MBPS = 10000;

// Refuses a rate above what a link of `mbps` carries: frames of meanSize bytes with FCS,
// preamble and inter-frame gap (24 bytes more). A link that is down (0) says nothing.
function checkLineRate(rate, pps, meanSize, mbps) {
  if (!(mbps > 0)) return;
  const most = Math.floor((mbps * 1e6) / ((meanSize + WIRE_OVERHEAD) * 8));
  if (pps > most) {
    throw new IxyError('EINVAL', `rate ${shown(rate)} is ${Math.round(pps)} frames/s of ${Math.round(meanSize)} bytes, above what a ${mbps / 1000} Gb/s link carries (${most}); 0 sends as fast as the NIC takes them`);
  }
}

// Which pacing a run gets; throws for a 'nic' the device or the rate cannot have.
function choosePacing(pacing, dev, bps) {
  if (!PACINGS.includes(pacing)) throw new IxyError('EINVAL', `pacing must be one of ${PACINGS.join(', ')}, got '${pacing}'`);
  if (pacing !== 'nic' && pacing !== 'auto') return pacing;
  let why = null;
  if (dev.driver !== 'ixgbe') {
    why = `${dev.driver} has no per-queue rate limiter (the 82599's)`;
  } else {
    try {
      rateFactor(bps);
    } catch (err) {
      why = err.message;
    }
  }
  if (why === null) return 'nic';
  if (pacing === 'nic') throw new IxyError('EUNSUPPORTED', `pacing 'nic': ${why}; use --pacing software`);
  return 'software';
}

// options: batchSize, rate (0: as fast as possible; a number of frames per second or a
// string, pacing.js), count, seconds, pacing, idle ('spin': software pacing never
// sleeps), poolEntries, deviceOptions, out, json, stop, and the frame recipe's options (recipe.js:
// size, flows, srcMac, dstMac, srcIp, dstIp, srcPort, dstPort, protocol, vlan, ttl).
async function generate(address, {
  batchSize = 32, rate = 0, count = 0, seconds = 0, out = process.stdout, deviceOptions = {}, poolEntries,
  idle, pacing = 'auto', stop = null, json = false, ...frameOptions
} = {}) {
  const report = new Report({ json, out }); // json: JSON lines (lib/loop/report.js)
  // Validate before touching the device.
  const idleAs = idleMode(idle, deviceOptions.idle) || 'backoff';
  if (idleAs === 'interrupt') {
    throw new IxyError('EINVAL', "generate sends on its own clock: idle 'interrupt' (waiting for received frames) does not apply; use 'backoff' or 'spin'");
  }
  if (!PACINGS.includes(pacing)) throw new IxyError('EINVAL', `pacing must be one of ${PACINGS.join(', ')}, got ${shown(pacing)}`);
  const parsed = parseRate(rate);
  const batch = new PacketBatch(batchSize);
  const r = new FrameRecipe(frameOptions); // checks the recipe
  const meanSize = r.meanSize;
  const pps = framesPerSecond(parsed, meanSize);
  const bps = bitsPerSecond(pps, meanSize);
  checkLineRate(rate, pps, meanSize, FASTEST_LINK_MBPS); // before the device: no link is faster
  const paced = pps > 0;
  if (paced && (pacing === 'nic' || pacing === 'auto') && !(deviceOptions.txRingSize > 0)) deviceOptions = { txRingSize: PACED_RING, ...deviceOptions };
  let dev;
  try {
    dev = await open(address, { rxQueues: 1, ...deviceOptions, signal: stop });
  } catch (err) {
    if (err.code !== 'EABORTED') throw err;
    const stats = noTraffic(); // stopped (SIGINT) while waiting for link: nothing sent
    report.total(address, stats);
    if (json) report.line('end', '', { reason: 'signal', sent: 0 });
    report.close();
    if (report.failure) throw report.failure;
    return { reason: 'signal', sent: 0, stats, pacing: null, pools: [] };
  }
  let gen = null;
  try {
    checkLineRate(rate, pps, meanSize, dev.linkSpeed); // this port's link
    const how = paced ? choosePacing(pacing, dev, bps) : 'none';
    const txQueue = dev.txQueues[0];
    const entries = poolEntries || Math.max(4096, 2 * txQueue.size);
    gen = new Generator({ recipe: r, entries });
    report.line('start', `generating ${r.sizes.length === 1 ? `${r.sizes[0]}-byte` : `${Math.round(meanSize)}-byte (mean)`} ${r.protocol === 6 ? 'TCP' : 'UDP'} frames` +
      `${r.flows > 1 ? ` in ${r.flows} flows` : ''} on ${dev.address} (${dev.mac})` +
      `${paced ? ` at ${Math.round(pps)} pps, paced by ${how === 'nic' ? 'the NIC' : how}` : ''}${count ? `, ${count} frames` : ''}`,
    { command: 'generate', devices: [{ address: dev.address, mac: dev.mac }], size: r.sizes.length === 1 ? r.sizes[0] : meanSize, rate: Math.round(pps), count, flows: r.flows, pacing: paced ? how : null });
    const run = () => {
      if (how === 'nic') {
        limitRate(dev, 0, bps);
        return nicPacing({ dev, gen, batch, count, seconds, report, pps, stop });
      }
      if (how === 'software') return softwarePacing({ dev, gen, batch, count, seconds, report, pps, spin: idleAs === 'spin', stop });
      const step = how === 'burst' ? burstStep(gen, txQueue, batch, count, pps) : fullSpeedStep(gen, txQueue, batch, count);
      return runLoop({ devices: [dev], step, seconds, lines: report, idle: how === 'burst' ? idleAs : 'spin', stop });
    };
    // A report stream that failed ends the run: the totals still come (to stderr,
    // lib/loop/report.js), then its error.
    const reason = await run().catch((err) => {
      if (err !== report.failure) throw err;
      return 'failed';
    });
    dev.stop(); // first: frames the NIC never sent leave the TX totals for the dropped ones
    const stats = dev.stats();
    report.total(dev.address, stats);
    if (json) report.line('end', '', { reason, sent: gen.seq });
    if (report.failure) throw report.failure;
    return { reason, sent: gen.seq, stats, pacing: how, pools: [gen.pool, ...dev.pools] };
  } finally {
    dev.close();
    if (gen) gen.close();
    report.close();
  }
}

// As fast as the queue takes frames: one batch per step. With `count`, done once the
// last frame has left (DD on the newest descriptor), so that closing drops none.
function fullSpeedStep(gen, txQueue, batch, count) {
  const batchSize = batch.capacity;
  return () => {
    let want = batchSize;
    if (count > 0 && count - gen.seq < want) want = count - gen.seq;
    if (want > 0) {
      gen.send(txQueue, batch, want);
      return false;
    }
    return count > 0 && txQueue.drained();
  };
}

module.exports = { generate };
