'use strict';

// What a generator sends, as a recipe: flows (source and destination MAC, IPv4 address
// and port, each a value or a range), UDP or TCP, an optional VLAN tag, and frame sizes
// (fixed, a range or IMIX). The recipe is turned once into the header bytes of every flow
// and a table of sizes, so that per frame only lengths, checksums and the sequence number
// are written (stampSeq() and stampFlows() in generator.js). Sizes count the frame
// without the 4-byte FCS the NIC appends (60..1514), as `--size` always has.
//
// Layout of a frame: Ethernet (with the 802.1Q tag when vlan is set), IPv4 (20 bytes),
// UDP (8) or TCP (20), the 32-bit big-endian sequence number, then bytes whose value is
// their offset (as lib/packet.js writes them). UDP frames carry no checksum (0, allowed
// for IPv4 by RFC 768); TCP frames carry a correct one.
const { IxyError, checkInteger } = require('../host/errors');
const packet = require('../packet');

const { MIN_FRAME, MAX_FRAME, ETHERTYPE_IPV4, ETHERTYPE_VLAN, IPPROTO_TCP, IPPROTO_UDP } = packet;
const MAX_FLOWS = 65536;
// The simple IMIX (7:4:1 of 64, 594 and 1518 bytes with FCS), interleaved.
const IMIX = [60, 590, 60, 60, 590, 60, 60, 590, 60, 60, 590, 1514];
const MAX_SIZE_TABLE = 4096;

// 'a' or 'a-b' of a kind (parse: text -> number); returns { start, count }.
function parseRange(text, what, parse, format) {
  const s = String(text);
  const dash = s.indexOf('-', s.indexOf(':') >= 0 || s.indexOf('.') >= 0 ? 1 : 0);
  if (dash < 0) return { start: parse(s), count: 1 };
  const start = parse(s.slice(0, dash));
  const end = parse(s.slice(dash + 1));
  if (end < start) throw new IxyError('EINVAL', `${what} range '${text}' ends before it starts (expected ${format}-${format})`);
  return { start, count: end - start + 1 };
}

function macNumber(text) {
  return packet.parseMac(text).reduce((n, b) => n * 256 + b, 0);
}

function ipNumber(text) {
  return packet.parseIpv4(text).reduce((n, b) => n * 256 + b, 0);
}

function portNumber(text) {
  const n = Number(text);
  checkInteger('port', n, 0, 65535);
  return n;
}

// sizes: a number, 'N', 'A-B' (every size of the range, in a scrambled order) or 'imix'.
function parseSizes(sizes, minimum) {
  let table;
  if (String(sizes).toLowerCase() === 'imix') {
    table = IMIX.map((s) => Math.max(s, minimum)); // TCP with a VLAN tag needs 62 bytes
  } else {
    const { start, count } = parseRange(sizes, 'size', (t) => {
      if (!/^[0-9]+$/.test(String(t).trim())) {
        throw new IxyError('EINVAL', `frame size must be a whole number of bytes ${minimum}..${MAX_FRAME}, a range A-B or 'imix', got '${sizes}'`);
      }
      const n = Number(t);
      checkInteger('frame size', n, minimum, MAX_FRAME, ' (without the FCS)');
      return n;
    }, 'N');
    // Every size once if the range is short enough, else an even sample; a step prime to
    // the table's length scrambles the order so that neighbours differ.
    const length = Math.min(count, MAX_SIZE_TABLE);
    const step = length > 2 ? largestPrimeBelow(length) : 1;
    table = [];
    for (let i = 0; i < length; i++) table.push(start + Math.floor((((i * step) % length) * count) / length));
  }
  for (const s of table) {
    if (s < minimum) throw new IxyError('EINVAL', `frame size ${s} is below the ${minimum} bytes these headers need`);
  }
  return Uint16Array.from(table);
}

function largestPrimeBelow(n) {
  for (let p = n - 1; p > 2; p--) {
    let prime = true;
    for (let d = 2; d * d <= p; d++) if (p % d === 0) { prime = false; break; }
    if (prime && n % p !== 0) return p;
  }
  return 1;
}

// Sum of the big-endian 16-bit words of b[from, to) (an odd last byte as a high byte),
// not folded.
function wordSum(b, from, to) {
  let sum = 0;
  for (let i = from; i < to; i += 2) sum += (b[i] << 8) | (i + 1 < to ? b[i + 1] : 0);
  return sum;
}

function put16(b, at, v) {
  b[at] = v >>> 8;
  b[at + 1] = v & 0xff;
}

function put32(b, at, v) {
  put16(b, at, Math.floor(v / 65536));
  put16(b, at + 2, v % 65536);
}

function put48(b, at, v) {
  put16(b, at, Math.floor(v / 2 ** 32));
  put32(b, at + 2, v % 2 ** 32);
}

// A recipe from the library's options (all optional):
//   srcMac, dstMac      'aa:bb:cc:dd:ee:ff' or a range 'aa:..:01-aa:..:ff'
//   srcIp, dstIp        'a.b.c.d' or a range 'a.b.c.d-a.b.c.e'
//   srcPort, dstPort    a port or a range 'N-M'
//   protocol            'udp' (default) or 'tcp'
//   flows               how many flows; flow k takes the (k mod count)-th value of each
//                       range. Default: the longest range. Without any range, flow k
//                       counts source IP and source port up by k from their start.
//   size                60 (default), 'A-B' or 'imix'
//   vlan                a VLAN id 0..4095: frames carry an 802.1Q tag (priority 0)
//   ttl                 IPv4 TTL (64)
class FrameRecipe {
  constructor({
    srcMac = '02:00:00:00:00:01', dstMac = 'ff:ff:ff:ff:ff:ff', srcIp = '10.0.0.1', dstIp = '10.1.0.1',
    srcPort = 1024, dstPort = 5000, protocol = 'udp', flows, size = MIN_FRAME, vlan = null, ttl = 64,
  } = {}) {
    const proto = String(protocol).toLowerCase();
    if (proto !== 'udp' && proto !== 'tcp') throw new IxyError('EINVAL', `protocol must be udp or tcp, got '${protocol}'`);
    if (vlan !== null) checkInteger('VLAN id', vlan, 0, 4095);
    checkInteger('TTL', ttl, 1, 255);
    this.protocol = proto === 'tcp' ? IPPROTO_TCP : IPPROTO_UDP;
    this.vlan = vlan;
    this.ipAt = 14 + (vlan === null ? 0 : 4);
    this.l4At = this.ipAt + 20;
    this.seqAt = this.l4At + (this.protocol === IPPROTO_TCP ? 20 : 8);
    this.headerLength = this.seqAt; // the bytes copied per flow
    const fields = {
      srcMac: parseRange(srcMac, 'MAC', macNumber, 'aa:bb:cc:dd:ee:ff'),
      dstMac: parseRange(dstMac, 'MAC', macNumber, 'aa:bb:cc:dd:ee:ff'),
      srcIp: parseRange(srcIp, 'IPv4', ipNumber, 'a.b.c.d'),
      dstIp: parseRange(dstIp, 'IPv4', ipNumber, 'a.b.c.d'),
      srcPort: parseRange(srcPort, 'port', portNumber, 'N'),
      dstPort: parseRange(dstPort, 'port', portNumber, 'N'),
    };
    const longest = Math.max(...Object.values(fields).map((f) => f.count));
    const n = flows === undefined || flows === null ? Math.min(longest, MAX_FLOWS) : flows;
    checkInteger('flows', n, 1, MAX_FLOWS);
    if (longest === 1 && n > 1) {
      // No range given: the flows count source address and port up from their start.
      fields.srcIp.count = n;
      fields.srcPort.count = Math.min(n, 65536 - fields.srcPort.start);
    }
    this.flows = n;
    this.fields = fields;
    this.sizes = parseSizes(size, Math.max(MIN_FRAME, this.seqAt + 4));
    this.ttl = ttl;
    this.build();
  }

  // Mean frame size, without FCS: what a rate in bits per second divides by.
  get meanSize() {
    const s = this.sizes;
    let sum = 0;
    for (let i = 0; i < s.length; i++) sum += s[i];
    return sum / s.length;
  }

  // The value of a field for flow k.
  valueOf(field, k) {
    const f = this.fields[field];
    return f.start + (k % f.count);
  }

  // Writes the whole frame of flow k with `size` bytes and sequence number 0 into b[at..):
  // what every buffer holds before its first use.
  writeFrame(b, at, k, size) {
    const H = this.headerLength;
    for (let i = 0; i < H; i++) b[at + i] = this.headers[k * H + i];
    for (let i = H; i < MAX_FRAME; i++) b[at + i] = i & 0xff;
    put32(b, at + this.seqAt, 0);
    this.writeLengths(b, at, k, size, 0);
  }

  // The per-frame part: IPv4 total length and header checksum, the UDP length or the TCP
  // checksum, for flow k at `size` bytes with sequence number seq (an int32).
  writeLengths(b, at, k, size, seq) {
    const ipLength = size - this.ipAt;
    put16(b, at + this.ipAt + 2, ipLength);
    put16(b, at + this.ipAt + 10, ~fold(this.ipSums[k] + ipLength) & 0xffff);
    const l4Length = size - this.l4At;
    if (this.protocol === IPPROTO_UDP) {
      put16(b, at + this.l4At + 4, l4Length);
    } else {
      const sum = this.l4Sums[k] + l4Length + (seq >>> 16) + (seq & 0xffff) + this.payloadSums[size];
      put16(b, at + this.l4At + 16, ~fold(sum) & 0xffff);
    }
  }

  // headers: every flow's header bytes (lengths and checksums 0); ipSums, l4Sums: each
  // flow's header sums without what varies per frame; payloadSums[size]: the pattern's
  // sum from after the sequence number to `size`.
  build() {
    const H = this.headerLength;
    const ipAt = this.ipAt;
    const l4At = this.l4At;
    this.headers = new Uint8Array(this.flows * H);
    this.ipSums = new Float64Array(this.flows);
    this.l4Sums = new Float64Array(this.flows);
    const h = new Uint8Array(H);
    for (let k = 0; k < this.flows; k++) {
      put48(h, 0, this.valueOf('dstMac', k));
      put48(h, 6, this.valueOf('srcMac', k));
      if (this.vlan !== null) {
        put16(h, 12, ETHERTYPE_VLAN);
        put16(h, 14, this.vlan);
      }
      put16(h, ipAt - 2, ETHERTYPE_IPV4);
      h[ipAt] = 0x45;
      h[ipAt + 8] = this.ttl;
      h[ipAt + 9] = this.protocol;
      put32(h, ipAt + 12, this.valueOf('srcIp', k));
      put32(h, ipAt + 16, this.valueOf('dstIp', k));
      put16(h, l4At, this.valueOf('srcPort', k));
      put16(h, l4At + 2, this.valueOf('dstPort', k));
      if (this.protocol === IPPROTO_TCP) {
        put32(h, l4At + 4, 1); // sequence number of the TCP stream
        h[l4At + 12] = 0x50; // 5 words of header
        h[l4At + 13] = 0x18; // PSH, ACK
        put16(h, l4At + 14, 65535); // window
        // Pseudo header (addresses, protocol; the length is added per frame) and header.
        this.l4Sums[k] = wordSum(h, ipAt + 12, ipAt + 20) + IPPROTO_TCP + wordSum(h, l4At, l4At + 20);
      }
      this.ipSums[k] = wordSum(h, ipAt, ipAt + 20);
      this.headers.set(h, k * H);
    }
    const pattern = new Uint8Array(MAX_FRAME);
    for (let i = 0; i < MAX_FRAME; i++) pattern[i] = i & 0xff;
    this.payloadSums = new Float64Array(MAX_FRAME + 1);
    const from = this.seqAt + 4; // even: the words line up with the TCP checksum's
    for (let s = from; s <= MAX_FRAME; s++) this.payloadSums[s] = wordSum(pattern, from, s);
  }
}

function fold(sum) {
  let s = sum;
  while (s > 0xffff) s = (s % 65536) + Math.floor(s / 65536);
  return s;
}

module.exports = { FrameRecipe, IMIX };
