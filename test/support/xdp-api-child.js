'use strict';
// The library's ways of receiving, on an AF_XDP device: receive(), frames(),
// createReadStream() and ixy.run(), each until it has 20 UDP frames to port 6000, for
// test/xdp/xdp-traffic.test.js. Prints one JSON line: frames per way, and whether each was a
// UDP datagram to port 6000 (EtherType IPv4, protocol 17, destination port 6000).
const ixy = require('../../lib/index');

const WANT = 20;
const isOurs = (data, length) => length >= 42 && data[12] === 0x08 && data[13] === 0 && data[23] === 17 && ((data[36] << 8) | data[37]) === 6000;

async function main() {
  const dev = await ixy.open(process.argv[2]);
  const got = {};
  const count = (way, data, length) => {
    const g = got[way] || (got[way] = { frames: 0, ours: 0 });
    g.frames++;
    if (isOurs(data, length)) g.ours++;
  };
  console.log('ready');
  for await (const batch of dev.receive(0)) {
    for (let i = 0; i < batch.count; i++) count('receive', batch.data(i), batch.lengths[i]);
    batch.release();
    if (got.receive.frames >= WANT) break;
  }
  for await (const f of dev.frames(0)) {
    count('frames', f.data, f.length);
    if (got.frames.frames >= WANT) break;
  }
  for await (const f of dev.createReadStream(0)) {
    count('stream', f.data, f.length);
    if (got.stream.frames >= WANT) break;
  }
  const batch = new ixy.PacketBatch(32);
  await ixy.run(() => {
    const n = dev.rxBatch(0, batch);
    for (let i = 0; i < n; i++) count('run', batch.data(i), batch.lengths[i]);
    batch.release();
    return got.run !== undefined && got.run.frames >= WANT;
  }, { devices: [dev] });
  dev.close();
  console.log(JSON.stringify(got));
}

main().catch((err) => {
  console.log(JSON.stringify({ code: err.code, message: err.message }));
});
