'use strict';

// Mixed Ethernet traffic for the filter tests: IPv4 (with options, fragments, multicast
// and broadcast), IPv6 (with a fragment header), ARP, RARP, VLAN and QinQ, TCP with each
// flag, UDP, ICMP, ICMPv6, SCTP, IGMP, and frames cut short at every layer. Checksums are
// not filled in: filters do not read them, and tcpdump does not check them without -v.

const MAC_A = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55];
const MAC_B = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0b];
const BROADCAST = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
const MCAST = [0x01, 0x00, 0x5e, 0x00, 0x00, 0x01];

const u16 = (v) => [v >> 8, v & 0xff];
const ip4 = (s) => s.split('.').map(Number);
function ip6(s) {
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => u16(parseInt(g, 16)));
}

function ether(type, payload, { dst = MAC_B, src = MAC_A, tags = [] } = {}) {
  const tagBytes = tags.flatMap(([tpid, tci]) => [...u16(tpid), ...u16(tci)]);
  return [...dst, ...src, ...tagBytes, ...u16(type), ...payload];
}

function ipv4({ src = '10.0.0.1', dst = '192.168.1.1', proto = 17, ttl = 64, tos = 0, frag = 0, options = [], payload = [] }) {
  const ihl = 5 + options.length / 4;
  const total = ihl * 4 + payload.length;
  return [0x40 | ihl, tos, ...u16(total), 0, 1, ...u16(frag), ttl, proto, 0, 0, ...ip4(src), ...ip4(dst), ...options, ...payload];
}

function ipv6({ src = '2001:db8::1', dst = '2001:db8::2', nh = 17, payload = [], fragment = false }) {
  const body = fragment ? [nh, 0, 0, 1, 0, 0, 0, 7, ...payload] : payload;
  return [0x60, 0, 0, 0, ...u16(body.length), fragment ? 44 : nh, 64, ...ip6(src), ...ip6(dst), ...body];
}

const tcp = (sport, dport, flags, data = []) => [...u16(sport), ...u16(dport), 0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0, ...data];
const udp = (sport, dport, data = [1, 2, 3, 4]) => [...u16(sport), ...u16(dport), ...u16(8 + data.length), 0, 0, ...data];
const icmp = (type, code = 0) => [type, code, 0, 0, 0, 1, 0, 1, 0xaa, 0xbb];
const sctp = (sport, dport) => [...u16(sport), ...u16(dport), 0, 0, 0, 1, 0, 0, 0, 0];
const arp = (op, spa, tpa) => [0, 1, 8, 0, 6, 4, 0, op, ...MAC_A, ...ip4(spa), 0, 0, 0, 0, 0, 0, ...ip4(tpa)];

const IP = 0x0800;
const IP6 = 0x86dd;

function frames() {
  const f = [];
  const add = (bytes) => f.push(Buffer.from(bytes));
  // TCP over IPv4, each flag, several ports and hosts
  add(ether(IP, ipv4({ proto: 6, payload: tcp(40000, 80, 0x02) })));
  add(ether(IP, ipv4({ proto: 6, src: '192.168.1.1', dst: '10.0.0.1', payload: tcp(80, 40000, 0x12) })));
  add(ether(IP, ipv4({ proto: 6, payload: tcp(40000, 80, 0x10, [0x47, 0x45, 0x54]) })));
  add(ether(IP, ipv4({ proto: 6, payload: tcp(40000, 443, 0x18) })));
  add(ether(IP, ipv4({ proto: 6, src: '172.16.0.5', payload: tcp(22, 1500, 0x11) })));
  add(ether(IP, ipv4({ proto: 6, dst: '172.16.0.5', payload: tcp(1999, 22, 0x04) })));
  add(ether(IP, ipv4({ proto: 6, ttl: 3, tos: 4, payload: tcp(2000, 2001, 0xc2) })));
  add(ether(IP, ipv4({ proto: 6, ttl: 200, tos: 0x10, options: [1, 1, 1, 0], payload: tcp(1234, 53, 0x02) })));
  // UDP over IPv4
  add(ether(IP, ipv4({ proto: 17, payload: udp(1234, 5000) })));
  add(ether(IP, ipv4({ proto: 17, src: '10.1.2.3', dst: '10.0.0.9', payload: udp(5000, 1234) })));
  add(ether(IP, ipv4({ proto: 17, src: '192.168.7.7', payload: udp(33000, 53, new Array(60).fill(7)) })));
  add(ether(IP, ipv4({ proto: 17, src: '10.0.0.1', dst: '224.0.0.251', ttl: 1, payload: udp(5353, 5353) }), { dst: MCAST }));
  add(ether(IP, ipv4({ proto: 17, src: '10.0.0.7', dst: '255.255.255.255', payload: udp(68, 67) }), { dst: BROADCAST }));
  add(ether(IP, ipv4({ proto: 17, src: '10.200.0.1', dst: '10.0.0.1', ttl: 128, payload: udp(1000, 2000) })));
  // IPv4 fragments: the first carries the UDP header, the second bytes that look like port 5000
  add(ether(IP, ipv4({ proto: 17, frag: 0x2000, payload: udp(1234, 5000, new Array(16).fill(1)) })));
  add(ether(IP, ipv4({ proto: 17, frag: 0x0003, payload: [...u16(1234), ...u16(5000), 0, 0, 0, 0] })));
  add(ether(IP, ipv4({ proto: 6, frag: 0x2005, payload: [...u16(40000), ...u16(80), 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 2, 0, 0] })));
  // ICMP, IGMP, SCTP over IPv4
  add(ether(IP, ipv4({ proto: 1, dst: '10.0.0.1', payload: icmp(8) })));
  add(ether(IP, ipv4({ proto: 1, src: '10.0.0.1', payload: icmp(0) })));
  add(ether(IP, ipv4({ proto: 1, src: '172.16.0.1', payload: icmp(3, 3) })));
  add(ether(IP, ipv4({ proto: 1, payload: icmp(11) })));
  add(ether(IP, ipv4({ proto: 2, dst: '224.0.0.1', ttl: 1, payload: [0x11, 0, 0, 0, 0, 0, 0, 0] }), { dst: MCAST }));
  add(ether(IP, ipv4({ proto: 132, payload: sctp(5000, 80) })));
  // IPv6
  add(ether(IP6, ipv6({ nh: 6, payload: tcp(40000, 80, 0x02) })));
  add(ether(IP6, ipv6({ nh: 17, payload: udp(1234, 53) })));
  add(ether(IP6, ipv6({ nh: 17, src: 'fe80::1', dst: 'ff02::1', payload: udp(546, 547) }), { dst: [0x33, 0x33, 0, 0, 0, 1] }));
  add(ether(IP6, ipv6({ nh: 58, dst: '2001:db8:1::5', payload: [128, 0, 0, 0, 0, 1, 0, 1] })));
  add(ether(IP6, ipv6({ nh: 58, src: '2001:db8::2', dst: '2001:db8::1', payload: [129, 0, 0, 0, 0, 1, 0, 1] })));
  add(ether(IP6, ipv6({ nh: 17, fragment: true, payload: udp(1234, 5000) })));
  add(ether(IP6, ipv6({ nh: 6, fragment: true, src: '2001:db8:ffff::9', payload: tcp(443, 40000, 0x10) })));
  add(ether(IP6, ipv6({ nh: 132, payload: sctp(80, 5000) })));
  // ARP and RARP
  add(ether(0x0806, arp(1, '10.0.0.1', '10.0.0.2'), { dst: BROADCAST }));
  add(ether(0x0806, arp(2, '10.0.0.2', '10.0.0.1'), { src: MAC_B, dst: MAC_A }));
  add(ether(0x8035, arp(3, '192.168.1.1', '172.16.0.5')));
  // VLAN, 802.1ad and QinQ
  add(ether(IP, ipv4({ proto: 17, payload: udp(1234, 5000) }), { tags: [[0x8100, 100]] }));
  add(ether(IP, ipv4({ proto: 6, src: '10.9.9.9', payload: tcp(40000, 80, 0x02) }), { tags: [[0x8100, 0x2000 | 200]] }));
  add(ether(IP6, ipv6({ nh: 17, payload: udp(1234, 53) }), { tags: [[0x8100, 100]] }));
  add(ether(0x0806, arp(1, '10.0.0.3', '10.0.0.4'), { tags: [[0x8100, 300]], dst: BROADCAST }));
  add(ether(IP, ipv4({ proto: 17, payload: udp(53, 5000) }), { tags: [[0x88a8, 10], [0x8100, 100]] }));
  add(ether(IP, ipv4({ proto: 1, dst: '10.0.0.1', payload: icmp(8) }), { tags: [[0x9100, 7], [0x8100, 200]] }));
  // Other EtherTypes, and frames cut short at each layer
  add(ether(0x88cc, new Array(30).fill(0)));
  add(ether(0x0800, []).slice(0, 10));
  add(ether(0x0800, []).slice(0, 13));
  add(ether(IP, ipv4({ proto: 6, payload: tcp(1, 2, 2) })).slice(0, 20));
  add(ether(IP, ipv4({ proto: 6, payload: tcp(1, 2, 2) })).slice(0, 30));
  add(ether(IP, ipv4({ proto: 6, payload: tcp(80, 2, 2) })).slice(0, 36));
  add(ether(IP, ipv4({ proto: 17, payload: udp(53, 53) })).slice(0, 38));
  add(ether(IP6, ipv6({ nh: 6, payload: tcp(80, 80, 2) })).slice(0, 40));
  add(ether(IP, ipv4({ proto: 6, options: new Array(40).fill(1), payload: tcp(80, 80, 2) })).slice(0, 60));
  add(ether(0x8100, [0, 100]));
  return f;
}

module.exports = { frames };
