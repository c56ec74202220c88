'use strict';

// The intermediate form between the syntax tree and JavaScript: a boolean tree whose leaves
// are comparisons of one packet field with a constant.
//
//   { k: 'true' } { k: 'false' } { k: 'and'|'or', items } { k: 'not', a }
//   { k: 'cmp', load, mask, op: 'eq'|'gt'|'ge'|'set', value }
//   { k: 'rel', op, left, right }  an arithmetic relation (codegen.js arith()), opaque here
//
// A load is { size: 1|2|4, at, tr }: `at` bytes from the frame's start, or, when `tr` is a
// number, `at` bytes past the IPv4 header that starts at offset `tr` (its length read
// from the header, as libpcap's `ldxms` does). Its `key` names the value it reads, so that
// two leaves reading the same field can be compared (see optimize.js).
//
// Semantics are those of classic BPF as libpcap runs it: evaluation short-circuits from
// the left, and a load beyond the frame's captured length rejects the frame whatever the
// rest of the expression says.

const TRUE = { k: 'true' };
const FALSE = { k: 'false' };

// and/or of nodes, in order: evaluation goes from the first item and stops at the first
// that decides. A nested and in an and (or in an or) is spliced in, which changes nothing
// (short-circuit and/or are associative, loads included) and keeps trees shallow.
function chain(k, nodes) {
  const items = [];
  for (const n of nodes) {
    if (n.k === k) items.push(...n.items);
    else items.push(n);
  }
  return items.length === 1 ? items[0] : { k, items };
}

const and = (...nodes) => chain('and', nodes);
const or = (...nodes) => chain('or', nodes);

function not(a) {
  return { k: 'not', a };
}

function load(size, at, tr = null) {
  return { size, at, tr, key: `${size}@${tr === null ? '' : `T${tr}+`}${at}` };
}

function cmp(ld, op, value, mask = null) {
  return { k: 'cmp', load: ld, mask, op, value, key: mask === null ? ld.key : `${ld.key}&${mask}` };
}

const eq = (size, at, value) => cmp(load(size, at), 'eq', value);

// The number of leaves: what the optimiser's copying is measured in (memoised).
const sizes = new WeakMap();
function size(node) {
  if (node.k !== 'and' && node.k !== 'or' && node.k !== 'not') return 1;
  let n = sizes.get(node);
  if (n === undefined) {
    n = node.k === 'not' ? size(node.a) : node.items.reduce((sum, item) => sum + size(item), 0);
    sizes.set(node, n);
  }
  return n;
}

module.exports = { TRUE, FALSE, and, or, chain, not, load, cmp, eq, size };
