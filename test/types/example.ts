// A small tool written against index.d.ts; test/api.test.js compiles it with tsc --noEmit.
// It counts frames per IP protocol, reflects UDP to port 7, and keeps the last frames
// in a pcap file.
import * as ixy from '../..';

const { packet } = ixy;

async function main(address: string): Promise<void> {
  ixy.tuneJit();
  let dev: ixy.Device;
  try {
    dev = await ixy.open(address, { rxQueues: 1, txQueues: 1, rxRingSize: 1024, debug: true });
  } catch (err) {
    if (err instanceof ixy.IxyError && err.code === 'ENODEV') console.log(`no such device: ${err.message}`);
    throw err;
  }
  console.log(dev.address, dev.driver, dev.mac, dev.linkSpeed, dev.promiscuous);
  dev.promiscuous = false;

  const counts = new Map<number, number>();
  const info = new packet.FrameInfo();
  const writer = new ixy.PcapWriter('/tmp/example.pcap', { nanoseconds: true });
  const clock = new ixy.CaptureClock();
  const timer = setInterval(() => console.log(dev.stats().rxPackets), 1000);
  let seen = 0;

  const stop = new AbortController();
  setTimeout(() => stop.abort(), 60000); // ends the loop below after a minute
  for await (const batch of dev.receive(0, { batchSize: 64, signal: stop.signal })) {
    clock.now();
    writer.writeBatch(batch, clock.sec, clock.nsec);
    let reflect = 0;
    for (let i = 0; i < batch.count; i++) {
      const bytes: Uint8Array = batch.data(i);
      const length: number = batch.lengths[i];
      const protocol = packet.parseFrame(bytes, length, info);
      counts.set(protocol, (counts.get(protocol) ?? 0) + 1);
      if (protocol === packet.IPPROTO_UDP && info.dstPort === 7) {
        packet.swapMacs(bytes);
        // Move the packets to reflect to the front of the batch.
        batch.ids[reflect] = batch.ids[i];
        batch.lengths[reflect] = length;
        reflect++;
      } else {
        batch.pool!.free(batch.ids[i]);
      }
    }
    batch.count = reflect;
    const sent: number = dev.txBatch(0, batch);
    console.log(`reflected ${sent}, ${batch.count - batch.sent} left for the iterator to free`);
    seen += batch.count;
    if (seen > 1000000) break;
  }
  // Capture filters in tcpdump's language: a predicate, and receive()'s filter option.
  const dns: ixy.FilterPredicate = ixy.compileFilter('udp and dst port 53');
  console.log(dns(new Uint8Array(64), 60), ixy.compileFilter('tcp').expression);
  for await (const batch of dev.receive(0, { filter: 'tcp[tcpflags] & tcp-syn != 0', signal: AbortSignal.timeout(1000) })) {
    console.log(batch.count, batch.keepIf(dns));
  }
  clearInterval(timer);
  writer.close();
  const stats: ixy.DeviceStats = dev.stats();
  dev.close();

  for (const [protocol, n] of counts) console.log(protocol === -1 ? 'not IPv4' : `protocol ${protocol}`, n);
  console.log(stats.rxPackets, stats.rxMissed);

  // The lower layers: a batch of one's own buffers, sent by hand.
  const pool = new ixy.Mempool({ entries: 1024, bufferSize: 2048 });
  const own = new ixy.PacketBatch(32, pool);
  own.count = pool.allocMany(own.ids, 32);
  for (let i = 0; i < own.count; i++) own.lengths[i] = packet.writeUdpFrame(pool.buffers[own.ids[i]], { size: 60, dstPort: 7 });
  own.release();
  const ip = new Uint8Array(64);
  const next = packet.writeIpv4Header(ip, packet.writeEthernetHeader(ip, 'ff:ff:ff:ff:ff:ff', [2, 0, 0, 0, 0, 1]), { srcIp: '10.0.0.1', dstIp: 0x0a000002, totalLength: 28 });
  packet.writeUdpHeader(ip, next, 1, 7, 8);
  pool.close();

  for (const d of ixy.listDevices()) console.log(d.address, d.driver ?? '-');
  const file: ixy.PcapFile = ixy.readPcap('/tmp/example.pcap');
  console.log(file.header.nanoseconds, file.frames.length, file.frames[0]?.data.length);
}

main('0000:03:00.0').catch((err: unknown) => console.log(err));
