'use strict';

// The tree of ir.js as the body of `function (b, len)`: b is the frame's bytes (a
// Uint8Array at least len long), len its length. The body uses only locals and
// arithmetic on small integers, so V8 compiles it to straight-line machine code and a call
// allocates nothing.
//
// Every load checks its bounds against len. One beyond the frame sets `bad`, which
// rejects the frame at the end whatever the expression evaluated to: classic BPF returns 0
// at once on such a load, and && and || here evaluate in the order BPF's jumps do, so
// the same loads are reached. Values are unsigned 32-bit (`>>> 0` where a result could
// be negative in JavaScript's signed view), as in the BPF machine.

class Emitter {
  constructor() {
    this.temps = 0;
  }

  temp() { return `t${this.temps++}`; }

  bool(node) {
    switch (node.k) {
      case 'true': return 'true';
      case 'false': return 'false';
      case 'and': return `(${this.bool(node.a)} && ${this.bool(node.b)})`;
      case 'or': return `(${this.bool(node.a)} || ${this.bool(node.b)})`;
      case 'not': return `!(${this.bool(node.a)})`;
      case 'cmp': return this.cmp(node);
      case 'rel': return `(${this.arith(node.left)} ${REL[node.op]} ${this.arith(node.right)})`;
      default: throw new Error(`unknown node ${node.k}`);
    }
  }

  cmp(node) {
    const { load, mask, op, value } = node;
    let field = load.tr === null ? fixed(load.size, load.at) : this.transport(load.size, load.at, load.tr);
    if (mask !== null) field = mask > 0x7fffffff ? `((${field} & ${hex(mask)}) >>> 0)` : `(${field} & ${hex(mask)})`;
    switch (op) {
      case 'eq': return `${field} === ${hex(value)}`;
      case 'gt': return `${field} > ${value}`;
      case 'ge': return `${field} >= ${value}`;
      default: return `${field} !== 0`; // 'set'
    }
  }

  // size bytes at `at` past the IPv4 header that starts at `tr` (its length from the IHL field).
  transport(size, at, tr) {
    const t = this.temp();
    return `(${t} = ${tr + at} + ((${fixed(1, tr)} & 15) << 2), ${indexed(size, t)})`;
  }

  arith(node) {
    switch (node.k) {
      case 'num': return String(node.value);
      case 'len': return 'len';
      case 'neg': return `((-${this.arith(node.e)}) >>> 0)`;
      case 'load': return this.load(node);
      case 'bin': return this.binary(node);
      default: throw new Error(`unknown arithmetic node ${node.k}`);
    }
  }

  load(node) {
    const { size, index, base, tr } = node;
    if (tr === null && index.k === 'num') return fixed(size, base + index.value);
    const t = this.temp();
    const start = tr === null ? `${base}` : `${tr} + ((${fixed(1, tr)} & 15) << 2)`;
    return `(${t} = ${start} + ${this.arith(index)}, ${indexed(size, t)})`;
  }

  binary(node) {
    const a = this.arith(node.left);
    const b = this.arith(node.right);
    switch (node.op) {
      case '+': return `((${a} + ${b}) >>> 0)`;
      case '-': return `((${a} - ${b}) >>> 0)`;
      case '*': return `(Math.imul(${a}, ${b}) >>> 0)`;
      case '&': return `((${a} & ${b}) >>> 0)`;
      case '|': return `((${a} | ${b}) >>> 0)`;
      case '^': return `((${a} ^ ${b}) >>> 0)`;
      case '>>': return node.right.k === 'num' ? `(${a} >>> ${b})` : this.shift('>>>', a, b);
      case '<<': return node.right.k === 'num' ? `((${a} << ${b}) >>> 0)` : this.shift('<<', a, b);
      default: { // '/' and '%': BPF rejects the frame on a divisor of 0 found at run time
        const t = this.temp();
        const result = node.op === '/' ? `((${a} / ${t}) >>> 0)` : `(${a} % ${t})`;
        return `(${t} = ${b}, ${t} === 0 ? (bad = 1) : ${result})`;
      }
    }
  }

  // A shift by 32 or more gives 0 (JavaScript would take the count modulo 32).
  shift(op, a, b) {
    const t = this.temp();
    return `(${t} = ${b}, ${t} < 32 ? ((${a} ${op} ${t}) >>> 0) : 0)`;
  }
}

const REL = { '>': '>', '>=': '>=', '=': '===', '!=': '!==', '<': '<', '<=': '<=' };

function hex(v) {
  return v > 255 ? `0x${v.toString(16)}` : String(v);
}

// A big-endian field at a constant offset.
function fixed(size, at) {
  return `(len > ${at + size - 1} ? ${read(size, String(at), (i) => String(at + i))} : (bad = 1))`;
}

// A big-endian field at the offset held in local t.
function indexed(size, t) {
  return `(len >= ${t} + ${size} ? ${read(size, t, (i) => `${t} + ${i}`)} : (bad = 1))`;
}

function read(size, first, at) {
  if (size === 1) return `b[${first}]`;
  if (size === 2) return `(b[${first}] << 8 | b[${at(1)}])`;
  return `((b[${first}] << 24 | b[${at(1)}] << 16 | b[${at(2)}] << 8 | b[${at(3)}]) >>> 0)`;
}

// The source of the predicate's body, and the number of temporaries it declares.
function emit(root) {
  const e = new Emitter();
  const expr = e.bool(root);
  const temps = Array.from({ length: e.temps }, (_, i) => `, t${i} = 0`).join('');
  return `let bad = 0${temps};\nconst match = ${expr};\nreturn match && bad === 0;`;
}

module.exports = { emit };
