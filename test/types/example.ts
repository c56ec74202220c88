// A small tool written against index.d.ts; test/api/api.test.js compiles it with tsc --noEmit.
// It counts frames per IP protocol, reflects UDP to port 7, and keeps the last frames
// in a pcap file.
import * as ixy from '../..';

const { packet } = ixy;

async function main(address: string): Promise<void> {
  ixy.tuneJit();
  let dev: ixy.Device;
  try {
    dev = await ixy.open(address, { rxQueues: 1, txQueues: 1, rxRingSize: 1024, debug: true, rssKey: new Uint8Array(40) });
  } catch (err) {
    if (err instanceof ixy.IxyError && err.code === 'ENODEV') console.log(`no such device: ${err.message}`);
    throw err;
  }
  console.log(dev.address, dev.driver, dev.mac, dev.linkSpeed, dev.promiscuous);
  // Any Linux interface through AF_XDP, its modes chosen (open() of a PCI device refuses them).
  const bind: ixy.XdpBindMode = 'copy';
  const xdp = await ixy.open('xdp:veth0@0', { mode: bind, xdpMode: 'generic', rxRingSize: 2048 });
  const how: string = `${xdp.mode ?? 'not bound'} ${xdp.xdpMode ?? 'not attached'}`;
  console.log(how);
  xdp.close();
  dev.promiscuous = false;

  const counts = new Map<number, number>();
  const info = new packet.FrameInfo();
  const writer = new ixy.PcapWriter('/tmp/example.pcap', { nanoseconds: true });
  const clock = new ixy.CaptureClock(new ixy.CaptureClock().base());
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

// Frames as copies and device events (issue 35).
async function framesAndEvents(dev: ixy.Device): Promise<number> {
  dev.on('link', (e) => { const up: boolean = e.up; void up; });
  dev.on('txhang', (e) => { const q: number = e.queue; void q; });
  dev.on('lost', (err) => { const code: string = err.code; void code; });
  let bytes = 0;
  for await (const f of dev.frames(0, { debug: true })) {
    bytes += f.length + f.data[0] * 0 + f.timestamp * 0;
    break;
  }
  return bytes;
}
void framesAndEvents;

// The commands' loop for a program's own per-batch function (issue 35).
async function forwardWithRun(a: ixy.Device, b: ixy.Device): Promise<string> {
  const batch = new ixy.PacketBatch(32);
  const work = (rx: ixy.RxQueue | null, tx: ixy.TxQueue | null): boolean => {
    if (rx === null || tx === null || rx.receive(batch) === 0) return false;
    batch.freeFrom(tx.send(batch));
    return false;
  };
  return ixy.run(work, { paths: [[a.rxQueues[0], b.txQueues[0]]], devices: [a, b], seconds: 1, json: true });
}
void forwardWithRun;

// A TCP SYN built header by header, and its flags read back (issue 35).
function tcpSyn(b: Uint8Array): number {
  let at = ixy.packet.writeEthernetHeader(b, '02:00:00:00:00:02', '02:00:00:00:00:01');
  const l3 = at;
  at = ixy.packet.writeIpv4Header(b, at, { srcIp: '10.0.0.1', dstIp: '10.0.0.2', protocol: ixy.packet.IPPROTO_TCP, totalLength: 40 });
  at = ixy.packet.writeTcpHeader(b, at, { srcPort: 1234, dstPort: 80, flags: ixy.packet.TCP_SYN });
  ixy.packet.writeL4Checksum(b, l3);
  const info = new ixy.packet.FrameInfo();
  ixy.packet.parseFrame(b, at, info);
  return info.tcpFlags & ixy.packet.TCP_SYN;
}
void tcpSyn;

// The model's API, fully typed (issue 35).
async function modelApi(model: ixy.Model): Promise<number> {
  await model.source(0, { rate: 1000, count: 10, udpsum: 'bad', fcs: 'good' });
  await model.stall(0, 10);
  const reply = await model.command('stats 0');
  const s = await model.stats(0);
  const paused: number = s.sourcePausedUs;
  return paused + s.interrupts[0] + (reply ? 0 : 1);
}
void modelApi;

// The traffic generator and the two commands as functions (issue 44: exported from 'ixy').
async function generated(dev: ixy.Device): Promise<number> {
  const recipe = new ixy.FrameRecipe({ srcIp: '10.0.0.1-10.0.0.9', size: 'imix', vlan: 7 });
  const gen = new ixy.Generator({ recipe, entries: 8192 });
  const batch = new ixy.PacketBatch(32);
  const sent = gen.send(dev.txQueues[0], batch, 32);
  const rate = ixy.parseRate('1Mpps');
  const pacer = new ixy.SoftwarePacer('pps' in rate ? rate.pps : 1000);
  pacer.waitFor(1);
  gen.close();
  const g = await ixy.generate('0000:ff:00.0', { rate: '10k', count: 100, size: 64 });
  const r = await ixy.replay('0000:ff:00.0', '/tmp/in.pcap', { speed: 2, loop: 0 });
  return sent + recipe.seqAt + g.sent + r.stats.txPackets;
}
void generated;
