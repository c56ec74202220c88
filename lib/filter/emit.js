'use strict';

// The tree of ir.js as the body of `function (b, len, wire)`: b is the frame's bytes (a
// Uint8Array at least len long), len the number captured, wire the frame's length on the
// wire (`len`, `less`, `greater` read it; it defaults to len). The body uses only locals and
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
    this.wire = false; // whether the body reads the wire length
  }

  temp() { return `t${this.temps++}`; }

  // `known`: the frame is known to hold at least this many bytes here, because a load
  // that reached that far has run on every way to this point (or set `bad`, which
  // rejects the frame anyway). Loads within it need no bounds check.
  bool(node, known) {
    switch (node.k) {
      case 'true': return 'true';
      case 'false': return 'false';
      case 'and': case 'or': {
        // entering an item, the items before it have all held (and) or all failed (or)
        const truth = node.k === 'and';
        let sure = known;
        const parts = node.items.map((item) => {
          const code = this.bool(item, sure);
          sure = Math.max(sure, reached(item, truth));
          return code;
        });
        return `(${parts.join(truth ? ' && ' : ' || ')})`;
      }
      case 'not': return `!(${this.bool(node.a, known)})`;
      case 'cmp': return this.cmp(node, known);
      case 'rel': return `(${this.arith(node.left)} ${REL[node.op]} ${this.arith(node.right)})`;
      default: throw new Error(`unknown node ${node.k}`);
    }
  }

  cmp(node, known) {
    const { load, mask, op, value } = node;
    if (op === 'eq' && load.tr === null && mask !== null && wholeBytes(mask, load.size)) return bytewise(node, known);
    let field = load.tr === null ? fixed(load.size, load.at, known) : this.transport(load.size, load.at, load.tr, known);
    if (mask !== null) field = mask > 0x7fffffff ? `((${field} & ${hex(mask)}) >>> 0)` : `(${field} & ${hex(mask)})`;
    switch (op) {
      case 'eq': return `${field} === ${hex(value)}`;
      case 'gt': return `${field} > ${value}`;
      case 'ge': return `${field} >= ${value}`;
      default: return `${field} !== 0`; // 'set'
    }
  }

  // size bytes at `at` past the IPv4 header that starts at `tr` (its length from the IHL field).
  transport(size, at, tr, known) {
    const t = this.temp();
    return `(${t} = ${tr + at} + ((${fixed(1, tr, known)} & 15) << 2), ${indexed(size, t)})`;
  }

  arith(node) {
    switch (node.k) {
      case 'num': return String(node.value);
      case 'len': this.wire = true; return 'wire';
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

  // A shift by 32 or more gives 0 (JavaScript would take the count modulo 32); the shifted
  // operand is evaluated all the same, since its loads can reject the frame.
  shift(op, a, b) {
    const u = this.temp();
    const t = this.temp();
    return `(${u} = ${a}, ${t} = ${b}, ${t} < 32 ? ((${u} ${op} ${t}) >>> 0) : 0)`;
  }
}

const REL = { '>': '>', '>=': '>=', '=': '===', '!=': '!==', '<': '<', '<=': '<=' };

function hex(v) {
  return v > 255 ? `0x${v.toString(16)}` : String(v);
}

// A big-endian field at a constant offset.
function fixed(size, at, known = 0) {
  const value = read(size, String(at), (i) => String(at + i));
  return at + size <= known ? value : `(len > ${at + size - 1} ? ${value} : (bad = 1))`;
}

// The bytes a leaf's load reaches (0: none known), once the leaf is evaluated.
function end(node) {
  return node.k === 'cmp' ? (node.load.tr === null ? node.load.at + node.load.size : node.load.tr + 1) : 0;
}

// How far the loads reach that have run whenever `node` evaluates to `truth`. An `and`
// fails either at a, or at b after a held: only what both ways load is sure.
function reached(node, truth) {
  // Memoised per node: the `and`s of a long chain would each count their left side twice.
  const memo = reachMemo.get(node) || [-1, -1];
  reachMemo.set(node, memo);
  if (memo[+truth] < 0) memo[+truth] = reach(node, truth);
  return memo[+truth];
}

const reachMemo = new WeakMap();

// An and that holds ran all its items; one that fails ran those before the failing item,
// and that item's loads as far as they go when it fails. An or the other way round.
function reach(node, truth) {
  switch (node.k) {
    case 'true': case 'false': return 0;
    case 'and': case 'or': {
      const all = (node.k === 'and') === truth; // every item evaluated, to `truth`
      let prefix = 0; // what the items before have reached
      let worst = Infinity;
      for (const item of node.items) {
        if (!all) worst = Math.min(worst, Math.max(prefix, reached(item, truth)));
        prefix = Math.max(prefix, reached(item, !all ? !truth : truth));
      }
      return all ? prefix : worst;
    }
    case 'not': return reached(node.a, !truth);
    default: return end(node);
  }
}

// A mask of whole bytes (0x00 or 0xff each), as network masks on byte boundaries are.
function wholeBytes(mask, size) {
  for (let i = 0; i < size; i++) {
    const byte = (mask >>> (8 * (size - 1 - i))) & 0xff;
    if (byte !== 0 && byte !== 0xff) return false;
  }
  return true;
}

// A masked comparison as comparisons of the bytes the mask keeps, bounds checked for the
// whole field as the wide load would be (`src net 10.0.0.0/8` tests one byte).
function bytewise(node, known) {
  const { load: { size, at }, mask, value } = node;
  const tests = [];
  for (let i = 0; i < size; i++) {
    const shift = 8 * (size - 1 - i);
    if (((mask >>> shift) & 0xff) === 0xff) tests.push(`b[${at + i}] === ${(value >>> shift) & 0xff}`);
  }
  const all = tests.length === 0 ? 'true' : tests.join(' && ');
  return at + size <= known ? `(${all})` : `(len > ${at + size - 1} ? (${all}) : (bad = 1) === 0)`;
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
  const expr = e.bool(root, 0);
  const temps = Array.from({ length: e.temps }, (_, i) => `, t${i} = 0`).join('');
  const wire = e.wire ? 'if (wire === undefined) wire = len;\n' : '';
  return `${wire}let bad = 0${temps};\nconst match = ${expr};\nreturn match && bad === 0;`;
}

module.exports = { emit };
