'use strict';

// Addresses as the lexer leaves them (text) turned into numbers, and the names of ports
// and protocols, looked up where libpcap looks them up: /etc/services, /etc/protocols, and
// its own table of EtherType names.
const fs = require('fs');

const IPPROTO_NAMES = {
  icmp: 1, igmp: 2, tcp: 6, udp: 17, icmp6: 58, sctp: 132, igrp: 9, esp: 50, ah: 51, pim: 103, vrrp: 112, carp: 112,
};
// libpcap's EtherType names, then its LLC SAP names (`ether proto \ipx` is the IPX SAP).
const ETHER_NAMES = {
  ip: 0x0800, ip6: 0x86dd, arp: 0x0806, rarp: 0x8035, atalk: 0x809b, aarp: 0x80f3,
  mopdl: 0x6001, moprc: 0x6002, decnet: 0x6003, lat: 0x6004, sca: 0x6007, loopback: 0x9000,
};
const LLC_NAMES = { iso: 0xfe, stp: 0x42, ipx: 0xe0, netbeui: 0xf0 };

// '10.1' is 10.1.0.0/16, as libpcap reads a short dotted address.
function dotted(text) {
  const parts = text.split('.').map(Number);
  let v = 0;
  for (const p of parts) v = ((v << 8) | (p & 0xff)) >>> 0;
  const shift = 32 - 8 * parts.length;
  return [shift === 0 ? v : (v << shift) >>> 0, shift === 0 ? 0xffffffff : (0xffffffff << shift) >>> 0];
}

function ipv6Words(text) {
  let [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const groups = (s) => (s === '' ? [] : s.split(':')).flatMap((g) => (g.includes('.') ? (([v]) => [v >>> 16, v & 0xffff])(dotted(g)) : [parseInt(g, 16)]));
  head = groups(head);
  tail = tail === null ? [] : groups(tail);
  const all = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  return [0, 1, 2, 3].map((i) => ((all[2 * i] << 16) | all[2 * i + 1]) >>> 0);
}

function maskWord(bits) {
  if (bits >= 32) return 0xffffffff;
  return bits <= 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

// A port name as libpcap reads it (pcap_nametoport): looked up for tcp and for udp; a name
// known for one of them only stands for that protocol alone ('tcp' or 'udp'), one known
// for both with the same number for any (null). The system's services file when there is
// one (what tcpdump reads), else a table of the common names (netbase's numbers).
const BUILTIN_SERVICES = `ftp-data 20/tcp\nftp 21/tcp\nssh 22/tcp\ntelnet 23/tcp\nsmtp 25/tcp mail\ndomain 53/tcp
domain 53/udp\nbootps 67/udp\nbootpc 68/udp\ntftp 69/udp\nhttp 80/tcp www\nkerberos 88/tcp\nkerberos 88/udp
pop3 110/tcp\nsunrpc 111/tcp\nsunrpc 111/udp\nntp 123/udp\nnetbios-ns 137/udp\nimap2 143/tcp imap\nsnmp 161/udp
snmp-trap 162/udp\nbgp 179/tcp\nldap 389/tcp\nldap 389/udp\nhttps 443/tcp\nsyslog 514/udp\nisakmp 500/udp
submission 587/tcp\nldaps 636/tcp\nimaps 993/tcp\npop3s 995/tcp\nopenvpn 1194/tcp\nopenvpn 1194/udp
mysql 3306/tcp\npostgresql 5432/tcp\nhttp-alt 8080/tcp webcache`;

let services = null; // name -> { tcp, udp } port numbers

function loadServices() {
  let text = BUILTIN_SERVICES;
  try {
    text = fs.readFileSync('/etc/services', 'utf8');
  } catch {
    // no services file: the built-in table
  }
  services = new Map();
  for (const line of text.split('\n')) {
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    const m = words.length >= 2 ? /^(\d+)\/(tcp|udp)$/.exec(words[1]) : null;
    if (m === null) continue;
    for (const name of [words[0], ...words.slice(2)]) {
      const entry = services.get(name) || {};
      if (entry[m[2]] === undefined) entry[m[2]] = Number(m[1]);
      services.set(name, entry);
    }
  }
}

// { port, only: 'tcp' | 'udp' | null } or null for an unknown name.
function portName(word) {
  if (services === null) loadServices();
  const entry = services.get(word);
  if (entry === undefined) return null;
  if (entry.tcp !== undefined) return { port: entry.tcp, only: entry.udp === entry.tcp ? null : 'tcp' };
  return { port: entry.udp, only: 'udp' };
}

function lookupProtocol(name) {
  let text = '';
  try {
    text = fs.readFileSync('/etc/protocols', 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    if (words.length >= 2 && [words[0], ...words.slice(2)].includes(name)) return words[1];
  }
  return null;
}

function protocolNumber(word, proto, error) {
  if (proto === 'link') {
    if (Object.hasOwn(ETHER_NAMES, word)) return ETHER_NAMES[word];
    if (Object.hasOwn(LLC_NAMES, word)) return LLC_NAMES[word];
    return error(`unknown Ethernet protocol '${word}'`);
  }
  if (Object.hasOwn(IPPROTO_NAMES, word)) return IPPROTO_NAMES[word];
  const found = lookupProtocol(word);
  if (found !== null) return Number(found);
  return error(`unknown protocol '${word}'`);
}

// aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff, aa.bb.cc.dd.ee.ff or aabb.ccdd.eeff
function macBytes(text) {
  const parts = text.split(/[:.-]/);
  const hex = parts.length === 3 ? parts.join('') : parts.map((p) => p.padStart(2, '0')).join('');
  return hex.match(/../g).map((h) => parseInt(h, 16));
}

module.exports = { IPPROTO_NAMES, ETHER_NAMES, dotted, ipv6Words, maskWord, macBytes, portName, protocolNumber };
