'use strict';

// Building and reading Ethernet/IPv4/UDP frames in place, in a buffer's Uint8Array.
// The layout matches the device model's traffic: a 32-bit big-endian sequence number
// right after the UDP header (frame offset 42), then bytes whose value is their offset.

const ETH_HEADER = 14;
const IPV4_HEADER = 20;
const UDP_HEADER = 8;
const SEQ_OFFSET = ETH_HEADER + IPV4_HEADER + UDP_HEADER; // 42
const MIN_FRAME = 60; // without the 4-byte FCS the NIC appends
const MAX_FRAME = 1514;

function parseMac(text) {
  const parts = String(text).split(':');
  if (parts.length !== 6 || parts.some((p) => !/^[0-9a-fA-F]{2}$/.test(p))) {
    throw new TypeError(`'${text}' is not a MAC address (expected aa:bb:cc:dd:ee:ff)`);
  }
  return parts.map((p) => parseInt(p, 16));
}

function parseIpv4(text) {
  const parts = String(text).split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new TypeError(`'${text}' is not an IPv4 address`);
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
  if (!Number.isInteger(size) || size < MIN_FRAME || size > MAX_FRAME) {
    throw new RangeError(`frame size must be ${MIN_FRAME}..${MAX_FRAME}, got ${size}`);
  }
  b.set(parseMac(dst), 0);
  b.set(parseMac(src), 6);
  put16(b, 12, 0x0800);
  const ip = ETH_HEADER;
  b[ip] = 0x45; // version 4, 5 words of header
  b[ip + 1] = 0;
  put16(b, ip + 2, size - ETH_HEADER); // total length
  put16(b, ip + 4, 0); // identification
  put16(b, ip + 6, 0); // flags, fragment offset
  b[ip + 8] = ttl;
  b[ip + 9] = 17; // UDP
  put16(b, ip + 10, 0);
  b.set(parseIpv4(srcIp), ip + 12);
  b.set(parseIpv4(dstIp), ip + 16);
  put16(b, ip + 10, internetChecksum(b, ip, IPV4_HEADER));
  const udp = ip + IPV4_HEADER;
  put16(b, udp, srcPort);
  put16(b, udp + 2, dstPort);
  put16(b, udp + 4, size - ETH_HEADER - IPV4_HEADER);
  put16(b, udp + 6, 0);
  for (let i = SEQ_OFFSET; i < size; i++) b[i] = i & 0xff;
  writeSeq(b, 0);
  return size;
}

function writeSeq(b, seq) {
  b[SEQ_OFFSET] = seq >>> 24;
  b[SEQ_OFFSET + 1] = (seq >>> 16) & 0xff;
  b[SEQ_OFFSET + 2] = (seq >>> 8) & 0xff;
  b[SEQ_OFFSET + 3] = seq & 0xff;
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

module.exports = {
  SEQ_OFFSET, MIN_FRAME, MAX_FRAME,
  parseMac, parseIpv4, internetChecksum, writeUdpFrame, writeSeq, readSeq, isValidUdp,
};
