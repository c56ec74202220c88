#!/usr/bin/env node
'use strict';

// A top-N counter: frames and bytes per flow (IPv4 source and destination, protocol,
// ports), the N biggest printed every second and at the end.
//
//   sudo node examples/top-talkers.js 0000:03:00.0 [--top 10] [--seconds s]
//
// In your own project: require('ixy').
const ixy = require('..');

const { packet } = ixy;

function parseArgs(argv) {
  const o = { address: argv[0], top: 10, seconds: 0 };
  for (let i = 1; i < argv.length; i += 2) {
    if (argv[i] === '--top') o.top = Number(argv[i + 1]);
    else if (argv[i] === '--seconds') o.seconds = Number(argv[i + 1]);
    else throw new ixy.IxyError('EINVAL', `unknown argument ${argv[i]} (--top, --seconds)`);
  }
  return o;
}

// Flows found through a Map keyed by a string of the five numbers. That string is made
// per frame (an allocation per frame: fine at a few Mpps on a spare core); a tool that
// must keep up with 10 GbE line rate would hash the five numbers into a table of its own.
class FlowTable {
  constructor() {
    this.index = new Map();
    this.flows = [];
  }

  add(info, length) {
    const key = `${info.srcIp}:${info.srcPort}>${info.dstIp}:${info.dstPort}/${info.protocol}`;
    let flow = this.index.get(key);
    if (flow === undefined) {
      flow = { src: `${packet.ipToString(info.srcIp)}:${info.srcPort}`, dst: `${packet.ipToString(info.dstIp)}:${info.dstPort}`, protocol: info.protocol, frames: 0, bytes: 0 };
      this.index.set(key, flow);
      this.flows.push(flow);
    }
    flow.frames++;
    flow.bytes += length;
  }

  top(n) {
    return [...this.flows].sort((x, y) => y.frames - x.frames || y.bytes - x.bytes).slice(0, n);
  }
}

const PROTOCOLS = { [packet.IPPROTO_UDP]: 'udp', [packet.IPPROTO_TCP]: 'tcp', [packet.IPPROTO_ICMP]: 'icmp' };

function print(flows, heading) {
  console.log(heading);
  flows.forEach((f, i) => console.log(`${String(i + 1).padStart(3)}. ${f.src} -> ${f.dst} ${PROTOCOLS[f.protocol] || f.protocol} frames ${f.frames} bytes ${f.bytes}`));
}

async function main() {
  const { address, top, seconds } = parseArgs(process.argv.slice(2));
  const dev = await ixy.open(address, { txQueues: 0 });
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  if (seconds > 0) setTimeout(() => stop.abort(), seconds * 1000);
  const table = new FlowTable();
  const info = new packet.FrameInfo();
  let other = 0;
  const report = setInterval(() => print(table.top(top), `top ${top} flows so far:`), 1000);
  console.log(`counting flows on ${dev.address}; Ctrl-C stops`);
  try {
    for await (const batch of dev.receive(0, { batchSize: 64, signal: stop.signal })) {
      for (let i = 0; i < batch.count; i++) {
        if (packet.parseFrame(batch.data(i), batch.lengths[i], info) < 0) other++;
        else table.add(info, batch.lengths[i]);
      }
    }
  } finally {
    clearInterval(report);
    dev.close();
  }
  print(table.top(top), `top ${top} flows (${table.flows.length} flows, ${other} frames not IPv4):`);
}

main().catch((err) => {
  console.error(`top-talkers: ${err.message}`);
  process.exitCode = 1;
});
