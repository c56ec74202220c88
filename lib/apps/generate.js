'use strict';

// Packet generator, like ixy's ixy-pktgen: IPv4/UDP frames with a correct header checksum
// and a 32-bit sequence number, sent as fast as the NIC takes them or at a given rate.
// Every buffer of its own mempool is filled with the frame once; per packet only the
// sequence number is written.
const { open } = require('../index');
const { PacketBatch } = require('../memory/batch');
const { Mempool } = require('../memory/mempool');
const packet = require('../packet');
const { runLoop } = require('./loop');
const { idleMode } = require('../device/idle');
const { IxyError } = require('../host/errors');
const { formatTotals, noTraffic } = require('./stats');

// Writes the sequence numbers seq, seq + 1, ... into the batch's first n frames and sets
// their lengths. It indexes one view over the whole pool (batch.frameAt(i)) instead of
// loading one Uint8Array per packet. seq is an int32 (the caller passes `seq | 0`): the
// field is 32 bits on the wire, and a count past 2^31 stays a small integer.
function stampFrames(batch, n, seq, size) {
  const bytes = batch.pool.bytes;
  const lengths = batch.lengths;
  for (let i = 0; i < n; i++) {
    packet.writeSeq(bytes, (seq + i) | 0, batch.frameAt(i));
    lengths[i] = size;
  }
}

// The generator's own buffers (poolEntries of them), each holding the frame once. A pool
// that cannot be made (no hugepages left) closes the device again: nothing is left open.
function framePool(dev, entries, frame) {
  try {
    const pool = new Mempool({ entries, bufferSize: 2048 });
    for (const b of pool.buffers) b.set(frame);
    return pool;
  } catch (err) {
    dev.close();
    throw err;
  }
}

async function generate(address, {
  batchSize = 32, size = 60, rate = 0, count = 0, seconds = 0, out = process.stdout, deviceOptions = {}, frame = {},
  poolEntries = 4096, idle, stop,
} = {}) {
  // Validate before touching the device.
  // idle: with a rate, 'backoff' (default) sleeps between the sends of a slow rate and
  // sends what fell due meanwhile as one burst; 'spin' keeps the spacing (lib/device/idle.js).
  const idleAs = idleMode(idle, deviceOptions.idle) || 'backoff';
  if (idleAs === 'interrupt') {
    throw new IxyError('EINVAL', "generate sends on its own clock: idle 'interrupt' (waiting for received frames) does not apply; use 'backoff' or 'spin'");
  }
  const template = new Uint8Array(packet.MAX_FRAME);
  packet.writeUdpFrame(template, { size, ...frame });
  const batch = new PacketBatch(batchSize);
  let dev;
  try {
    dev = await open(address, { rxQueues: 1, ...deviceOptions, signal: stop });
  } catch (err) {
    if (err.code !== 'EABORTED') throw err;
    const stats = noTraffic(); // stopped (SIGINT) while waiting for link: nothing sent
    out.write(`${formatTotals(address, stats)}\n`);
    return { reason: 'signal', sent: 0, stats, pools: [] };
  }
  const pool = framePool(dev, poolEntries, template.subarray(0, size));
  const txQueue = dev.txQueues[0];
  let seq = 0;
  const start = performance.now();

  const step = () => {
    let want = batchSize;
    if (count > 0 && count - seq < want) want = count - seq;
    if (rate > 0) {
      const allowed = Math.floor(((performance.now() - start) / 1000) * rate) - seq;
      if (allowed < want) want = allowed;
    }
    if (want <= 0) {
      txQueue.reclaim();
      return count > 0 && seq >= count;
    }
    const got = pool.allocMany(batch.ids, want);
    batch.count = got;
    batch.pool = pool;
    stampFrames(batch, got, seq | 0, size);
    const sent = txQueue.send(batch);
    if (sent < got) batch.freeFrom(sent); // ring full: those sequence numbers are reused
    seq += sent;
    return count > 0 && seq >= count;
  };

  try {
    out.write(`generating ${size}-byte frames on ${dev.address} (${dev.mac})${rate ? ` at ${rate} pps` : ''}${count ? `, ${count} frames` : ''}\n`);
    const reason = await runLoop({ devices: [dev], step, seconds, out, idle: idleAs, stop });
    dev.stop(); // first: frames the NIC never sent leave the TX totals for the dropped ones
    const stats = dev.stats();
    out.write(`${formatTotals(dev.address, stats)}\n`);
    return { reason, sent: seq, stats, pools: [pool, ...dev.pools] };
  } finally {
    dev.close();
    pool.close();
  }
}

module.exports = { generate, stampFrames };
