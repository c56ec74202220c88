'use strict';

// The grammar of pcap-filter(7), parsed by recursive descent into a syntax tree that keeps
// each node's column (for errors the code generator finds, such as non-network bits).
//
// What tcpdump users rely on and this parser keeps:
// - `and` and `or` have the same precedence and group from the left (`a or b and c` is
//   `(a or b) and c`); `not` binds tightest.
// - A bare value after `and`/`or` takes the qualifiers of the primitive before it:
//   `host a or b` is `host a or host b`, `tcp port 80 or 443` is `tcp port 80 or tcp port 443`,
//   `host a and not b`, `host a or (b or c)`. A parenthesised expression passes on the
//   qualifiers from before the parenthesis; protocol names and relations pass on none.
// - Arithmetic: `*` `/` over `+` `-` over `<<` `>>` over `&` over `|`, each from the
//   left. libpcap gives `%` and `^` no precedence, so its parser always shifts on them:
//   their right operand is the whole rest of the arithmetic (`5 % 3 + 1` is `5 % 4`,
//   `1 + 5 % 3` is `1 + 2`). We reproduce that rather than the C-like reading.
const { tokenize, fail } = require('./lexer');

const DEFAULT_Q = { proto: 'default', dir: 'default', addr: 'default' };
const VALUE_KINDS = new Set(['num', 'hid', 'hid6', 'eid', 'id']);
const RELOPS = new Set(['>', '>=', '=', '!=', '<', '<=']);
const LEVELS = [['|'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/']];
// Deeper nesting is refused with EFILTER: the later stages recurse this deep.
const MAX_DEPTH = 500;
const LOADABLE = new Set(['link', 'ip', 'ip6', 'arp', 'rarp', 'tcp', 'udp', 'icmp', 'icmp6', 'igmp', 'sctp', 'igrp', 'pim', 'vrrp', 'carp']);
const BYTE_OPS = new Set(['=', '<', '>', '&', '|']);

class Parser {
  constructor(text) {
    this.text = text;
    this.tokens = tokenize(text);
    this.at = 0;
    this.depth = 0; // nesting: parentheses, not, unary minus, brackets, and/or alternations
    this.closing = matchParentheses(this.tokens);
  }

  // Enters one level of nesting; every later stage recurses as deep as this, so it is bounded.
  enter(token) {
    if (++this.depth > MAX_DEPTH) this.error(token, `the expression nests more than ${MAX_DEPTH} levels deep (parentheses, not, and/or alternations)`);
  }

  leave() { this.depth--; }

  peek(ahead = 0) { return this.tokens[Math.min(this.at + ahead, this.tokens.length - 1)]; }
  next() { return this.tokens[this.at++]; }
  is(kind, value, ahead = 0) {
    const t = this.peek(ahead);
    return t.kind === kind && (value === undefined || t.value === value);
  }

  error(token, message) { fail(this.text, token.column, message); }

  expect(kind, value, what) {
    if (!this.is(kind, value)) this.error(this.peek(), `expected ${what}, got ${describe(this.peek())}`);
    return this.next();
  }

  parse() {
    if (this.is('end')) return { type: 'true' };
    const { node } = this.expression(null);
    if (!this.is('end')) this.error(this.peek(), `unexpected ${describe(this.peek())}`);
    return node;
  }

  // expr: term (('and' | 'or') (term | id))*. Returns the node and the qualifiers a bare
  // value after it would take (null: none). A run of the same operator is one node with
  // a list of items (`a or b or c`); each switch between and and or nests one level.
  expression(qBefore) {
    let { node, q } = this.term(qBefore);
    const depth = this.depth;
    while (this.is('kw', 'and') || this.is('kw', 'or')) {
      const op = this.next();
      const right = this.termOrId(q);
      if (node.type === op.value && node.chain === this) {
        node.items.push(right.node);
      } else {
        this.enter(op);
        node = { type: op.value, items: [node, right.node], chain: this };
      }
      q = right.q;
    }
    this.depth = depth;
    return { node, q };
  }

  // After and/or: a bare value (`host a or b`, `port 80 or not 22`, `host a or (b or c)`)
  // when, past any `not` and `(`, a value comes that a boundary follows; else a term.
  termOrId(q) {
    if (q === null) return this.term(q);
    let i = 0;
    while (this.is('kw', 'not', i) || this.is('op', '(', i)) {
      if (this.opensArithmetic(this.at + i)) return this.term(q); // `(100) == x`
      i++;
    }
    const t = this.peek(i);
    const after = this.peek(i + 1);
    const masked = (t.kind === 'hid' || t.kind === 'hid6') && ((after.kind === 'op' && after.value === '/') || (after.kind === 'kw' && after.value === 'mask'));
    if (VALUE_KINDS.has(t.kind) && (this.atBoundary(i + 1) || masked)) return { node: this.id(q), q };
    return this.term(q);
  }

  // id: value | 'not' id | '(' id (('and' | 'or') id)* ')', all under the qualifiers q.
  id(q) {
    const t = this.peek();
    if (this.is('kw', 'not')) {
      this.enter(this.next());
      const node = { type: 'not', expr: this.id(q) };
      this.leave();
      return node;
    }
    if (this.is('op', '(')) { // libpcap's grammar has no `((` here: `host a or ((b))` is refused
      this.enter(this.next());
      if (this.is('op', '(')) this.error(this.peek(), "expected a value or 'not', got '('");
      let node = this.id(q);
      const depth = this.depth;
      while (this.is('kw', 'and') || this.is('kw', 'or')) {
        const op = this.next();
        const right = this.id(q);
        if (node.type === op.value && node.chain === this) {
          node.items.push(right);
        } else {
          this.enter(op);
          node = { type: op.value, items: [node, right], chain: this };
        }
      }
      this.depth = depth;
      this.expect('op', ')', "')'");
      this.leave();
      return node;
    }
    if (!VALUE_KINDS.has(t.kind)) this.error(t, `expected a value, got ${describe(t)}`);
    if (t.kind === 'id' && !['port', 'portrange', 'proto'].includes(q.addr)) {
      this.error(t, `unknown word '${t.value}' (host and network names are not resolved: write the address)`);
    }
    this.next();
    const node = { type: 'prim', q, value: t, column: t.column, maskLength: null, mask: null };
    if ((t.kind === 'hid' || t.kind === 'hid6') && this.is('op', '/')) {
      this.next();
      node.maskLength = this.expect('num', undefined, 'a prefix length');
    } else if (t.kind === 'hid' && this.is('kw', 'mask')) {
      this.next();
      node.mask = this.expect('hid', undefined, 'a dotted netmask');
    }
    return node;
  }

  term(qBefore) {
    const t = this.peek();
    if (this.is('kw', 'not')) {
      this.enter(this.next());
      const inner = this.term(qBefore);
      this.leave();
      return { node: { type: 'not', expr: inner.node }, q: inner.q };
    }
    if (this.is('op', '(')) {
      // `(` opens arithmetic when an operator follows its `)`: `(ip[0] & 0xf) > 5`.
      if (this.opensArithmetic(this.at)) return this.relation();
      this.enter(this.next());
      const { node } = this.expression(qBefore);
      this.expect('op', ')', "')'");
      this.leave();
      return { node, q: qBefore };
    }
    if (t.kind === 'proto') {
      if (this.is('op', '[', 1)) return this.relation();
      const after = this.peek(1);
      if (after.kind === 'kw' && ['broadcast', 'multicast'].includes(after.value)) {
        this.next();
        this.next();
        return { node: { type: after.value, proto: t.value, column: t.column }, q: null };
      }
      if (isHeadWord(after)) return this.qualified();
      this.next();
      return { node: { type: 'abbrev', proto: t.value, column: t.column }, q: null };
    }
    if (isHeadWord(t)) return this.qualified();
    if (t.kind === 'kw' && (t.value === 'less' || t.value === 'greater')) {
      this.next();
      const n = this.expect('num', undefined, `a length after '${t.value}'`);
      return { node: { type: t.value, value: n.value }, q: null };
    }
    if (this.is('kw', 'llc')) {
      this.next();
      if (this.is('id')) this.error(this.peek(), `'llc ${this.peek().value}' is not supported (only 'llc' alone)`);
      return { node: { type: 'llc' }, q: null };
    }
    if (this.is('kw', 'byte')) return this.byteTest();
    if (this.is('kw', 'vlan')) {
      this.next();
      const id = this.is('num') ? this.next() : null;
      return { node: { type: 'vlan', id, column: t.column }, q: null };
    }
    if (t.kind === 'kw' && (t.value === 'broadcast' || t.value === 'multicast')) {
      this.next();
      return { node: { type: t.value, proto: 'default', column: t.column }, q: null };
    }
    if (VALUE_KINDS.has(t.kind) && (t.kind !== 'num' || this.atBoundary(1))) {
      this.error(t, `${describe(t)} needs a qualifier before it, such as host, net or port`);
    }
    if (t.kind === 'num' || this.is('kw', 'len') || this.is('op', '-')) return this.relation();
    return this.error(t, `expected a filter primitive, got ${describe(t)}`);
  }

  // Whether the token at index i is a '(' whose ')' an operator follows: `(ip[0] & 0xf) > 5`.
  opensArithmetic(i) {
    if (this.tokens[i].kind !== 'op' || this.tokens[i].value !== '(' || this.closing[i] < 0) return false;
    const after = this.tokens[this.closing[i] + 1];
    return after.kind === 'op' && after.value !== ')';
  }

  // byte N op V (op: = < > & |), a byte of the frame against a constant. libpcap compiles
  // `&` and `|` without loading the byte (they test whatever was loaded before): refused.
  byteTest() {
    this.next();
    const at = this.expect('num', undefined, "an offset after 'byte'");
    const op = this.peek();
    if (op.kind !== 'op' || !BYTE_OPS.has(op.value)) this.error(op, `expected = < > & or | after 'byte ${at.value}', got ${describe(op)}`);
    if (op.value === '&' || op.value === '|') this.error(op, `'byte ${at.value} ${op.value}' is not supported (libpcap tests a value it never loads)`);
    this.next();
    const value = this.expect('num', undefined, 'a byte value');
    return { node: { type: 'byte', at: at.value, op: op.value, value: value.value }, q: null };
  }

  // Whether the token `ahead` ends a primitive: and, or, ')' or the end.
  atBoundary(ahead = 0) {
    return this.is('kw', 'and', ahead) || this.is('kw', 'or', ahead) || this.is('op', ')', ahead) || this.is('end', undefined, ahead);
  }

  // head id: [proto] [src|dst|src or dst|src and dst] [host|net|port|portrange|proto] value
  qualified() {
    const q = { ...DEFAULT_Q, column: this.peek().column };
    if (this.is('proto')) q.proto = this.next().value;
    if (this.is('kw', 'src') || this.is('kw', 'dst')) {
      q.dir = this.next().value;
      const joined = this.peek(1);
      if ((this.is('kw', 'or') || this.is('kw', 'and')) && joined.kind === 'kw' &&
          (joined.value === 'src' || joined.value === 'dst') && joined.value !== q.dir) {
        q.dir = this.next().value === 'or' ? 'src or dst' : 'src and dst';
        this.next();
      }
    }
    if (this.is('kw') && ['host', 'net', 'port', 'portrange', 'proto'].includes(this.peek().value)) {
      if (this.peek().value === 'proto' && q.dir !== 'default') this.error(this.peek(), "'proto' takes no direction");
      q.addr = this.next().value;
    }
    return { node: this.id(q), q };
  }

  // arth relop arth
  relation() {
    const left = this.arith(0);
    const op = this.peek();
    if (op.kind !== 'op' || !RELOPS.has(op.value)) this.error(op, `expected a comparison (=, !=, <, <=, >, >=), got ${describe(op)}`);
    this.next();
    const right = this.arith(0);
    return { node: { type: 'rel', op: op.value, left, right, column: op.column }, q: null };
  }

  arith(level) {
    let left = level === LEVELS.length ? this.unary() : this.arith(level + 1);
    const depth = this.depth;
    while (level < LEVELS.length && this.is('op') && LEVELS[level].includes(this.peek().value)) {
      const op = this.next();
      this.enter(op); // a left-deep tree: each operator nests the ones before it
      const right = this.arith(level + 1);
      left = { type: 'bin', op: op.value, left, right, column: op.column };
    }
    this.depth = depth;
    return left;
  }

  unary() {
    if (this.is('op', '-')) {
      this.enter(this.next());
      const node = { type: 'neg', expr: this.unary() };
      this.leave();
      return node;
    }
    const left = this.atom();
    if (this.is('op', '%') || this.is('op', '^')) {
      const op = this.next();
      this.enter(op);
      const node = { type: 'bin', op: op.value, left, right: this.arith(0), column: op.column };
      this.leave();
      return node;
    }
    return left;
  }

  atom() {
    const t = this.peek();
    if (t.kind === 'num') return { type: 'num', value: this.next().value };
    if (this.is('kw', 'len')) {
      this.next();
      return { type: 'len' };
    }
    if (this.is('op', '(')) {
      this.enter(this.next());
      const inner = this.arith(0);
      this.expect('op', ')', "')'");
      this.leave();
      return inner;
    }
    if (t.kind === 'proto' && this.is('op', '[', 1)) {
      if (!LOADABLE.has(t.value)) this.error(t, `'${t.value}[...]' is not supported`);
      this.next();
      this.enter(this.next());
      const index = this.arith(0);
      let size = 1;
      if (this.is('op', ':')) {
        this.next();
        const s = this.expect('num', undefined, 'a size (1, 2 or 4)');
        if (![1, 2, 4].includes(s.value)) this.error(s, 'data size must be 1, 2, or 4');
        size = s.value;
      }
      this.expect('op', ']', "']'");
      this.leave();
      return { type: 'load', proto: t.value, index, size, column: t.column };
    }
    return this.error(t, `expected a number, len or a protocol[offset], got ${describe(t)}`);
  }
}

// For each '(' token, the index of its ')' (-1 when it has none).
function matchParentheses(tokens) {
  const closing = new Array(tokens.length).fill(-1);
  const open = [];
  tokens.forEach((t, i) => {
    if (t.kind !== 'op') return;
    if (t.value === '(') open.push(i);
    else if (t.value === ')' && open.length > 0) closing[open.pop()] = i;
  });
  return closing;
}

function isHeadWord(t) {
  return t.kind === 'kw' && ['src', 'dst', 'host', 'net', 'port', 'portrange', 'proto'].includes(t.value);
}

function describe(token) {
  if (token.kind === 'end') return 'the end of the expression';
  return `'${token.text || token.value}'`;
}

function parse(text) {
  return new Parser(text).parse();
}

module.exports = { parse };
