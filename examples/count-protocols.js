#!/usr/bin/env node
'use strict';

// Counts received frames per protocol (UDP, TCP, ICMP, other IPv4, not IPv4) and prints the
// counts every second; Ctrl-C prints the totals and exits.
//
//   sudo node examples/count-protocols.js 0000:03:00.0
//
// In your own project: require('ixy').
const ixy = require('..');

const { packet } = ixy;
const NAMES = { [packet.IPPROTO_UDP]: 'udp', [packet.IPPROTO_TCP]: 'tcp', [packet.IPPROTO_ICMP]: 'icmp' };

async function main(address) {
  const dev = await ixy.open(address, { txQueues: 0 });
  // Closing the device ends the for-await loop below at its next step.
  process.once('SIGINT', () => dev.close());
  process.once('SIGTERM', () => dev.close());
  console.log(`counting on ${dev.address} (${dev.mac}); Ctrl-C stops`);

  // Counters indexed by IPv4 protocol number, plus one slot for "not IPv4": no Map or
  // object lookups per packet. FrameInfo is filled in place for every frame.
  const counts = new Float64Array(257);
  const NOT_IPV4 = 256;
  const info = new packet.FrameInfo();
  const report = setInterval(() => console.log(format(counts)), 1000);

  for await (const batch of dev.receive(0, { batchSize: 64 })) {
    for (let i = 0; i < batch.count; i++) {
      const protocol = packet.parseFrame(batch.data(i), batch.lengths[i], info);
      counts[protocol < 0 ? NOT_IPV4 : protocol]++;
    }
    // Nothing to free: the iterator gives the buffers back at the next step.
  }
  clearInterval(report);
  console.log(`total: ${format(counts)}`);
}

function format(counts) {
  const parts = [];
  let otherIpv4 = 0;
  for (let p = 0; p < 256; p++) {
    if (counts[p] === 0) continue;
    if (NAMES[p]) parts.push(`${NAMES[p]} ${counts[p]}`);
    else otherIpv4 += counts[p];
  }
  if (otherIpv4) parts.push(`other-ipv4 ${otherIpv4}`);
  if (counts[256]) parts.push(`not-ipv4 ${counts[256]}`);
  return parts.length ? parts.join(', ') : 'no frames';
}

main(process.argv[2]).catch((err) => {
  console.error(`count-protocols: ${err.message}`);
  process.exitCode = 1;
});
