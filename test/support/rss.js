'use strict';
// RSS for the tests: an independent Toeplitz hash (as Microsoft's "RSS hashing functions"
// and 82599 datasheet 7.1.2.8.1 define it), the published verification key and vectors,
// and the source frames' tuples. Nothing here comes from the model or the driver.

// The key of Microsoft's "Verifying the RSS Hash Calculation" (also DPDK's default).
const MS_KEY = Buffer.from(
  '6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa', 'hex');

// Its IPv4 table: destination, source, then the expected hash over the addresses only
// and over addresses and TCP ports.
const MS_VECTORS = [
  { dst: '161.142.100.80', dport: 1766, src: '66.9.149.187', sport: 2794, ipv4: 0x323e8fc2, tcp: 0x51ccc178 },
  { dst: '65.69.140.83', dport: 4739, src: '199.92.111.2', sport: 14230, ipv4: 0xd718262a, tcp: 0xc626b0ea },
  { dst: '12.22.207.184', dport: 38024, src: '24.19.198.95', sport: 12898, ipv4: 0xd2d0a5de, tcp: 0x5c2b394a },
  { dst: '209.142.163.6', dport: 2217, src: '38.27.205.30', sport: 48228, ipv4: 0x82989176, tcp: 0xafc7327f },
  { dst: '202.188.127.2', dport: 1303, src: '153.39.163.191', sport: 44251, ipv4: 0x5d1809c5, tcp: 0x10e828a2 },
];

// Toeplitz: for every set bit i of the input (most significant bit of byte 0 first), XOR in
// the 32 key bits that start at bit i.
function toeplitz(key, input) {
  let hash = 0;
  let window = key.readUInt32BE(0);
  for (let i = 0; i < input.length * 8; i++) {
    if ((input[i >> 3] & (0x80 >> (i & 7))) !== 0) hash = (hash ^ window) >>> 0;
    const next = (key[(i + 32) >> 3] >> (7 - ((i + 32) & 7))) & 1;
    window = ((window << 1) | next) >>> 0;
  }
  return hash;
}

const ipBytes = (ip) => ip.split('.').map(Number);

// The RSS input of an IPv4 tuple: source and destination address, then (with ports)
// source and destination port, all in network order.
function rssInput(src, dst, sport, dport) {
  const bytes = [...ipBytes(src), ...ipBytes(dst)];
  if (sport !== undefined) bytes.push(sport >> 8, sport & 0xff, dport >> 8, dport & 0xff);
  return Buffer.from(bytes);
}

const hashOf = (key, src, dst, sport, dport) => toeplitz(key, rssInput(src, dst, sport, dport));

const ipString = (n) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
const ipNumber = (s) => ipBytes(s).reduce((a, b) => a * 256 + b, 0);

// The tuple of flow f of a model source (native/model/flows.c): flow 0's fields plus f in
// each field `vary` names. Defaults as the model's.
function sourceFlow(f, { port = 0, sip, dip, sport = 1024, dport = 5000, vary = ['sip', 'sport'] } = {}) {
  const s = ipNumber(sip || `10.0.${port}.1`);
  const d = ipNumber(dip || `10.1.${port}.1`);
  const add = (name) => (vary.includes(name) ? f : 0);
  return {
    src: ipString((s + add('sip')) >>> 0),
    dst: ipString((d + add('dip')) >>> 0),
    sport: (sport + add('sport')) & 0xffff,
    dport: (dport + add('dport')) & 0xffff,
  };
}

// Source and destination address and ports of an IPv4 TCP/UDP frame (20-byte IP header).
function frameTuple(b) {
  return {
    src: `${b[26]}.${b[27]}.${b[28]}.${b[29]}`,
    dst: `${b[30]}.${b[31]}.${b[32]}.${b[33]}`,
    sport: (b[34] << 8) | b[35],
    dport: (b[36] << 8) | b[37],
    proto: b[23],
  };
}

module.exports = { MS_KEY, MS_VECTORS, hashOf, sourceFlow, frameTuple };
