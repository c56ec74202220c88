'use strict';

// Addresses as the lexer leaves them (text) turned into numbers, and the names of ports
// and protocols, looked up where libpcap looks them up: /etc/services, /etc/protocols, and
// its own table of EtherType names.
const fs = require('fs');

const IPPROTO_NAMES = { icmp: 1, igmp: 2, tcp: 6, udp: 17, icmp6: 58, sctp: 132 };
const ETHER_NAMES = {
  ip: 0x0800, ip6: 0x86dd, arp: 0x0806, rarp: 0x8035, atalk: 0x809b, aarp: 0x80f3, ipx: 0x8137,
  mopdl: 0x6001, moprc: 0x6002, decnet: 0x6003, lat: 0x6004, sca: 0x6007, loopback: 0x9000,
};

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

// Names from the system's services and protocols files, as libpcap looks them up.
function lookup(file, name, wanted) {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    if (words.length < 2) continue;
    const names = [words[0], ...words.slice(2)];
    if (names.includes(name) && wanted(words[1])) return words[1];
  }
  return null;
}

function portNumber(word, proto, error) {
  if (/^[0-9]+$/.test(word)) return Number(word);
  const kinds = proto === 'default' ? ['tcp', 'udp', 'sctp'] : [proto];
  for (const kind of kinds) {
    const found = lookup('/etc/services', word, (field) => field.endsWith(`/${kind}`));
    if (found !== null) return Number(found.split('/')[0]);
  }
  return error(`unknown port name '${word}'`);
}

function protocolNumber(word, proto, error) {
  if (proto === 'link') {
    if (Object.hasOwn(ETHER_NAMES, word)) return ETHER_NAMES[word];
    return error(`unknown Ethernet protocol '${word}'`);
  }
  if (Object.hasOwn(IPPROTO_NAMES, word)) return IPPROTO_NAMES[word];
  const found = lookup('/etc/protocols', word, () => true);
  if (found !== null) return Number(found);
  return error(`unknown protocol '${word}'`);
}

// aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff, aa.bb.cc.dd.ee.ff or aabb.ccdd.eeff
function macBytes(text) {
  const parts = text.split(/[:.-]/);
  const hex = parts.length === 3 ? parts.join('') : parts.map((p) => p.padStart(2, '0')).join('');
  return hex.match(/../g).map((h) => parseInt(h, 16));
}

module.exports = { IPPROTO_NAMES, ETHER_NAMES, dotted, ipv6Words, maskWord, macBytes, portNumber, protocolNumber };
