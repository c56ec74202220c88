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
    this.bad = false; // whether it sets bad (a load beyond the frame where failing is not enough)
  }

  temp() { return `t${this.temps++}`; }

  // `known`: the frame is known to hold at least this many bytes here, because a load
  // that reached that far has run on every way to this point (or set `bad`, which
  // rejects the frame anyway). Loads within it need no bounds check. `final`: if this
  // node fails, the whole filter fails (see optimize.js); there a load beyond the frame
  // may simply fail, without `bad`.
  bool(node, known, final) {
    switch (node.k) {
      case 'true': return 'true';
      case 'false': return 'false';
      case 'and': case 'or': {
        // entering an item, the items before it have all held (and) or all failed (or)
        const truth = node.k === 'and';
        let sure = known;
        const last = node.items.length - 1;
        const parts = node.items.map((item, i) => {
          const code = this.bool(item, sure, final && (truth || i === last));
          sure = Math.max(sure, reached(item, truth));
          return code;
        });
        return `(${parts.join(truth ? ' && ' : ' || ')})`;
      }
      case 'not': return `!${this.bool(node.a, known, false)}`;
      case 'cmp': return this.cmp(node, known, final);
      case 'rel': // its loads and divisions set bad (their order is BPF's, see codegen.js)
        this.bad = true;
        return `(${this.arith(node.left)} ${REL[node.op]} ${this.arith(node.right)})`;
      default: throw new Error(`unknown node ${node.k}`);
    }
  }

  cmp(node, known, final) {
    const { load } = node;
    if (load.tr !== null) return this.transportCmp(node, known, final);
    const test = compare(node, read(load.size, String(load.at), (i) => String(load.at + i)));
    if (load.at + load.size <= known) return `(${test})`;
    const guard = `len > ${load.at + load.size - 1}`;
    if (final) return `(${guard} && ${test})`;
    this.bad = true;
    return `(${guard} ? ${test} : (bad = 1) === 0)`;
  }

  // A field `at` bytes past the IPv4 header that starts at `tr` (its length in the IHL field).
  transportCmp(node, known, final) {
    const { load: { size, at, tr } } = node;
    const t = this.temp();
    const field = compare(node, read(size, t, (i) => `${t} + ${i}`));
    if (final) {
      const ihl = tr + 1 <= known ? '' : `len > ${tr} && `;
      return `(${ihl}(${t} = ${tr + at} + ((b[${tr}] & 15) << 2), len >= ${t} + ${size} && ${field}))`;
    }
    this.bad = true;
    return `(${t} = ${tr + at} + ((${fixed(1, tr, known)} & 15) << 2), len >= ${t} + ${size} ? ${field} : (bad = 1) === 0)`;
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
      case '>>': return this.constantShift(node, a) || this.shift('>>>', a, b);
      case '<<': return this.constantShift(node, a) || this.shift('<<', a, b);
      default: { // '/' and '%': BPF rejects the frame on a divisor of 0 found at run time
        const t = this.temp();
        const result = node.op === '/' ? `((${a} / ${t}) >>> 0)` : `(${a} % ${t})`;
        return `(${t} = ${b}, ${t} === 0 ? (bad = 1) : ${result})`;
      }
    }
  }

  // A shift by a constant count (null: not constant); by 32 or more, 0 once a is evaluated.
  constantShift(node, a) {
    if (node.right.k !== 'num') return null;
    const n = node.right.value;
    if (n >= 32) return `(${a}, 0)`;
    return node.op === '>>' ? `(${a} >>> ${n})` : `((${a} << ${n}) >>> 0)`;
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

// The test of a leaf on its field (read: the expression that loads it). An equality at a
// fixed offset under a mask of whole bytes compares the bytes it keeps one by one, first
// byte first, as a hand-written test would (`ether proto` is b[12] === 8 && b[13] === 0,
// `src net 10.0.0.0/8` one byte).
function compare({ load, mask, op, value }, field) {
  const m = mask === null ? (load.size === 4 ? 0xffffffff : (1 << (8 * load.size)) - 1) : mask;
  if (op === 'eq' && load.tr === null && load.size > 1 && wholeBytes(m, load.size)) {
    const tests = [];
    for (let i = 0; i < load.size; i++) {
      const shift = 8 * (load.size - 1 - i);
      if (((m >>> shift) & 0xff) === 0xff) tests.push(`b[${load.at + i}] === ${(value >>> shift) & 0xff}`);
    }
    return tests.length === 0 ? 'true' : tests.join(' && ');
  }
  let f = field;
  if (mask !== null) f = mask > 0x7fffffff ? `((${f} & ${hex(mask)}) >>> 0)` : `(${f} & ${hex(mask)})`;
  switch (op) {
    case 'eq': return `${f} === ${hex(value)}`;
    case 'gt': return `${f} > ${value}`;
    case 'ge': return `${f} >= ${value}`;
    default: return `${f} !== 0`; // 'set'
  }
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

const FAST_COPY_LIMIT = 8192; // characters: longer tests are not doubled

// The farthest a fixed-offset load of a leaf reaches (0: none).
function farthest(node) {
  switch (node.k) {
    case 'and': case 'or': return node.items.reduce((m, item) => Math.max(m, farthest(item)), 0);
    case 'not': return farthest(node.a);
    case 'cmp': return end(node);
    default: return 0;
  }
}

// The source of the predicate's body, and the number of temporaries it declares.
// Frames at least as long as every fixed-offset load reaches (most frames: 60 bytes and
// more) take a copy of the test without their bounds checks; shorter ones the checked one.
function emit(root) {
  const e = new Emitter();
  const checked = e.bool(root, 0, true);
  const checkedBad = e.bad;
  e.bad = false;
  const far = farthest(root);
  const fast = far > 0 && checked.length <= FAST_COPY_LIMIT ? e.bool(root, far, true) : null;
  const fastBad = e.bad;
  e.bad = checkedBad;
  const lines = [];
  if (e.wire) lines.push('if (wire === undefined) wire = len;');
  if (e.temps > 0) lines.push(`let ${Array.from({ length: e.temps }, (_, i) => `t${i} = 0`).join(', ')};`);
  if (fast !== null && !fastBad) lines.push(`if (len >= ${far}) return ${fast};`);
  const expr = fast !== null && fastBad ? `(len >= ${far} ? ${fast} : ${checked})` : checked;
  if (!e.bad && !(fast !== null && fastBad)) lines.push(`return ${expr};`);
  else lines.push('let bad = 0;', `const match = ${expr};`, 'return match && bad === 0;');
  return lines.join('\n');
}

module.exports = { emit };
