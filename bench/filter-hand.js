'use strict';

// The frames of bench/filter.js and, for each expression it times, the predicate a
// programmer would write by hand for the same tests: what ixy's compiled predicate is
// measured against. Each makes the tests tcpdump's expression makes on these frames
// (bench/filter.js checks that all keep the same frames).

const FRAMES = 4096;
const LENGTH = 60;

const ip4Transport = (b) => 14 + ((b[14] & 15) << 2);
const firstFragment = (b) => ((b[20] & 0x1f) | b[21]) === 0;

const isHost = (b, at) => b[at] === 10 && b[at + 1] === 0 && b[at + 2] === 0 && b[at + 3] === 1;
const isPortProto = (p) => p === 6 || p === 17 || p === 132;
const hasPort = (b, len, at) => len >= at + 4 && (((b[at] << 8) | b[at + 1]) === 5000 || ((b[at + 2] << 8) | b[at + 3]) === 5000);

const EXPRESSIONS = [
  // IPv4, UDP, not a later fragment, the destination port past the IPv4 header (whose
  // length is in the packet), the source net.
  ['udp and dst port 5000 and src net 10.0.0.0/8', (b, len) => {
    if (len < 34 || b[12] !== 0x08 || b[13] !== 0x00 || b[23] !== 17 || !firstFragment(b)) return false;
    const udp = ip4Transport(b);
    if (len < udp + 4 || ((b[udp + 2] << 8) | b[udp + 3]) !== 5000) return false;
    return b[26] === 10;
  }],
  // One of the three tag types, VLAN ID 100, IPv4 inside.
  ['vlan 100 and ip', (b, len) => {
    if (len < 18) return false;
    const tpid = (b[12] << 8) | b[13];
    if (tpid !== 0x8100 && tpid !== 0x88a8 && tpid !== 0x9100) return false;
    return (((b[14] << 8) | b[15]) & 0xfff) === 100 && b[16] === 0x08 && b[17] === 0x00;
  }],
  // TCP over IPv4, or over IPv6 right after the header or behind one fragment header.
  ['tcp', (b, len) => {
    if (len < 14) return false;
    if (b[12] === 0x08 && b[13] === 0x00) return len > 23 && b[23] === 6;
    if (b[12] !== 0x86 || b[13] !== 0xdd || len < 21) return false;
    return b[20] === 6 || (b[20] === 44 && len > 54 && b[54] === 6);
  }],
  // IPv4 source or destination, or ARP/RARP sender or target.
  ['host 10.0.0.1', (b, len) => {
    if (len < 14) return false;
    if (b[12] === 0x08 && b[13] === 0x00) return len >= 34 && (isHost(b, 26) || isHost(b, 30));
    if ((b[12] === 0x08 && b[13] === 0x06) || (b[12] === 0x80 && b[13] === 0x35)) return len >= 42 && (isHost(b, 28) || isHost(b, 38));
    return false;
  }],
  // Either port of SCTP, TCP or UDP, over IPv6 (no extension headers) or IPv4 (first fragments).
  ['port 5000', (b, len) => {
    if (len < 14) return false;
    if (b[12] === 0x86 && b[13] === 0xdd) return len > 20 && isPortProto(b[20]) && hasPort(b, len, 54);
    if (b[12] !== 0x08 || b[13] !== 0x00 || len < 24 || !isPortProto(b[23]) || !firstFragment(b)) return false;
    return hasPort(b, len, ip4Transport(b));
  }],
  // The SYN flag of TCP over IPv4 (first fragments).
  ['tcp[tcpflags] & tcp-syn != 0', (b, len) => {
    if (len < 24 || b[12] !== 0x08 || b[13] !== 0x00 || b[23] !== 6 || !firstFragment(b)) return false;
    const tcp = ip4Transport(b);
    return len > tcp + 13 && (b[tcp + 13] & 2) !== 0;
  }],
];

// Sixteen kinds of frame in turn: eight untagged, the same eight behind a VLAN tag
// (ID 100, or 200 every other time). Among the eight: UDP from 10.x to port 5000 (three,
// one a TCP SYN in disguise), to port 5001, from 192.168.x, TCP SYN to port 5000,
// UDP over IPv6, ARP from 10.0.0.1.
function frames() {
  const arena = new Uint8Array(FRAMES * 2048);
  const out = [];
  for (let i = 0; i < FRAMES; i++) {
    const b = arena.subarray(i * 2048, (i + 1) * 2048);
    const kind = i % 8;
    const tagged = (i & 8) !== 0;
    const v6 = kind === 5;
    const arp = kind === 6;
    b.set([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
    let at = 12;
    if (tagged) {
      b.set([0x81, 0x00, 0, (i & 16) ? 200 : 100], 12);
      at = 16;
    }
    const body = tagged ? b.subarray(4) : b; // the frame as if untagged
    b[at] = arp ? 0x08 : v6 ? 0x86 : 0x08;
    b[at + 1] = arp ? 0x06 : v6 ? 0xdd : 0x00;
    if (v6) {
      body.set([0x60, 0, 0, 0, 0, 12, 17, 64], 14);
      body.set([0x13, 0x88, 0x13, 0x88], 54);
    } else if (arp) {
      body.set([0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 2, 10, 0, 0, 1], 14);
    } else {
      body.set([0x45, 0, 0, 46, 0, 1, 0, 0, 64, kind === 3 ? 6 : 17, 0, 0], 14);
      body.set([kind === 2 ? 192 : 10, kind === 2 ? 168 : 1, 2, i & 0xff, 10, 0, 0, 1], 26);
      const dport = kind === 1 ? 5001 : 5000;
      body.set([0x30, 0x39, dport >> 8, dport & 0xff, 0, 26, 0, kind === 3 || kind === 7 ? 0x02 : 0], 34);
      if (kind === 3) body[47] = 0x02; // the SYN flag where TCP's flags are
    }
    out.push(b);
  }
  return out;
}

module.exports = { EXPRESSIONS, frames, FRAMES, LENGTH };
