'use strict';

// From the syntax tree to the boolean form of ir.js, primitive by primitive, with the
// offsets and the tests libpcap's gencode.c generates for Ethernet (DLT_EN10MB) captures.
//
// Offsets: `lt` is where the EtherType is read, `pl` where the network header starts.
// Each `vlan` moves both 4 bytes further for everything written after it in the
// expression, whatever the and/or structure (pcap-filter(7) says so, and libpcap does
// it while parsing): the tree is walked in source order for that reason.
const ir = require('./ir');
const { fail } = require('./lexer');
const {
  IPPROTO_NAMES: IPPROTO, ETHER_NAMES: ETH, dotted, ipv6Words, maskWord, macBytes, portName, protocolNumber,
} = require('./names');

const { TRUE, FALSE, and, or, not, load, cmp, eq } = ir;
const FRAGMENT_HEADER = 44;
const LLC_IPX = 0xe0;
const ETHERTYPE_IPX = 0x8137;
const IP4_ONLY = new Set(['icmp', 'igmp', 'igrp', 'vrrp', 'carp']);

class CodeGen {
  constructor(text) {
    this.text = text;
    this.lt = 12;
    this.pl = 14;
  }

  error(column, message) { fail(this.text, column, message); }

  bool(node) {
    switch (node.type) {
      case 'true': return TRUE;
      case 'and': return and(...node.items.map((item) => this.bool(item)));
      case 'or': return or(...node.items.map((item) => this.bool(item)));
      case 'not': return not(this.bool(node.expr));
      case 'abbrev': return this.abbrev(node.proto, node.column);
      case 'prim': return this.primitive(node);
      case 'rel': return this.relation(node);
      case 'less': return { k: 'rel', op: '<=', left: { k: 'len' }, right: { k: 'num', value: node.value } };
      case 'greater': return { k: 'rel', op: '>=', left: { k: 'len' }, right: { k: 'num', value: node.value } };
      case 'vlan': return this.vlan(node);
      case 'llc': return this.llc();
      case 'byte': return this.byteTest(node);
      case 'broadcast': return this.broadcast(node);
      case 'multicast': return this.multicast(node);
      default: throw new Error(`unknown node ${node.type}`);
    }
  }

  // The EtherType test, as libpcap's gen_ether_linktype: values up to 1500 are 802.2 LLC
  // SAPs (with the 802.3 length where the EtherType was); IPX also raw 802.3 and SNAP,
  // AppleTalk and AARP also SNAP.
  linktype(type) {
    if (type > 1500 && type !== ETH.atalk && type !== ETH.aarp) return eq(2, this.lt, type);
    const length = not(cmp(load(2, this.lt), 'gt', 1500));
    if (type === ETH.atalk || type === ETH.aarp) {
      return or(eq(2, this.lt, type), and(length, this.snap(type === ETH.atalk ? 0x080007 : 0, type)));
    }
    if (type === LLC_IPX) {
      return or(eq(2, this.lt, ETHERTYPE_IPX), and(length, or(this.snap(0, ETHERTYPE_IPX), eq(1, this.pl, LLC_IPX), eq(2, this.pl, 0xffff))));
    }
    if (type === 0xfe || type === 0x06 || type === 0xf0) return and(length, eq(2, this.pl, (type << 8) | type));
    return and(length, eq(1, this.lt + 2, type));
  }

  // An LLC SNAP header with this OUI and type; libpcap compares its last 4 bytes first.
  snap(oui, type) {
    return and(eq(4, this.pl + 4, (((oui & 0xffff) << 16) | type) >>> 0), eq(4, this.pl, (0xaaaa0300 | (oui >>> 16)) >>> 0));
  }

  // 802.2 LLC: an 802.3 length, and not raw 802.3 IPX (0xffff where the DSAP and SSAP are).
  llc() { return and(not(cmp(load(2, this.lt), 'gt', 1500)), not(eq(2, this.pl, 0xffff))); }

  byteTest(node) {
    const ops = { '=': 'eq', '>': 'gt' };
    if (node.op === '<') return not(cmp(load(1, node.at), 'ge', node.value));
    return cmp(load(1, node.at), ops[node.op], node.value);
  }

  // tcp, udp, ...: the IPv4 protocol field, or IPv6's next header (also behind one fragment header).
  abbrev(proto, column = 0) {
    if (Object.hasOwn(ETH, proto)) return this.linktype(ETH[proto]);
    if (IP4_ONLY.has(proto)) return this.ipProto(IPPROTO[proto]);
    if (proto === 'icmp6') return this.ip6Proto(IPPROTO.icmp6);
    if (Object.hasOwn(IPPROTO, proto)) return or(this.ipProto(IPPROTO[proto]), this.ip6Proto(IPPROTO[proto]));
    return this.error(column, "'ether' alone is not a test: use ether host, ether proto, ether[...]");
  }

  ipProto(v) { return and(this.linktype(ETH.ip), eq(1, this.pl + 9, v)); }

  ip6Proto(v) {
    const next = this.pl + 6;
    return and(this.linktype(ETH.ip6), or(eq(1, next, v), and(eq(1, next, FRAGMENT_HEADER), eq(1, this.pl + 40, v))));
  }

  // Not a fragment other than the first: only the first has the transport header.
  ipFirstFragment() { return cmp(load(2, this.pl + 6), 'eq', 0, 0x1fff); }

  direction(dir, src, dst) {
    if (dir === 'src') return src();
    if (dir === 'dst') return dst();
    if (dir === 'src and dst') return and(src(), dst());
    return or(src(), dst());
  }

  primitive(node) {
    const { q, value } = node;
    if (q.addr === 'port' || q.addr === 'portrange') return this.port(node);
    if (q.addr === 'proto') return this.proto(node);
    if (value.kind === 'eid') return this.etherHost(node);
    if (value.kind === 'hid6') return this.host6(node);
    if (q.proto === 'link') this.error(node.column, `'${value.text || value.value}' is not an Ethernet address`);
    let [v, mask] = value.kind === 'num' ? [value.value, 0xffffffff] : dotted(value.value);
    if (value.kind === 'num' && q.addr === 'net') {
      while (v !== 0 && (v & 0xff000000) === 0) { v = (v << 8) >>> 0; mask = (mask << 8) >>> 0; }
    }
    if (node.maskLength !== null || node.mask !== null) {
      if (q.addr !== 'net') this.error(node.column, 'mask syntax is for networks only (net, not host)');
      if (node.maskLength !== null) {
        if (node.maskLength.value > 32) this.error(node.maskLength.column, `mask length must be <= 32, got ${node.maskLength.value}`);
        mask = node.maskLength.value === 0 ? 0 : (0xffffffff << (32 - node.maskLength.value)) >>> 0;
      } else {
        mask = dotted(node.mask.value)[0];
      }
      if ((v & ~mask) !== 0) this.error(node.column, `non-network bits set in '${this.text.slice(node.column - 1).split(/\s/)[0]}'`);
    }
    return this.host4(v, mask, q);
  }

  host4(v, mask, q) {
    const one = (type, src, dst) => and(this.linktype(type), this.direction(q.dir,
      () => this.masked(this.pl + src, v, mask), () => this.masked(this.pl + dst, v, mask)));
    switch (q.proto) {
      case 'default': return or(one(ETH.ip, 12, 16), one(ETH.arp, 14, 24), one(ETH.rarp, 14, 24));
      case 'ip': return one(ETH.ip, 12, 16);
      case 'arp': return one(ETH.arp, 14, 24);
      case 'rarp': return one(ETH.rarp, 14, 24);
      default: return this.error(q.column, `'${q.proto}' cannot qualify an IPv4 host or net`);
    }
  }

  // A 32-bit field under a mask; a mask of 0 tests nothing (libpcap's optimiser drops it).
  masked(at, v, mask) {
    if (mask === 0) return TRUE;
    return mask === 0xffffffff ? eq(4, at, v) : cmp(load(4, at), 'eq', v, mask);
  }

  host6(node) {
    const { q } = node;
    if (q.proto !== 'default' && q.proto !== 'ip6') this.error(q.column, `'${q.proto}' cannot qualify an IPv6 address`);
    if (q.addr === 'port' || q.addr === 'portrange' || q.addr === 'proto') this.error(node.column, `an IPv6 address is not a ${q.addr}`);
    const bits = node.maskLength === null ? 128 : node.maskLength.value;
    if (bits > 128) this.error(node.maskLength.column, `mask length must be <= 128, got ${bits}`);
    if (bits !== 128 && q.addr !== 'net') this.error(node.column, 'mask syntax is for networks only (net, not host)');
    const words = ipv6Words(node.value.value);
    const masks = [0, 1, 2, 3].map((i) => maskWord(bits - 32 * i));
    if (words.some((w, i) => ((w & ~masks[i]) >>> 0) !== 0)) this.error(node.column, `non-network bits set in '${node.value.value}/${bits}'`);
    const at = (base) => and(...words.map((w, i) => this.masked(this.pl + base + 4 * i, w, masks[i])));
    return and(this.linktype(ETH.ip6), this.direction(q.dir, () => at(8), () => at(24)));
  }

  // Ethernet addresses are at fixed offsets: a VLAN tag does not move them.
  etherHost(node) {
    const { q } = node;
    if (q.proto !== 'link' || (q.addr !== 'host' && q.addr !== 'default')) this.error(node.column, "an Ethernet address needs 'ether host', 'ether src' or 'ether dst'");
    const bytes = macBytes(node.value.value);
    const at = (off) => and(eq(4, off + 2, ((bytes[2] << 24) | (bytes[3] << 16) | (bytes[4] << 8) | bytes[5]) >>> 0), eq(2, off, (bytes[0] << 8) | bytes[1]));
    return this.direction(q.dir, () => at(6), () => at(0));
  }

  // port and portrange, with libpcap's reading of names: a name known for tcp or udp only
  // restricts the test to that protocol (`port http` is tcp port 80), and a qualifier that
  // contradicts it is an error (`udp port http`).
  port(node) {
    const { q, value } = node;
    if (!['default', 'tcp', 'udp', 'sctp'].includes(q.proto)) this.error(q.column, `'${q.proto}' cannot qualify a ${q.addr}`);
    let lo;
    let hi;
    let only = null;
    if (value.kind === 'num') {
      lo = hi = value.value;
    } else if (value.kind === 'id') {
      [lo, hi, only] = this.portWords(node);
    } else {
      this.error(node.column, `'${value.value}' is not a port number`);
    }
    if (only !== null && q.proto !== 'default' && q.proto !== only) this.error(node.column, `port '${value.value}' is ${only}`);
    for (const p of [lo, hi]) if (p > 65535) this.error(node.column, `illegal port number ${p} > 65535`);
    if (lo > hi) [lo, hi] = [hi, lo];
    const protos = q.proto !== 'default' ? [q.proto] : only !== null ? [only] : ['sctp', 'tcp', 'udp'];
    const test = (at) => (lo === hi ? cmp(at, 'eq', lo) : and(cmp(at, 'ge', lo), not(cmp(at, 'gt', hi))));
    const v6 = and(this.linktype(ETH.ip6), or(...protos.map((p) => and(eq(1, this.pl + 6, IPPROTO[p]),
      this.direction(q.dir, () => test(load(2, this.pl + 40)), () => test(load(2, this.pl + 42)))))));
    const v4 = and(this.linktype(ETH.ip), or(...protos.map((p) => and(eq(1, this.pl + 9, IPPROTO[p]), this.ipFirstFragment(),
      this.direction(q.dir, () => test(load(2, 0, this.pl)), () => test(load(2, 2, this.pl)))))));
    return or(v6, v4);
  }

  // [lo, hi, only] of a port name or a range of names or numbers (`domain-tftp`, `1-1000`).
  portWords(node) {
    const text = node.value.value;
    const unknown = () => this.error(node.column, `unknown port${node.q.addr === 'portrange' ? ' in range' : ''} '${text}'`);
    if (node.q.addr === 'port') {
      const found = portName(text);
      if (found === null) unknown();
      return [found.port, found.port, found.only];
    }
    const numbers = /^(\d+)-(\d+)/.exec(text);
    if (numbers !== null) return [Number(numbers[1]), Number(numbers[2]), null];
    const dash = text.indexOf('-');
    if (dash < 0) unknown();
    const a = portName(text.slice(0, dash));
    const b = a === null ? null : portName(text.slice(dash + 1));
    if (b === null) unknown();
    return [a.port, b.port, a.only === b.only ? a.only : null];
  }

  proto(node) {
    const { q, value } = node;
    let v = value.value;
    if (value.kind === 'id') v = protocolNumber(v, q.proto, (message) => this.error(node.column, message));
    else if (value.kind !== 'num') this.error(node.column, `'${v}' is not a protocol number`);
    switch (q.proto) {
      case 'default': return or(this.ipProto(v), this.ip6Proto(v));
      case 'ip': return this.ipProto(v);
      case 'ip6': return this.ip6Proto(v);
      case 'link': return this.linktype(v);
      default: return this.error(node.column, `'${q.proto} proto' is not supported`);
    }
  }

  vlan(node) {
    const tagged = or(this.linktype(0x8100), this.linktype(0x88a8), this.linktype(0x9100));
    let test = tagged;
    if (node.id !== null) {
      if (node.id.value > 4095) this.error(node.id.column, `VLAN tag ${node.id.value} greater than maximum 4095`);
      test = and(tagged, cmp(load(2, this.pl), 'eq', node.id.value, 0x0fff));
    }
    this.lt += 4;
    this.pl += 4;
    return test;
  }

  broadcast(node) {
    if (node.proto === 'default' || node.proto === 'link') return and(eq(4, 2, 0xffffffff), eq(2, 0, 0xffff));
    if (node.proto === 'ip') return and(this.linktype(ETH.ip), or(eq(4, this.pl + 16, 0), eq(4, this.pl + 16, 0xffffffff)));
    return this.error(node.column, `'${node.proto} broadcast' is not supported`);
  }

  multicast(node) {
    if (node.proto === 'default' || node.proto === 'link') return cmp(load(1, 0), 'set', 0, 1);
    if (node.proto === 'ip') return and(this.linktype(ETH.ip), cmp(load(1, this.pl + 16), 'ge', 224));
    if (node.proto === 'ip6') return and(this.linktype(ETH.ip6), eq(1, this.pl + 24, 255));
    return this.error(node.column, `'${node.proto} multicast' is not supported`);
  }

  // arth relop arth: the protocol tests of every load in it (left to right), then the
  // comparison, as libpcap's gen_relation orders them.
  relation(node) {
    const checks = [];
    const left = this.arith(node.left, checks);
    const right = this.arith(node.right, checks);
    if (left.k === 'num' && right.k === 'num') return compare(node.op, left.value, right.value) ? TRUE : FALSE; // no load: no checks
    return and(...checks, asLeaf(node.op, left, right) || { k: 'rel', op: node.op, left, right });
  }

  arith(node, checks) {
    switch (node.type) {
      case 'num': return { k: 'num', value: node.value };
      case 'len': return { k: 'len' };
      case 'neg': {
        const e = this.arith(node.expr, checks);
        return e.k === 'num' ? { k: 'num', value: (-e.value) >>> 0 } : { k: 'neg', e };
      }
      case 'bin': { // as libpcap's gen_arth: only the left operand's protocol tests count
        const left = this.arith(node.left, checks);
        const right = this.arith(node.right, []);
        // libpcap checks the first instruction of the right operand: a constant, or the
        // constant index its first load starts from (`len % ip[0]` is a "modulus by zero").
        // Its optimiser also refuses a divisor that folds to 0 (a shift by 32 or more it folds to 0).
        const first = firstConstant(node.right);
        if ((first === 0 || (right.k === 'num' && right.value === 0)) && (node.op === '/' || node.op === '%')) {
          this.error(node.column, node.op === '/' ? 'division by zero' : 'modulus by zero');
        }
        if (first > 31 && (node.op === '<<' || node.op === '>>')) this.error(node.column, 'shift by more than 31 bits');
        if (right.k === 'num' && left.k === 'num') return { k: 'num', value: fold(node.op, left.value, right.value) };
        return { k: 'bin', op: node.op, left, right };
      }
      case 'load': return this.load(node, checks);
      default: throw new Error(`unknown arithmetic node ${node.type}`);
    }
  }

  // proto[index:size]. Network protocols count from the network header, and only in frames
  // of that protocol; tcp, udp, icmp, igmp and sctp count from the IPv4 payload, and only
  // in first fragments of IPv4 packets of that protocol (libpcap: IPv4 only).
  load(node, checks) {
    const inner = [];
    const index = this.arith(node.index, inner);
    const { proto, size } = node;
    if (proto === 'link') {
      checks.push(...inner);
      return { k: 'load', size, index, base: 0, tr: null };
    }
    if (['ip', 'ip6', 'arp', 'rarp'].includes(proto)) {
      checks.push(...inner, this.abbrev(proto));
      return { k: 'load', size, index, base: this.pl, tr: null };
    }
    if (proto === 'icmp6') { // libpcap: ICMPv6 right after the IPv6 header only
      checks.push(...inner, this.linktype(ETH.ip6), eq(1, this.pl + 6, IPPROTO.icmp6));
      return { k: 'load', size, index, base: this.pl + 40, tr: null };
    }
    checks.push(this.abbrev('ip'), ...inner, this.abbrev(proto), this.ipFirstFragment());
    return { k: 'load', size, index, base: 0, tr: this.pl };
  }
}

// `proto[const] op const` or `proto[const] & const op const` as a leaf of ir.js, which the
// optimiser can reason about and the emitter bounds-checks once (null: not of that form).
const LEAF_OPS = { '=': ['eq', false], '!=': ['eq', true], '>': ['gt', false], '>=': ['ge', false], '<': ['ge', true], '<=': ['gt', true] };
function asLeaf(op, left, right) {
  if (right.k !== 'num') return null;
  let field = left;
  let mask = null;
  if (left.k === 'bin' && left.op === '&' && left.right.k === 'num') {
    field = left.left;
    mask = left.right.value;
  }
  if (field.k !== 'load' || field.index.k !== 'num') return null;
  const at = field.tr === null ? field.base + field.index.value : field.index.value;
  if (op === '!=' && right.value === 0) return cmp(load(field.size, at, field.tr), 'set', 0, mask); // a flag test
  const [leafOp, negated] = LEAF_OPS[op];
  const leaf = cmp(load(field.size, at, field.tr), leafOp, right.value, mask);
  return negated ? not(leaf) : leaf;
}

// The constant the code of an arithmetic syntax node starts by loading, or null.
function firstConstant(node) {
  let n = node;
  for (;;) {
    if (n.type === 'num') return n.value;
    if (n.type === 'load') n = n.index;
    else if (n.type === 'bin') n = n.left;
    else if (n.type === 'neg') n = n.expr;
    else return null;
  }
}

function compare(op, a, b) {
  switch (op) {
    case '>': return a > b;
    case '>=': return a >= b;
    case '=': return a === b;
    case '!=': return a !== b;
    case '<': return a < b;
    default: return a <= b;
  }
}

// 32-bit unsigned arithmetic, as the BPF machine does it.
function fold(op, a, b) {
  switch (op) {
    case '+': return (a + b) >>> 0;
    case '-': return (a - b) >>> 0;
    case '*': return Math.imul(a, b) >>> 0;
    case '/': return Math.floor(a / b) >>> 0;
    case '%': return a % b;
    case '&': return (a & b) >>> 0;
    case '|': return (a | b) >>> 0;
    case '^': return (a ^ b) >>> 0;
    case '<<': return b < 32 ? (a << b) >>> 0 : 0;
    default: return b < 32 ? a >>> b : 0;
  }
}

function toIr(text, tree) {
  return new CodeGen(text).bool(tree);
}

module.exports = { toIr };
