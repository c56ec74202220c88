'use strict';

// Random filter expressions for the differential filter test, from a grammar of
// pcap-filter(7): primitives with every qualifier (some combinations tcpdump refuses, to
// compare rejections too), and/or/not and parentheses, bare values that take the
// qualifiers before them, vlan, byte offsets with arithmetic (shifts and divisions
// included), lengths, port names, and a few spellings tcpdump refuses.

const HOSTS = ['10.0.0.1', '10.0.0.2', '192.168.1.1', '172.16.0.5', '224.0.0.1', '255.255.255.255', '10.1.2.3'];
const NETS = ['10.0.0.0/8', '10', '172.16', '192.168.0.0/16', '10.0.0.0/24', '224.0.0.0/4', '192.168.1.0 mask 255.255.255.0', '0.0.0.0/0', '10.0.0.1/8'];
const HOSTS6 = ['2001:db8::1', '2001:db8::2', 'fe80::1', 'ff02::1', '::1'];
const NETS6 = ['2001:db8::/32', 'fe80::/10', '2001:db8:1::/48', 'ff00::/8', '::/0', '2001:db8::1/128'];
const MACS = ['00:11:22:33:44:55', '02:00:00:00:00:0b', 'ff:ff:ff:ff:ff:ff', '0:11:22:33:44:55', '00-11-22-33-44-55',
  '0011.2233.4455', '001122334455', '02.00.00.00.00.0b', '0a:0b:0c:0d:0e:0f'];
const PORTS = ['22', '53', '67', '69', '80', '123', '443', '5000', '40000', '0', '65535', 'http', 'domain', 'ntp',
  'bootps', 'tftp', 'ssh', 'https', 'www', '08', '070'];
const RANGES = ['1-1000', '1000-5000', '5000-65535', '22-80', '80-22', 'domain-tftp', 'ssh-http', 'ntp-ntp', '0-0'];
const PROTOS = ['ip', 'ip6', 'arp', 'rarp', 'tcp', 'udp', 'icmp', 'icmp6', 'igmp', 'sctp', 'ah', 'esp', 'pim', 'vrrp',
  'carp', 'igrp', 'llc', 'vlan'];
const LOADABLE = ['ether', 'ip', 'ip6', 'arp', 'rarp', 'tcp', 'udp', 'icmp', 'icmp6', 'igmp', 'sctp'];
const NUMBERS = [0, 1, 2, 4, 6, 8, 13, 17, 32, 33, 58, 60, 64, 80, 100, 255, 256, 0x800, 5000, 0xffff, 0xffffffff];
const RELOPS = ['=', '!=', '>', '<', '>=', '<=', '=='];
const ARITH = ['+', '-', '*', '/', '%', '&', '|', '^', '<<', '>>'];

class ExpressionSource {
  constructor(random) {
    this.random = random;
  }

  pick(list) { return list[this.random(list.length)]; }
  chance(n) { return this.random(n) === 0; }
  opt(list) { return this.chance(2) ? '' : `${this.pick(list)} `; }
  num() { return this.chance(4) ? String(this.random(70)) : String(this.pick(NUMBERS)); }

  // An arithmetic expression, depth levels deep at most.
  arith(depth) {
    const r = this.random(depth > 0 ? 7 : 3);
    if (r === 0) return this.chance(2) ? this.num() : `0x${this.random(0x10000).toString(16)}`;
    if (r === 1) return this.chance(3) ? 'len' : this.num();
    if (r === 2) {
      const index = depth > 0 && this.chance(4) ? this.arith(depth - 1) : String(this.random(64));
      return `${this.pick(LOADABLE)}[${index}${this.chance(2) ? '' : `:${this.pick([1, 2, 4, 3])}`}]`;
    }
    if (r === 3) return `(${this.arith(depth - 1)})`;
    if (r === 4) return `- ${this.arith(depth - 1)}`;
    const op = this.pick(ARITH);
    const right = (op === '<<' || op === '>>') && this.chance(2) ? this.pick(['len', '32', '31', '40', 'ether[0]']) : this.arith(depth - 1);
    return `${this.arith(depth - 1)} ${op} ${right}`;
  }

  relation() { return `${this.arith(2)} ${this.pick(RELOPS)} ${this.arith(2)}`; }

  primitive() {
    const dir = () => this.opt(['src', 'dst', 'src or dst', 'src and dst']);
    switch (this.random(17)) {
      case 0: case 1: return this.pick(PROTOS);
      case 2: return `${this.opt(['ip', 'arp', 'rarp', 'ip6', 'tcp'])}${dir()}${this.opt(['host'])}${this.pick(HOSTS)}`;
      case 3: return `${this.opt(['ip', 'arp', 'rarp'])}${dir()}net ${this.pick(NETS)}`;
      case 4: return `${this.opt(['ip6'])}${dir()}${this.pick(['host ', 'net ', ''])}${this.pick(this.chance(2) ? HOSTS6 : NETS6)}`;
      case 5: return `${this.opt(['tcp', 'udp', 'sctp', 'ip'])}${dir()}port ${this.pick(PORTS)}`;
      case 6: return `${this.opt(['tcp', 'udp', 'sctp'])}${dir()}portrange ${this.pick(RANGES)}`;
      case 7: return `ether ${this.pick(['host', 'src', 'dst', 'src or dst', 'src and dst'])} ${this.pick(MACS)}`;
      case 8: return `ether proto ${this.pick(['\\ip', '\\arp', '\\ip6', '\\rarp', '\\atalk', '\\aarp', '\\ipx', '0x809b', '0x80f3', '0x8137', '0x88cc', '0x800', '\\decnet', '\\netbeui', '\\iso'])}`;
      case 9: return `${this.opt(['ip', 'ip6'])}proto ${this.pick(['6', '17', '58', '1', '44', '\\tcp', '\\udp', '\\icmp', '\\sctp', '132', '\\ah'])}`;
      case 10: return `${this.opt(['ether', 'ip', 'ip6'])}${this.pick(['broadcast', 'multicast'])}`;
      case 11: return `${this.pick(['less', 'greater'])} ${this.pick([0, 14, 34, 54, 60, 64, 100, 1500])}`;
      case 12: return `vlan ${this.pick(['100', '200', '300', '0', '4095'])}`;
      case 13: return `byte ${this.random(40)} ${this.pick(['=', '<', '>', '&', '|'])} ${this.random(256)}`;
      case 14: return this.pick(['host 10.0.0.256', 'src 10.0.0.0/8', 'host 256.1', 'ether host 0011.2233.44', 'port 99999', 'net 10.0.0.0/33']);
      default: return this.relation();
    }
  }

  // A term of an expression, qualifiers the bare value after `and`/`or` would take.
  term(depth) {
    const r = depth > 0 ? this.random(6) : 5;
    if (r === 0) return `not ${this.term(depth - 1)}`;
    if (r === 1) return `(${this.expression(depth - 1)})`;
    return this.primitive();
  }

  expression(depth = 3) {
    let text = this.term(depth);
    const n = this.random(depth + 1);
    for (let i = 0; i < n; i++) {
      const join = this.pick(['and', 'or', '&&', '||']);
      // a bare value after a qualified primitive takes its qualifiers (`host a or b`)
      const bare = /(host|net|port) \S+$/.test(text) && this.chance(3);
      text += ` ${join} ${bare ? this.pick([...HOSTS, '80', '53', 'not 80', '(22 or 443)']) : this.term(depth - 1)}`;
    }
    return text;
  }
}

function randomExpressions(random, count) {
  const source = new ExpressionSource(random);
  return Array.from({ length: count }, () => source.expression(3));
}

// mulberry32: the same sequence on every run for a seed; (n) => integer in [0, n).
function seeded(seed) {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

module.exports = { randomExpressions, seeded };
