'use strict';

// What libpcap's optimiser does for the common filters, on the tree of ir.js: a test that
// what was tested before already decides is dropped. In `udp and dst port 53`, once the
// EtherType is known to be IPv4, the IPv6 half of `port` and the repeated EtherType and
// protocol tests vanish, leaving what a hand-written test would do.
//
// Facts: on the way into the right side of `a and b`, a is known true; into the right
// side of `a or b`, a is known false. A fact is a field (a leaf's key) known equal to a
// value, or known different from some values.
//
// To carry facts out of an `or` (`(ip and ...) or (ip6 and ...)` followed by more tests),
// `(a or b) and c` becomes `(a and c) or (b and c)`, each copy of c simplified under its
// own facts (or `(a and c) or (not a and b and c)`, see simplifyAnd). This is exact, loads
// beyond the frame included. The copying stops at COPY_BUDGET leaves, so no expression
// grows without bound.
//
// A test the facts decide loads nothing new: a fact comes from a load of the same field
// that ran before. Other loads are dropped only where the frame is rejected either way.
const { TRUE, FALSE, size } = require('./ir');

const COPY_BUDGET = 400;

function optimize(root) {
  const state = { budget: COPY_BUDGET };
  return simplify(root, new Map(), state, true);
}

// final: if this node fails, the whole filter fails (the root; inside a final node, both
// sides of an `and` and the right side of an `or`). There, failing and loading beyond the
// frame mean the same, the frame is rejected; elsewhere they differ (`not`, `or`'s left).
function simplify(node, facts, state, final) {
  switch (node.k) {
    case 'and': return simplifyAnd(node.a, node.b, facts, state, final);
    case 'or': {
      const a = simplify(node.a, facts, state, false);
      if (a.k === 'true') return TRUE;
      const b = simplify(node.b, learn(a, false, facts), state, final);
      if (a.k === 'false') return b;
      if (b.k === 'false') return a;
      return { k: 'or', a, b };
    }
    case 'not': {
      const a = simplify(node.a, facts, state, false);
      if (a.k === 'true') return FALSE;
      if (a.k === 'false') return TRUE;
      return { k: 'not', a };
    }
    case 'cmp': return known(node, facts);
    default: return node;
  }
}

function simplifyAnd(left, right, facts, state, final) {
  const a = simplify(left, facts, state, final);
  if (a.k === 'false') return FALSE;
  const copies = (final ? 1 : 2) * size(right) + (final ? 0 : size(a.a || a));
  if (a.k === 'or' && state.budget >= copies) {
    state.budget -= copies;
    const first = simplifyAnd(a.a, right, facts, state, false);
    if (first.k === 'true') return TRUE;
    // Where a.a held and c failed, the second copy runs b's loads, which the original
    // never reaches: one beyond the frame rejects it. That is no change where this `and`
    // is final; elsewhere (`not ((a.a or b) and c)` accepts that frame) the second copy
    // first tests a.a again and stops where it holds. a.a's loads have run already:
    // nothing new is loaded, and what follows knows a.a failed.
    const second = final
      ? simplifyAnd(a.b, right, facts, state, true)
      : simplifyAnd({ k: 'not', a: a.a }, { k: 'and', a: a.b, b: right }, facts, state, false);
    if (first.k === 'false') return second;
    if (second.k === 'false') return first;
    return { k: 'or', a: first, b: second };
  }
  const b = simplify(right, learn(a, true, facts), state, final);
  if (a.k === 'true') return b;
  if (b.k === 'true') return a;
  // `a and false` fails; a's loads must stay where a load beyond the frame (a rejected
  // frame) differs from failing: `not (a and false)` accepts the frame otherwise.
  if (b.k === 'false' && (final || !hasLoads(a))) return FALSE;
  return { k: 'and', a, b };
}

// A leaf the facts decide becomes true or false; others stay.
function known(node, facts) {
  const fact = facts.get(node.key);
  if (fact === undefined) return node;
  if (fact.eq !== undefined) return holds(node.op, fact.eq, node.value) ? TRUE : FALSE;
  return node.op === 'eq' && fact.ne.has(node.value) ? FALSE : node;
}

function holds(op, field, value) {
  switch (op) {
    case 'eq': return field === value;
    case 'gt': return field > value;
    case 'ge': return field >= value;
    default: return field !== 0; // 'set': the key includes the mask
  }
}

// The facts that hold once `node` has evaluated to `truth` (a new map: the caller's
// facts stay as they are for the other branches).
function learn(node, truth, facts) {
  switch (node.k) {
    case 'cmp': {
      if (node.op !== 'eq') return facts;
      const out = new Map(facts);
      const fact = facts.get(node.key);
      if (truth) out.set(node.key, { eq: node.value });
      else if (fact === undefined || fact.eq === undefined) out.set(node.key, { ne: new Set(fact ? fact.ne : []).add(node.value) });
      return out;
    }
    case 'and': return truth ? learn(node.b, true, learn(node.a, true, facts)) : facts;
    case 'or': return truth ? facts : learn(node.b, false, learn(node.a, false, facts));
    case 'not': return learn(node.a, !truth, facts);
    default: return facts;
  }
}

function hasLoads(node) {
  switch (node.k) {
    case 'true': case 'false': return false;
    case 'and': case 'or': return hasLoads(node.a) || hasLoads(node.b);
    case 'not': return hasLoads(node.a);
    default: return true; // a comparison's load, or a relation (a division by 0 rejects too)
  }
}

module.exports = { optimize };
