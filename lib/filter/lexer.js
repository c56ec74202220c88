'use strict';

// Tokens of tcpdump's filter language (pcap-filter(7)), each with the column it starts at.
//
// As in libpcap, a word runs over letters, digits and `_ . - :` and is classified as a
// whole: `tcp-syn`, `1000-2000`, `10.0.0.1`, `aa:bb:cc:dd:ee:ff` and `2001:db8::1` are one
// word each, so `len-1` is one (unknown) word and arithmetic needs spaces around `-`.
// Inside brackets `:` separates offset and size (`ip[2:2]`), so it ends a word there.
// Keywords are lower case only (`TCP` is a name, as in tcpdump). `\word` is a name even
// when `word` is a keyword (`ip proto \tcp`).
const net = require('net');
const { IxyError } = require('../host/errors');

// Words that are numbers: pcap-filter's named offsets and flag values.
const NAMED_NUMBERS = {
  icmptype: 0, icmpcode: 1, icmp6type: 0, icmp6code: 1, tcpflags: 13,
  'icmp-echoreply': 0, 'icmp-unreach': 3, 'icmp-sourcequench': 4, 'icmp-redirect': 5,
  'icmp-echo': 8, 'icmp-routeradvert': 9, 'icmp-routersolicit': 10, 'icmp-timxceed': 11,
  'icmp-paramprob': 12, 'icmp-tstamp': 13, 'icmp-tstampreply': 14, 'icmp-ireq': 15,
  'icmp-ireqreply': 16, 'icmp-maskreq': 17, 'icmp-maskreply': 18,
  'icmp6-destinationunreach': 1, 'icmp6-packettoobig': 2, 'icmp6-timeexceeded': 3,
  'icmp6-parameterproblem': 4, 'icmp6-echo': 128, 'icmp6-echoreply': 129,
  'icmp6-multicastlistenerquery': 130, 'icmp6-multicastlistenerreportv1': 131,
  'icmp6-multicastlistenerdone': 132, 'icmp6-routersolicit': 133,
  'icmp6-routeradvert': 134, 'icmp6-neighborsolicit': 135, 'icmp6-neighboradvert': 136,
  'icmp6-redirect': 137,
  'tcp-fin': 0x01, 'tcp-syn': 0x02, 'tcp-rst': 0x04, 'tcp-push': 0x08, 'tcp-ack': 0x10,
  'tcp-urg': 0x20, 'tcp-ece': 0x40, 'tcp-cwr': 0x80,
};

// Protocol names (the `pname` of libpcap's grammar) and what they are called here.
const PROTOCOLS = {
  ether: 'link', link: 'link', ip: 'ip', ip6: 'ip6', arp: 'arp', rarp: 'rarp',
  tcp: 'tcp', udp: 'udp', icmp: 'icmp', icmp6: 'icmp6', igmp: 'igmp', sctp: 'sctp',
  igrp: 'igrp', pim: 'pim', vrrp: 'vrrp', carp: 'carp', ah: 'ah', esp: 'esp',
};

const KEYWORDS = new Set([
  'src', 'dst', 'host', 'net', 'mask', 'port', 'portrange', 'proto', 'and', 'or', 'not',
  'less', 'greater', 'len', 'vlan', 'broadcast', 'multicast', 'llc', 'byte',
]);
const SYNONYMS = { length: 'len', '&&': 'and', '||': 'or', '!': 'not', '==': '=' };

// Keywords of pcap-filter(7) that this compiler refuses by name rather than as unknown words.
const UNSUPPORTED = new Set([
  'gateway', 'protochain', 'mpls', 'pppoed', 'pppoes', 'geneve', 'inbound', 'outbound',
  'ifname', 'on', 'rnr', 'rulenum', 'reason', 'rset', 'ruleset', 'srnr', 'subrulenum',
  'action', 'decnet', 'atalk', 'aarp', 'iso', 'esis', 'isis', 'clnp', 'stp', 'ipx',
  'netbeui', 'lat', 'sca', 'moprc', 'mopdl',
  'radio', 'fddi', 'tr', 'wlan', 'ppp', 'slip', 'type', 'subtype', 'dir', 'addr1', 'addr2',
  'addr3', 'addr4', 'ra', 'ta', 'atm', 'lane', 'oamf4', 'oam', 'metac', 'bcc', 'sc', 'ilmic',
  'connectmsg', 'metaconnect', 'vpi', 'vci', 'fisu', 'lssu', 'msu', 'sio', 'opc', 'dpc',
  'sls', 'hfisu', 'hlssu', 'hmsu', 'hsio', 'hopc', 'hdpc', 'hsls', 'heartbeat',
]);

const OPERATORS = ['&&', '||', '<<', '>>', '<=', '>=', '==', '!=', '(', ')', '[', ']', ':',
  '+', '-', '*', '/', '%', '&', '|', '^', '=', '<', '>', '!'];

// Token kinds: 'kw' (keyword, value is the word), 'proto' (value: link|ip|...), 'num',
// 'hid' (dotted IPv4, possibly short: 10.1), 'hid6', 'eid' (MAC), 'id' (any other
// name), 'op' (value is the operator, && and || spelled `and`/`or` as kind 'kw'), 'end'.
function tokenize(text) {
  const tokens = [];
  let depth = 0; // brackets open: ':' is an operator inside them
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const column = i + 1;
    if (c === '\\') {
      const word = scanWord(text, i + 1, depth);
      if (word === '') fail(text, column, "'\\' must be followed by a name");
      tokens.push({ kind: 'id', value: word, column });
      i += 1 + word.length;
      continue;
    }
    if (/[A-Za-z0-9_]/.test(c) || (c === ':' && depth === 0)) {
      const word = scanWord(text, i, depth);
      tokens.push({ ...classify(text, word, column), text: word });
      i += word.length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op === undefined) fail(text, column, `unexpected character '${c}'`);
    if (op === '[') depth++;
    if (op === ']') depth--;
    if (op === '&&' || op === '||' || op === '!') tokens.push({ kind: 'kw', value: SYNONYMS[op], column });
    else tokens.push({ kind: 'op', value: SYNONYMS[op] || op, column });
    i += op.length;
  }
  tokens.push({ kind: 'end', value: '', column: text.length + 1 });
  return tokens;
}

function scanWord(text, from, depth) {
  const pattern = depth > 0 ? /[A-Za-z0-9_.-]/ : /[A-Za-z0-9_.:-]/;
  let end = from;
  while (end < text.length && pattern.test(text[end])) end++;
  return text.slice(from, end);
}

function classify(text, word, column) {
  if (Object.hasOwn(PROTOCOLS, word)) return { kind: 'proto', value: PROTOCOLS[word], column };
  if (KEYWORDS.has(word) || word === 'length') return { kind: 'kw', value: SYNONYMS[word] || word, column };
  if (UNSUPPORTED.has(word)) fail(text, column, `'${word}' is not supported by ixy's filter compiler`);
  if (Object.hasOwn(NAMED_NUMBERS, word)) return { kind: 'num', value: NAMED_NUMBERS[word], column, text: word };
  // As libpcap's scanner: 12 hex digits, or three groups of 4, are an Ethernet address
  // before they are a number or a dotted IPv4 address.
  if (/^[0-9a-fA-F]{12}$/.test(word) || /^[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}$/.test(word)) {
    return { kind: 'eid', value: word, column };
  }
  if (/^(0[xX][0-9a-fA-F]+|[0-9]+)$/.test(word)) {
    if (/^0[0-9]*[89]/.test(word)) fail(text, column, `number ${word} contains non-octal digit`);
    const value = Number(/^0[0-7]+$/.test(word) ? parseInt(word, 8) : word);
    if (value > 0xffffffff) fail(text, column, `number ${word} does not fit in 32 bits`);
    return { kind: 'num', value, column, text: word };
  }
  if (/^[0-9]+(\.[0-9]+){1,3}$/.test(word)) {
    if (word.split('.').some((p) => Number(p) > 255)) fail(text, column, `invalid IPv4 address '${word}'`);
    return { kind: 'hid', value: word, column };
  }
  if (word.includes(':') && net.isIPv6(word)) return { kind: 'hid6', value: word, column };
  if (/^[0-9a-fA-F]{1,2}([:.-][0-9a-fA-F]{1,2}){5}$/.test(word)) {
    return { kind: 'eid', value: word, column };
  }
  if (word.includes(':')) fail(text, column, `'${word}' is neither an IPv6 nor an Ethernet address`);
  return { kind: 'id', value: word, column };
}

// The one way the compiler reports a bad expression: code EFILTER, one line, the column.
function fail(text, column, message) {
  throw new IxyError('EFILTER', `filter '${text}', column ${column}: ${message}`);
}

module.exports = { tokenize, fail };
