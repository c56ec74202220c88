'use strict';

// TCP for tool authors: a header writer, the TCP/UDP checksum over the pseudo-header, and
// the flags in FrameInfo. tshark is the reference for what the frames say.
const assert = require('assert');
const path = require('path');
const ixy = require('../../lib');
const { suiteTmpDir, tsharkFields } = require('../support/helpers');
const { packet } = ixy;

// Ethernet + IPv4 + TCP with `payload` bytes; returns the frame's length.
function tcpFrame(b, { flags, payload = 0, seq = 1000, ack = 0 }) {
  let at = packet.writeEthernetHeader(b, '02:00:00:00:00:02', '02:00:00:00:00:01');
  const l3 = at;
  at = packet.writeIpv4Header(b, at, { srcIp: '10.0.0.1', dstIp: '10.0.0.2', protocol: packet.IPPROTO_TCP, totalLength: 20 + 20 + payload });
  at = packet.writeTcpHeader(b, at, { srcPort: 40000, dstPort: 80, seq, ack, flags });
  for (let i = 0; i < payload; i++) b[at + i] = (i * 7) & 0xff;
  packet.writeL4Checksum(b, l3);
  return at + payload;
}

describe('TCP helpers', function () {
  const tmpDir = suiteTmpDir('ixy-tcp-');

  it('writeTcpHeader + writeL4Checksum make segments tshark calls correct, with the flags given', function () {
    const file = path.join(tmpDir(), 'tcp.pcap');
    const writer = new ixy.PcapWriter(file);
    const b = new Uint8Array(256);
    const cases = [
      { flags: packet.TCP_SYN },
      { flags: packet.TCP_SYN | packet.TCP_ACK, ack: 1001 },
      { flags: packet.TCP_PSH | packet.TCP_ACK, payload: 13, ack: 5 }, // odd length: the padding byte
      { flags: packet.TCP_FIN | packet.TCP_ACK, ack: 7 },
      { flags: packet.TCP_RST },
    ];
    for (const c of cases) writer.write(b, tcpFrame(b, c), 0, 0);
    writer.close();
    const rows = tsharkFields(file, ['tcp.flags', 'tcp.checksum.status', 'tcp.len', 'tcp.ack_raw']);
    assert.strictEqual(rows.length, cases.length);
    rows.forEach(([flags, status, len, ack], i) => {
      assert.strictEqual(Number(flags), cases[i].flags, `frame ${i} flags`);
      assert.ok(status === 'Good' || status === '1', `frame ${i}: checksum status ${status}`);
      assert.strictEqual(Number(len), cases[i].payload || 0);
      assert.strictEqual(Number(ack), cases[i].ack || 0);
    });
  });

  it('parseFrame reads the TCP flags, and 0 for UDP', function () {
    const b = new Uint8Array(256);
    const info = new packet.FrameInfo();
    const n = tcpFrame(b, { flags: packet.TCP_SYN | packet.TCP_ECE });
    assert.strictEqual(packet.parseFrame(b, n, info), packet.IPPROTO_TCP);
    assert.strictEqual(info.tcpFlags, packet.TCP_SYN | packet.TCP_ECE);
    assert.deepStrictEqual([info.srcPort, info.dstPort], [40000, 80]);
    packet.writeUdpFrame(b, { size: 60 });
    assert.strictEqual(packet.parseFrame(b, 60, info), packet.IPPROTO_UDP);
    assert.strictEqual(info.tcpFlags, 0);
  });

  it('writeL4Checksum also fills a UDP checksum tshark accepts', function () {
    const b = new Uint8Array(128);
    packet.writeUdpFrame(b, { size: 77 });
    const sum = packet.writeL4Checksum(b, packet.ETH_HEADER);
    assert.notStrictEqual(sum, 0);
    const file = path.join(tmpDir(), 'udp.pcap');
    const writer = new ixy.PcapWriter(file);
    writer.write(b, 77, 0, 0);
    writer.close();
    const [[status]] = tsharkFields(file, ['udp.checksum.status']);
    assert.ok(status === 'Good' || status === '1', `checksum status ${status}`);
    assert.throws(() => packet.writeL4Checksum(new Uint8Array(64).fill(0x45, 14, 15), 14), { code: 'EINVAL', message: /TCP or UDP/ });
  });
});
