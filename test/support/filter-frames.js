'use strict';

// Random Ethernet frames for the differential filter test (test/filter/filter-diff.test.js),
// drawn from a seed: IPv4 with options and fragments, IPv6 with extension headers and
// fragment headers, ARP/RARP, 802.3 LLC/SNAP (IPX raw/LLC/SNAP, AppleTalk and AARP over
// SNAP), up to three VLAN tags, frames cut short anywhere (wire length = captured length),
// frames cut by a snap length (wire length > captured length), and random bytes. Field
// values come from small pools, so that the generated expressions match some frames.
// Each frame: { bytes, caplen, wirelen }.

const MACS = ['001122334455', '02000000000b', 'ffffffffffff', '01005e000001', '333300000001', '0a0b0c0d0e0f'];
const IP4 = ['10.0.0.1', '10.0.0.2', '192.168.1.1', '172.16.0.5', '224.0.0.1', '255.255.255.255', '10.1.2.3', '0.0.0.0'];
const IP6 = ['2001:db8::1', '2001:db8::2', 'fe80::1', 'ff02::1', '2001:db8:1::5', '::1'];
const PORTS = [22, 53, 67, 68, 69, 80, 123, 443, 1234, 5000, 40000, 0, 65535];
const IPPROTOS = [1, 2, 6, 17, 132, 58, 50, 51, 103, 112, 9, 4, 41, 0];
const TPIDS = [0x8100, 0x88a8, 0x9100, 0x8100, 0x0800];
const VIDS = [0, 100, 200, 300, 4095];

const u16 = (v) => [(v >> 8) & 0xff, v & 0xff];
const mac = (s) => s.match(/../g).map((h) => parseInt(h, 16));
const ip4 = (s) => s.split('.').map(Number);
function ip6(s) {
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  return [...h, ...Array(8 - h.length - t.length).fill('0'), ...t].flatMap((g) => u16(parseInt(g, 16)));
}

class FrameSource {
  constructor(random) {
    this.random = random; // (n) => integer in [0, n)
  }

  pick(list) { return list[this.random(list.length)]; }
  chance(n) { return this.random(n) === 0; }
  bytes(n) { return Array.from({ length: n }, () => this.random(256)); }
  port() { return this.chance(6) ? this.random(65536) : this.pick(PORTS); }

  transport(proto) {
    switch (proto) {
      case 6: return [...u16(this.port()), ...u16(this.port()), ...this.bytes(8), this.pick([0x50, 0x60, 0x80]),
        this.chance(2) ? this.pick([0x02, 0x12, 0x10, 0x11, 0x04, 0x18, 0xc2]) : this.random(256), ...this.bytes(6 + this.random(8))];
      case 17: case 132: return [...u16(this.port()), ...u16(this.port()), ...this.bytes(4 + this.random(12))];
      case 1: case 58: return [this.pick([0, 3, 8, 11, 128, 129, 135, 136]), this.random(4), ...this.bytes(6 + this.random(8))];
      default: return this.bytes(this.random(24));
    }
  }

  ipv4() {
    const proto = this.chance(8) ? this.random(256) : this.pick(IPPROTOS);
    const options = this.chance(4) ? this.bytes(4 * (1 + this.random(3))) : [];
    const ihl = 5 + options.length / 4;
    const frag = this.chance(4) ? this.pick([0x2000, 0x0003, 0x2005, 0x4000, 0x1fff]) : 0;
    const payload = this.transport(proto);
    const version = this.chance(20) ? 0x60 : 0x40;
    return [version | (this.chance(30) ? this.random(16) : ihl), this.pick([0, 4, 0x10, 0xb8]), ...u16(ihl * 4 + payload.length),
      0, 1, ...u16(frag), this.pick([1, 64, 128, 255]), proto, 0, 0,
      ...ip4(this.pick(IP4)), ...ip4(this.pick(IP4)), ...options, ...payload];
  }

  ipv6() {
    let last = this.chance(8) ? this.random(256) : this.pick(IPPROTOS);
    let body = this.transport(last);
    const extensions = this.random(3);
    for (let i = 0; i < extensions; i++) {
      const kind = this.pick([44, 44, 0, 43, 60]);
      body = kind === 44
        ? [last, 0, ...u16(this.pick([0, 1, 8, 0x0101])), ...this.bytes(4), ...body]
        : [last, 0, ...this.bytes(6), ...body];
      last = kind;
    }
    return [0x60, 0, 0, 0, ...u16(body.length), last, 64, ...ip6(this.pick(IP6)), ...ip6(this.pick(IP6)), ...body];
  }

  arp() {
    return [0, 1, 8, 0, 6, 4, 0, 1 + this.random(4), ...mac(this.pick(MACS)), ...ip4(this.pick(IP4)),
      ...mac(this.pick(MACS)), ...ip4(this.pick(IP4))];
  }

  // 802.3: a length where the EtherType was, then LLC (or IPX's raw 0xffff).
  llc() {
    const snap = (oui, type, rest) => [0xaa, 0xaa, 0x03, ...oui, ...u16(type), ...rest];
    const body = this.pick([
      () => [0xff, 0xff, ...this.bytes(20)], // raw 802.3 IPX
      () => [0xe0, 0xe0, 0x03, 0xff, 0xff, ...this.bytes(16)], // 802.2 IPX
      () => snap([0, 0, 0], 0x8137, this.bytes(16)),
      () => snap([0x08, 0x00, 0x07], 0x809b, this.bytes(16)),
      () => snap([0, 0, 0], 0x80f3, this.bytes(16)),
      () => snap([0, 0, 0], 0x0800, this.ipv4()),
      () => snap([0, 0, 0], 0x809b, this.bytes(10)),
      () => [this.pick([0x42, 0xfe, 0x06, 0xf0, 0xaa, 0xe0]), this.pick([0x42, 0xfe, 0x06, 0xf0, 0xaa, 0xe0]), 0x03, ...this.bytes(20)],
    ])();
    return { type: this.chance(4) ? this.random(1501) : body.length, body };
  }

  frame() {
    if (this.chance(12)) {
      const n = this.random(80);
      return { bytes: this.bytes(n), caplen: n, wirelen: n };
    }
    const kind = this.pick(['ip', 'ip', 'ip', 'ip6', 'ip6', 'arp', 'rarp', 'llc', 'other']);
    let type;
    let body;
    if (kind === 'ip') [type, body] = [0x0800, this.ipv4()];
    else if (kind === 'ip6') [type, body] = [0x86dd, this.ipv6()];
    else if (kind === 'arp' || kind === 'rarp') [type, body] = [kind === 'arp' ? 0x0806 : 0x8035, this.arp()];
    else if (kind === 'llc') ({ type, body } = this.llc());
    else [type, body] = [this.pick([0x88cc, 0x809b, 0x80f3, 0x8137, 0x6003, 0x0600, 0x05dc]), this.bytes(20)];
    const tags = [];
    const nTags = this.chance(3) ? 1 + this.random(3) : 0;
    for (let i = 0; i < nTags; i++) tags.push(...u16(this.pick(TPIDS)), ...u16((this.random(8) << 13) | this.pick(VIDS)));
    const bytes = [...mac(this.pick(MACS)), ...mac(this.pick(MACS)), ...tags, ...u16(type), ...body];
    let caplen = bytes.length;
    let wirelen = bytes.length;
    if (this.chance(5)) caplen = wirelen = this.random(bytes.length); // ends inside a header
    else if (this.chance(6)) caplen = 14 + this.random(bytes.length - 13); // cut by a snap length
    return { bytes: bytes.slice(0, caplen), caplen, wirelen };
  }
}

// count frames drawn from random.
function randomFrames(random, count) {
  const source = new FrameSource(random);
  return Array.from({ length: count }, () => source.frame());
}

module.exports = { randomFrames };
