'use strict';

// The intermediate form between the syntax tree and JavaScript: a boolean tree whose leaves
// are comparisons of one packet field with a constant.
//
//   { k: 'true' } { k: 'false' } { k: 'and'|'or', a, b } { k: 'not', a }
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

function and(...nodes) {
  return nodes.reduce((a, b) => (a === null ? b : { k: 'and', a, b }), null);
}

function or(...nodes) {
  return nodes.reduce((a, b) => (a === null ? b : { k: 'or', a, b }), null);
}

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

// The number of leaves: what the optimiser's copying is measured in.
function size(node) {
  switch (node.k) {
    case 'and': case 'or': return size(node.a) + size(node.b);
    case 'not': return size(node.a);
    default: return 1;
  }
}

module.exports = { TRUE, FALSE, and, or, not, load, cmp, eq, size };
