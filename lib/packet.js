'use strict';

// Building and reading Ethernet/IPv4/UDP frames in place, in a buffer's Uint8Array.
// The layout matches the device model's traffic: a 32-bit big-endian sequence number
// right after the UDP header (frame offset 42), then bytes whose value is their offset.
const { IxyError, shown, checkInteger } = require('./host/errors');

const ETH_HEADER = 14;
const IPV4_HEADER = 20;
const UDP_HEADER = 8;
const SEQ_OFFSET = ETH_HEADER + IPV4_HEADER + UDP_HEADER; // 42
const MIN_FRAME = 60; // without the 4-byte FCS the NIC appends
const MAX_FRAME = 1514;

function parseMac(text) {
  const parts = typeof text === 'string' ? text.split(':') : [];
  if (parts.length !== 6 || parts.some((p) => !/^[0-9a-fA-F]{2}$/.test(p))) {
    throw new IxyError('EINVAL', `${typeof text === 'string' ? `'${text}'` : shown(text)} is not a MAC address (expected aa:bb:cc:dd:ee:ff)`);
  }
  return parts.map((p) => parseInt(p, 16));
}

function parseIpv4(text) {
  const parts = typeof text === 'string' ? text.split('.').map(Number) : [];
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new IxyError('EINVAL', `${typeof text === 'string' ? `'${text}'` : shown(text)} is not an IPv4 address (expected a.b.c.d)`);
  }
  return parts;
}

// RFC 1071 ones'-complement sum over bytes [offset, offset + length).
function internetChecksum(bytes, offset, length) {
  let sum = 0;
  for (let i = 0; i < length; i += 2) {
    sum += (bytes[offset + i] << 8) | (i + 1 < length ? bytes[offset + i + 1] : 0);
  }
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

function put16(b, offset, value) {
  b[offset] = value >>> 8;
  b[offset + 1] = value & 0xff;
}

// Writes a whole frame of `size` bytes into b: Ethernet, IPv4 (with its header checksum),
// UDP (checksum 0, "none", allowed for IPv4 by RFC 768), sequence number 0, pattern.
function writeUdpFrame(b, {
  size = MIN_FRAME, dst = 'ff:ff:ff:ff:ff:ff', src = '02:00:00:00:00:01',
  srcIp = '10.0.0.1', dstIp = '10.1.0.1', srcPort = 1024, dstPort = 5000, ttl = 64,
} = {}) {
  checkInteger('frame size', size, MIN_FRAME, MAX_FRAME);
  if (!(b instanceof Uint8Array) || b.length < size) {
    throw new IxyError('EINVAL', `writeUdpFrame(b, options) writes into a Uint8Array of at least ${size} bytes, got ${b instanceof Uint8Array ? `${b.length} bytes` : shown(b)}`);
  }
  const ip = writeEthernetHeader(b, dst, src);
  const udp = writeIpv4Header(b, ip, { srcIp, dstIp, protocol: IPPROTO_UDP, totalLength: size - ETH_HEADER, ttl });
  writeUdpHeader(b, udp, srcPort, dstPort, size - udp);
  for (let i = SEQ_OFFSET; i < size; i++) b[i] = i & 0xff;
  writeSeq(b, 0);
  return size;
}

// Writes the 32-bit sequence number big-endian into the frame that starts at b[at].
function writeSeq(b, seq, at = 0) {
  const o = at + SEQ_OFFSET;
  b[o] = seq >>> 24;
  b[o + 1] = (seq >>> 16) & 0xff;
  b[o + 2] = (seq >>> 8) & 0xff;
  b[o + 3] = seq & 0xff;
}

function readSeq(b) {
  return ((b[SEQ_OFFSET] << 24) | (b[SEQ_OFFSET + 1] << 16) | (b[SEQ_OFFSET + 2] << 8) | b[SEQ_OFFSET + 3]) >>> 0;
}

// Whether b[0..length) is Ethernet + IPv4 + UDP with a correct IPv4 header checksum.
function isValidUdp(b, length) {
  if (length < SEQ_OFFSET || b[12] !== 0x08 || b[13] !== 0x00) return false;
  if (b[ETH_HEADER] !== 0x45 || b[ETH_HEADER + 9] !== 17) return false;
  return internetChecksum(b, ETH_HEADER, IPV4_HEADER) === 0;
}

// ---- Building headers one at a time (for tools that make other frames than writeUdpFrame's).

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_VLAN = 0x8100;
const IPPROTO_ICMP = 1;
const IPPROTO_TCP = 6;
const IPPROTO_UDP = 17;
// TCP header flags (RFC 9293 3.1), as FrameInfo.tcpFlags and writeTcpHeader take them.
const TCP_FIN = 0x01;
const TCP_SYN = 0x02;
const TCP_RST = 0x04;
const TCP_PSH = 0x08;
const TCP_ACK = 0x10;
const TCP_URG = 0x20;
const TCP_ECE = 0x40;
const TCP_CWR = 0x80;
const TCP_HEADER = 20;

// dst, src: 'aa:bb:..' strings or arrays of 6 bytes. Returns the offset after the header.
function writeEthernetHeader(b, dst, src, etherType = ETHERTYPE_IPV4) {
  b.set(typeof dst === 'string' ? parseMac(dst) : dst, 0);
  b.set(typeof src === 'string' ? parseMac(src) : src, 6);
  put16(b, 12, etherType);
  return ETH_HEADER;
}

// A 20-byte IPv4 header at `offset` with its checksum; addresses are strings or uint32s.
function writeIpv4Header(b, offset, { srcIp, dstIp, protocol = IPPROTO_UDP, totalLength, ttl = 64, id = 0 }) {
  b[offset] = 0x45;
  b[offset + 1] = 0;
  put16(b, offset + 2, totalLength);
  put16(b, offset + 4, id);
  put16(b, offset + 6, 0);
  b[offset + 8] = ttl;
  b[offset + 9] = protocol;
  put16(b, offset + 10, 0);
  putIp(b, offset + 12, srcIp);
  putIp(b, offset + 16, dstIp);
  put16(b, offset + 10, internetChecksum(b, offset, IPV4_HEADER));
  return offset + IPV4_HEADER;
}

// An 8-byte UDP header at `offset`; `length` covers header and payload. Checksum 0 (none).
function writeUdpHeader(b, offset, srcPort, dstPort, length) {
  put16(b, offset, srcPort);
  put16(b, offset + 2, dstPort);
  put16(b, offset + 4, length);
  put16(b, offset + 6, 0);
  return offset + UDP_HEADER;
}

// A 20-byte TCP header at `offset` (no options), checksum 0: fill it with
// writeL4Checksum() once the payload is in place. Returns the offset after the header.
function writeTcpHeader(b, offset, { srcPort, dstPort, seq = 0, ack = 0, flags = TCP_SYN, window = 65535 }) {
  put16(b, offset, srcPort);
  put16(b, offset + 2, dstPort);
  put32(b, offset + 4, seq);
  put32(b, offset + 8, ack);
  b[offset + 12] = (TCP_HEADER / 4) << 4; // data offset in words
  b[offset + 13] = flags;
  put16(b, offset + 14, window);
  put16(b, offset + 16, 0); // checksum
  put16(b, offset + 18, 0); // urgent pointer
  return offset + TCP_HEADER;
}

// The TCP or UDP checksum of the IPv4 packet at b[l3], over the pseudo-header (RFC 9293
// 3.1, RFC 768) and the segment its total length says, written into the header. A UDP
// sum of 0 is sent as 0xffff (0 means "none"). Returns the checksum.
function writeL4Checksum(b, l3) {
  const ihl = (b[l3] & 0x0f) * 4;
  const protocol = b[l3 + 9];
  const l4 = l3 + ihl;
  const length = ((b[l3 + 2] << 8) | b[l3 + 3]) - ihl;
  const at = protocol === IPPROTO_TCP ? l4 + 16 : protocol === IPPROTO_UDP ? l4 + 6 : -1;
  if (at < 0) throw new IxyError('EINVAL', `writeL4Checksum() needs a TCP or UDP packet, got IP protocol ${protocol}`);
  put16(b, at, 0);
  let sum = protocol + length;
  for (let i = 12; i < 20; i += 2) sum += (b[l3 + i] << 8) | b[l3 + i + 1];
  for (let i = 0; i < length; i += 2) sum += (b[l4 + i] << 8) | (i + 1 < length ? b[l4 + i + 1] : 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  let check = ~sum & 0xffff;
  if (check === 0 && protocol === IPPROTO_UDP) check = 0xffff;
  put16(b, at, check);
  return check;
}

function put32(b, offset, value) {
  put16(b, offset, value >>> 16);
  put16(b, offset + 2, value & 0xffff);
}

function putIp(b, offset, ip) {
  if (typeof ip === 'number') {
    b[offset] = ip >>> 24;
    b[offset + 1] = (ip >>> 16) & 0xff;
    b[offset + 2] = (ip >>> 8) & 0xff;
    b[offset + 3] = ip & 0xff;
  } else {
    b.set(parseIpv4(ip), offset);
  }
}

// Exchanges source and destination MAC in place: what a reflector does to every frame.
function swapMacs(b) {
  for (let i = 0; i < 6; i++) {
    const t = b[i];
    b[i] = b[i + 6];
    b[i + 6] = t;
  }
}

// ---- Parsing, into one object the caller reuses: no allocation per packet.

class FrameInfo {
  constructor() {
    this.etherType = 0; // after a VLAN tag, if any
    this.vlan = -1; // VLAN id, or -1 when untagged
    this.l3 = 0; // offset of the IP header
    this.protocol = -1; // IPv4 protocol (IPPROTO_*), -1 when not IPv4
    this.ttl = 0;
    this.srcIp = 0; // uint32, see ipToString
    this.dstIp = 0;
    this.l4 = 0; // offset of the TCP/UDP header
    this.srcPort = 0; // TCP and UDP only
    this.dstPort = 0;
    this.payload = 0; // offset of the UDP payload (TCP: of the TCP header)
    this.payloadLength = 0;
    this.tcpFlags = 0; // TCP only: TCP_SYN, TCP_ACK, ... (0 otherwise)
  }
}

// Reads Ethernet (with an optional 802.1Q tag), IPv4 and UDP/TCP ports from b[0..length)
// into `info`. Returns info.protocol: the IPv4 protocol, or -1 if the frame is not IPv4
// (or too short to be). Bounds are checked against `length`; checksums are not (see
// isValidUdp and internetChecksum).
function parseFrame(b, length, info) {
  info.protocol = -1;
  info.srcPort = 0;
  info.dstPort = 0;
  info.tcpFlags = 0;
  info.vlan = -1;
  if (length < ETH_HEADER) return -1;
  let l3 = ETH_HEADER;
  let type = (b[12] << 8) | b[13];
  if (type === ETHERTYPE_VLAN && length >= ETH_HEADER + 4) {
    info.vlan = ((b[14] << 8) | b[15]) & 0x0fff;
    type = (b[16] << 8) | b[17];
    l3 += 4;
  }
  info.etherType = type;
  info.l3 = l3;
  if (type !== ETHERTYPE_IPV4 || length < l3 + IPV4_HEADER || (b[l3] >>> 4) !== 4) return -1;
  const headerLength = (b[l3] & 0x0f) * 4;
  if (headerLength < IPV4_HEADER || length < l3 + headerLength) return -1;
  info.ttl = b[l3 + 8];
  info.srcIp = ((b[l3 + 12] << 24) | (b[l3 + 13] << 16) | (b[l3 + 14] << 8) | b[l3 + 15]) >>> 0;
  info.dstIp = ((b[l3 + 16] << 24) | (b[l3 + 17] << 16) | (b[l3 + 18] << 8) | b[l3 + 19]) >>> 0;
  const l4 = l3 + headerLength;
  info.l4 = l4;
  const protocol = b[l3 + 9];
  if ((protocol === IPPROTO_UDP || protocol === IPPROTO_TCP) && length >= l4 + 4) {
    info.srcPort = (b[l4] << 8) | b[l4 + 1];
    info.dstPort = (b[l4 + 2] << 8) | b[l4 + 3];
  }
  if (protocol === IPPROTO_TCP && length >= l4 + 14) info.tcpFlags = b[l4 + 13];
  info.payload = protocol === IPPROTO_UDP ? l4 + UDP_HEADER : l4;
  const ipEnd = l3 + ((b[l3 + 2] << 8) | b[l3 + 3]);
  info.payloadLength = Math.max(0, Math.min(ipEnd, length) - info.payload);
  info.protocol = protocol;
  return protocol;
}

// For printing (these allocate a string; keep them out of per-packet loops).
function ipToString(ip) {
  return `${ip >>> 24}.${(ip >>> 16) & 0xff}.${(ip >>> 8) & 0xff}.${ip & 0xff}`;
}

function macToString(b, offset = 0) {
  const parts = [];
  for (let i = 0; i < 6; i++) parts.push(b[offset + i].toString(16).padStart(2, '0'));
  return parts.join(':');
}

// Wrong arguments (no buffer, an options object missing) end as EINVAL naming the
// helper, not as a TypeError from inside it. The wrapper passes five arguments through
// (no rest parameter, no allocation); V8 inlines the helper into it, and try costs
// nothing until something throws.
function checked(name, fn) {
  return function checkedHelper(a, b, c, d, e) {
    try {
      return fn(a, b, c, d, e);
    } catch (err) {
      if (err instanceof IxyError) throw err;
      throw new IxyError('EINVAL', `packet.${name}(): wrong arguments (${err.message})`);
    }
  };
}

const helpers = {
  internetChecksum, writeUdpFrame, writeSeq, readSeq, isValidUdp, writeEthernetHeader, writeIpv4Header, writeUdpHeader,
  writeTcpHeader, writeL4Checksum, swapMacs, parseFrame, ipToString, macToString,
};
for (const [name, fn] of Object.entries(helpers)) helpers[name] = checked(name, fn);

module.exports = {
  ETH_HEADER, IPV4_HEADER, UDP_HEADER, TCP_HEADER, SEQ_OFFSET, MIN_FRAME, MAX_FRAME,
  ETHERTYPE_IPV4, ETHERTYPE_VLAN, IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP,
  TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK, TCP_URG, TCP_ECE, TCP_CWR,
  parseMac, parseIpv4, FrameInfo, ...helpers,
};
