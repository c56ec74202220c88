#!/usr/bin/env node
'use strict';

// A capture tool in the Node style: received frames as an object-mode stream of copies
// (dev.createReadStream()), piped through a Transform that keeps UDP frames to one port
// into a pcap file. Slower than `ixy pcap` (a copy and an object per frame), but nothing
// it holds on to can change under it.
//
//   sudo node examples/capture.js 0000:03:00.0 out.pcap [--count n] [--port 5000]
//
// In your own project: require('ixy').
const { Transform, Writable } = require('stream');
const { pipeline } = require('stream/promises');
const ixy = require('..');

const { packet } = ixy;

function parseArgs(argv) {
  const o = { address: argv[0], file: argv[1], count: 0, port: -1 };
  for (let i = 2; i < argv.length; i += 2) {
    if (argv[i] === '--count') o.count = Number(argv[i + 1]);
    else if (argv[i] === '--port') o.port = Number(argv[i + 1]);
    else throw new ixy.IxyError('EINVAL', `unknown argument ${argv[i]} (--count, --port)`);
  }
  return o;
}

async function main() {
  const { address, file, count, port } = parseArgs(process.argv.slice(2));
  const dev = await ixy.open(address, { txQueues: 0 });
  const writer = new ixy.PcapWriter(file);
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const info = new packet.FrameInfo();
  let written = 0;

  // Frames of other ports are left out; a frame is { data, length, timestamp }.
  const filter = new Transform({
    objectMode: true,
    transform(frame, _encoding, done) {
      const udp = packet.parseFrame(frame.data, frame.length, info) === packet.IPPROTO_UDP;
      done(null, port < 0 || (udp && info.dstPort === port) ? frame : undefined);
    },
  });
  const toFile = new Writable({
    objectMode: true,
    write(frame, _encoding, done) {
      const ms = frame.timestamp; // ms since 1970, with fractions
      const sec = Math.floor(ms / 1000);
      writer.write(frame.data, frame.length, sec, Math.round((ms - sec * 1000) * 1e6));
      written++;
      if (count > 0 && written >= count) stop.abort();
      done();
    },
  });

  console.log(`capturing on ${dev.address} to ${file}${port >= 0 ? `, UDP port ${port} only` : ''}; Ctrl-C stops`);
  try {
    await pipeline(dev.createReadStream(0), filter, toFile, { signal: stop.signal });
  } catch (err) {
    if (err.name !== 'AbortError') throw err;
  } finally {
    writer.close();
    const s = dev.stats();
    dev.close();
    console.log(`captured ${written} frames to ${file} (received ${s.rxPackets}, missed ${s.rxMissed})`);
  }
}

main().catch((err) => {
  console.error(`capture: ${err.message}`);
  process.exitCode = 1;
});
