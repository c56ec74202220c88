'use strict';

// Packet generator, like ixy's ixy-pktgen: IPv4/UDP frames with a correct header checksum
// and a 32-bit sequence number, sent as fast as the NIC takes them or at a given rate.
// Every buffer of its own mempool is filled with the frame once; per packet only the
// sequence number is written.
const { open } = require('../index');
const { PacketBatch } = require('../batch');
const { Mempool } = require('../mempool');
const packet = require('../packet');
const { runLoop } = require('./loop');
const { formatTotals } = require('../stats');

async function generate(address, {
  batchSize = 32, size = 60, rate = 0, count = 0, seconds = 0, out = process.stdout, deviceOptions = {}, frame = {},
} = {}) {
  // Validate before touching the device.
  const template = new Uint8Array(packet.MAX_FRAME);
  packet.writeUdpFrame(template, { size, ...frame });
  const batch = new PacketBatch(batchSize);
  const dev = await open(address, { rxQueues: 1, ...deviceOptions });
  const pool = new Mempool({ entries: 4096, bufferSize: 2048 });
  for (const b of pool.buffers) b.set(template.subarray(0, size));
  const txQueue = dev.txQueues[0];
  let seq = 0;
  const start = performance.now();
  out.write(`generating ${size}-byte frames on ${dev.address} (${dev.mac})${rate ? ` at ${rate} pps` : ''}${count ? `, ${count} frames` : ''}\n`);

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
    const buffers = pool.buffers;
    for (let i = 0; i < got; i++) {
      const b = buffers[batch.ids[i]];
      const s = seq + i;
      b[42] = s >>> 24; // packet.SEQ_OFFSET, written inline: this is the hot loop
      b[43] = (s >>> 16) & 0xff;
      b[44] = (s >>> 8) & 0xff;
      b[45] = s & 0xff;
      batch.lengths[i] = size;
    }
    batch.count = got;
    batch.pool = pool;
    const sent = txQueue.send(batch);
    if (sent < got) batch.freeFrom(sent); // ring full: those sequence numbers are reused
    seq += sent;
    return count > 0 && seq >= count;
  };

  try {
    const reason = await runLoop({ devices: [dev], step, seconds, out });
    const stats = dev.stats();
    out.write(`${formatTotals(dev.address, stats)}\n`);
    return { reason, sent: seq, stats, pools: [pool, ...dev.pools] };
  } finally {
    dev.close();
    pool.close();
  }
}

module.exports = { generate };
