'use strict';

// `ixy latency <tx-pci> <rx-pci>`: latency as MoonGen measures it, with the 82599's IEEE
// 1588 timestamps (lib/intel/ixgbe/timesync.js). The TX port sends load (IPv4/UDP frames of
// --size bytes from lib/traffic/generator.js) at --rate on TX queue 0, spaced by the NIC's
// rate limiter, and PTP probe frames on TX queue 1, one at a time: the NIC latches the
// probe's departure, the RX port its arrival, and their difference less the offset of the
// two clocks is one sample. The RX port drops what it receives at once. A probe not back
// within PROBE_TIMEOUT_MS is lost. The NIC takes the times, so the meter need not watch:
// it naps POLL_NAP_MS between polls and leaves the CPUs to the device under test (a
// spinning meter, a spinning forwarder and the model on two cores put the forwarder off
// its core for a scheduler slice, milliseconds, with the probe waiting in its ring).
const fs = require('fs');
const { open } = require('../open');
const { PacketBatch } = require('../memory/batch');
const { Mempool } = require('../memory/mempool');
const { isXdpName } = require('../xdp/iface');
const packet = require('../packet');
const { runLoop } = require('../loop');
const { IxyError } = require('../host/errors');
const ts = require('../intel/ixgbe/timesync');
const { rateFactor, limitRate } = require('../intel/ixgbe/rate-limit');
const { bitsPerSecond, framesPerSecond, parseRate } = require('../traffic/pacing');
const { Generator } = require('../traffic/generator');

const PROBE_GAP_MS = 1; // the next probe this long after the last one came back
const PROBE_TIMEOUT_MS = 100;
const PROBE_SIZE = 60;
const BATCH = 64;
// The nap between polls: what the load queue and the RX ring must hold meanwhile (a tenth
// of their 512 descriptors at 5 Mpps), far below the probe gap.
const POLL_NAP_MS = 0.05;
const napCell = new Int32Array(new SharedArrayBuffer(4));

// A PTP version 2 Sync message over Ethernet (IEEE 1588-2008, 13.3): messageType 0,
// versionPTP 2, messageLength 44, sequenceId at byte 30 of the PTP header.
function writeProbe(b, dst, src, seq) {
  b.fill(0, 0, PROBE_SIZE);
  b.set(dst, 0);
  b.set(src, 6);
  b[12] = ts.PTP_ETHERTYPE >> 8;
  b[13] = ts.PTP_ETHERTYPE & 0xff;
  b[15] = 2;
  b[17] = 44;
  b[44] = (seq >> 8) & 0xff;
  b[45] = seq & 0xff;
}

// The probe's sequence number if frame `at` of `bytes` is a probe, else -1.
function probeSeq(bytes, at) {
  if (bytes[at + 12] !== ts.PTP_ETHERTYPE >> 8 || bytes[at + 13] !== (ts.PTP_ETHERTYPE & 0xff)) return -1;
  return (bytes[at + 44] << 8) | bytes[at + 45];
}

// Quantile q of sorted values (nearest rank).
function quantile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

// The summary line (or JSON), and the histogram. With no probe back there is no latency:
// it says so (null in JSON) rather than print zeros.
function writeSummary(out, json, summary, lost, taken) {
  if (json) {
    out.write(`${JSON.stringify(summary.count ? summary : { count: 0, lost, p50: null, p99: null, 'p99.9': null, 'p99.99': null, max: null })}\n`);
  } else if (summary.count === 0) {
    out.write(`0 probes returned, ${lost} lost: no latency measured\n`);
  } else {
    out.write(`${summary.count} probes, ${lost} lost: p50 ${summary.p50} us, p99 ${summary.p99} us, p99.9 ${summary['p99.9']} us, p99.99 ${summary['p99.99']} us, max ${summary.max} us\n`);
    for (const line of histogramLines(taken)) out.write(`${line}\n`);
  }
}

// The summary in microseconds: count, p50, p99, p99.9, p99.99, max.
function summarize(samplesNs) {
  const sorted = Float64Array.from(samplesNs).sort();
  const us = (ns) => Math.round(ns) / 1000;
  return {
    count: sorted.length, p50: us(quantile(sorted, 0.5)), p99: us(quantile(sorted, 0.99)),
    'p99.9': us(quantile(sorted, 0.999)), 'p99.99': us(quantile(sorted, 0.9999)),
    max: us(sorted.length ? sorted[sorted.length - 1] : 0),
  };
}

// A histogram for the terminal: buckets of powers of two in ns, bars up to `width`.
function histogramLines(samplesNs, width = 40) {
  const counts = new Map();
  for (const ns of samplesNs) {
    const k = ns < 1 ? 0 : Math.floor(Math.log2(ns));
    counts.set(k, (counts.get(k) || 0) + 1);
  }
  const keys = [...counts.keys()].sort((a, b) => a - b);
  const most = Math.max(...counts.values());
  const label = (ns) => (ns >= 1000 ? `${ns / 1000} us` : `${ns} ns`);
  return keys.map((k) => {
    const n = counts.get(k);
    const bar = '#'.repeat(Math.max(1, Math.round((n / most) * width)));
    return `${(k === 0 ? '< 2 ns' : `${label(2 ** k)} - ${label(2 ** (k + 1))}`).padStart(24)} | ${bar.padEnd(width)} ${n}`;
  });
}

// The load's rate in whole frames per second: a number, or a string as generate takes it
// ('50k', '100kpps', '500Mbit'; lib/traffic/pacing.js).
function loadRate(rate, size) {
  const pps = typeof rate === 'string' ? Math.round(framesPerSecond(parseRate(rate), size)) : rate;
  if (!Number.isInteger(pps) || pps < 0) throw new IxyError('EINVAL', `--rate must be a whole number of frames per second, got ${rate}`);
  return pps;
}

function checkOptions({ rate, size, seconds }) {
  if (!(seconds >= 0)) throw new IxyError('EINVAL', `--seconds must be 0 or more, got ${seconds}`);
  if (rate > 0) rateFactor(bitsPerSecond(rate, size)); // one the NIC can space, before opening anything
}

async function latency(txAddress, rxAddress, {
  rate: rateGiven = 0, size = 60, seconds = 10, json = false, samplesFile = null, out = process.stdout, deviceOptions = {},
} = {}) {
  if (!Number.isInteger(size) || size < 60 || size > 1514) throw new IxyError('EINVAL', `--size must be 60..1514, got ${size}`);
  const rate = loadRate(rateGiven, size);
  checkOptions({ rate, size, seconds });
  if (txAddress === rxAddress) throw new IxyError('EINVAL', 'latency needs two different ports');
  if (isXdpName(txAddress) || isXdpName(rxAddress)) throw new IxyError('EUNSUPPORTED', 'latency reads the 82599\'s IEEE 1588 timestamps, which AF_XDP does not give: measure on an 82599 that ixy drives, or on the model (ixy model)');
  const samplesFd = samplesFile ? fs.openSync(samplesFile, 'w') : null;
  let tx = null;
  let rx = null;
  const pools = [];
  try {
    tx = await open(txAddress, { ...deviceOptions, txQueues: 2 });
    rx = await open(rxAddress, deviceOptions);
    for (const dev of [tx, rx]) {
      if (dev.driver !== 'ixgbe') throw new IxyError('EUNSUPPORTED', `${dev.address}: latency needs the 82599's IEEE 1588 timestamps (ixgbe), not ${dev.driver}`);
    }
    for (const dev of [tx, rx]) {
      ts.enableTimesync(dev);
      ts.setSystim(dev, 0);
    }
    await Promise.all([ts.waitClock(tx), ts.waitClock(rx)]);
    const offset = ts.clockOffset(tx, rx); // rx's clock minus tx's, tenths of ns
    if (rate > 0) limitRate(tx, 0, bitsPerSecond(rate, size));

    const load = new Generator({ size, dstMac: rx.mac, srcMac: tx.mac, entries: 4096 });
    pools.push(load.pool);
    const probes = new Mempool({ entries: 64, bufferSize: 2048 });
    pools.push(probes);
    const dstMac = packet.parseMac(rx.mac);
    const srcMac = packet.parseMac(tx.mac);
    const loadQueue = tx.txQueues[0];
    const probeQueue = tx.txQueues[1];
    probeQueue.stampFrames(); // the NIC latches each probe's time of leaving
    const rxQueue = rx.rxQueues[0];
    const loadBatch = new PacketBatch(BATCH);
    const probeBatch = new PacketBatch(1);
    const rxBatch = new PacketBatch(BATCH);

    let samples = new Float64Array(4096);
    let count = 0;
    let lost = 0;
    let seq = 0;
    let sentAt = -1; // performance.now() of the probe in flight, -1: none
    let txStamp = -1;
    let rxStamp = -1;
    let nextAt = performance.now();
    const record = (ns) => {
      if (count === samples.length) {
        const grown = new Float64Array(samples.length * 2);
        grown.set(samples);
        samples = grown;
      }
      samples[count++] = ns;
      if (samplesFd !== null) fs.writeSync(samplesFd, `${seq},${txStamp / ts.TENTHS_PER_NS},${(rxStamp - offset) / ts.TENTHS_PER_NS},${ns}\n`);
    };
    if (samplesFd !== null) fs.writeSync(samplesFd, 'probe,tx_ns,rx_ns,latency_ns\n');

    // One batch from the RX port: a probe's arrival takes its RX timestamp. Returns its size.
    const receiveBatch = () => {
      const n = rxQueue.receive(rxBatch);
      if (n > 0) {
        const bytes = rxBatch.pool.bytes;
        for (let i = 0; i < n; i++) {
          const k = probeSeq(bytes, rxBatch.frameAt(i));
          if (k < 0) continue;
          // The latch holds the first probe that reached it: an older one, back after its
          // time ran out, is let go; this probe then counts as lost too.
          const stamp = ts.takeRxStamp(rx);
          if (sentAt >= 0 && k === (seq & 0xffff)) rxStamp = stamp;
        }
        rxBatch.freeFrom(0);
      }
      return n;
    };

    const poll = () => {
      if (rate > 0) while (load.send(loadQueue, loadBatch, BATCH) === BATCH); // the rate-limited queue full
      while (receiveBatch() === BATCH); // all that came since the last poll
      const now = performance.now();
      if (sentAt < 0) {
        if (now >= nextAt) {
          seq++;
          probeBatch.count = probes.allocMany(probeBatch.ids, 1);
          probeBatch.pool = probes;
          writeProbe(probeBatch.data(0), dstMac, srcMac, seq);
          probeBatch.lengths[0] = PROBE_SIZE;
          ts.takeTxStamp(tx); // nothing may be latched from before
          txStamp = rxStamp = -1;
          if (probeQueue.send(probeBatch) === 1) sentAt = now;
          else probeBatch.freeFrom(0);
        }
        return false;
      }
      if (txStamp < 0) txStamp = ts.takeTxStamp(tx);
      if (txStamp >= 0 && rxStamp >= 0) {
        record((rxStamp - txStamp - offset) / ts.TENTHS_PER_NS);
      } else if (now - sentAt < PROBE_TIMEOUT_MS) {
        return false;
      } else if (txStamp < 0 && !probeQueue.drained()) {
        return false; // not sent yet: the TX latch would give its stamp to the next probe
      } else {
        lost++;
        ts.takeRxStamp(rx);
      }
      sentAt = -1;
      txStamp = rxStamp = -1;
      nextAt = now + PROBE_GAP_MS;
      return false;
    };

    const step = () => {
      const done = poll();
      Atomics.wait(napCell, 0, 0, POLL_NAP_MS); // sleeps in the kernel: no core held
      return done;
    };

    if (!json) out.write(`latency ${tx.address} -> ${rx.address}: PTP probes among ${rate ? `${rate} pps of ${size}-byte frames` : 'no load'}\n`);
    // A port that went away (EDEVICELOST) ends the run: the probes measured so far are
    // still summarised, then the error.
    let gone = null;
    const reason = await runLoop({ devices: [tx, rx], step, seconds, out, report: false, idle: 'spin' }).catch((err) => {
      if (err.code !== 'EDEVICELOST') throw err;
      gone = err;
      return 'failed';
    });
    const taken = samples.subarray(0, count);
    const summary = summarize(taken);
    writeSummary(out, json, summary, lost, taken);
    if (gone) throw gone;
    if (count === 0) {
      throw new IxyError('ETIMEDOUT', `no probe came back: ${lost ? `all ${lost} sent timed out (${PROBE_TIMEOUT_MS} ms each)` : 'none was sent'}; is ${rx.address} wired to ${tx.address}?`);
    }
    return { reason, ...summary, lost, samples: taken };
  } finally {
    if (tx) tx.close();
    if (rx) rx.close();
    for (const p of pools) p.close();
    if (samplesFd !== null) fs.closeSync(samplesFd);
  }
}

module.exports = { latency, summarize };
