'use strict';

// What libpcap's optimiser does for the common filters, on the tree of ir.js: a test that
// what was tested before already decides is dropped. In `udp and dst port 53`, once the
// EtherType is known to be IPv4, the IPv6 half of `port` and the repeated EtherType and
// protocol tests vanish, leaving what a hand-written test would do.
//
// Facts: entering an item of an `and`, the items before it are known true; of an `or`,
// known false. A fact is a field (a leaf's key) known equal to a value, or known different
// from some values, or a whole subtree (by its shape, see shape()) known true or false:
// `tcp and tcp and ...` keeps one `tcp`. Facts live in one map with an undo log, so that
// leaving a branch costs what entering it added: the pass is linear in the tree.
//
// To carry facts out of an `or` (`(ip and ...) or (ip6 and ...)` followed by more tests),
// `(a1 or a2) and c` becomes `(a1 and c) or (a2 and c)`, each copy of c simplified under
// its own facts (or `(a1 and c) or (not a1 and a2 and c)`, see distribute). This is exact,
// loads beyond the frame included. The copying stops at COPY_BUDGET leaves, so no
// expression grows by more than that.
//
// A test the facts decide loads nothing new: a fact comes from a load of the same field
// that ran before. Other loads are dropped only where the frame is rejected either way.
const { TRUE, FALSE, and, or, not, size } = require('./ir');

const COPY_BUDGET = 400;

function optimize(root) {
  const st = { budget: COPY_BUDGET, facts: new Map(), log: [], shapes: new Map(), ids: new WeakMap() };
  return simplify(root, st, true);
}

// final: if this node fails, the whole filter fails (the root; inside a final node, every
// item of an `and` and the last item of an `or`). There, failing and loading beyond the
// frame mean the same, the frame is rejected; elsewhere they differ (`not`, `or`'s items).
function simplify(node, st, final) {
  if (node.k === 'and' || node.k === 'or' || node.k === 'not') { // leaves: known() below
    const decided = st.facts.get(shape(node, st));
    if (decided !== undefined) return decided ? TRUE : FALSE;
  }
  switch (node.k) {
    case 'and': return simplifyAnd(node.items, st, final);
    case 'or': return simplifyOr(node.items, st, final);
    case 'not': {
      const a = simplify(node.a, st, false);
      if (a.k === 'true') return FALSE;
      if (a.k === 'false') return TRUE;
      return not(a);
    }
    case 'cmp': return known(node, st.facts);
    default: return node;
  }
}

function simplifyOr(items, st, final) {
  const mark = st.log.length;
  const out = [];
  for (let i = 0; i < items.length; i++) {
    const a = simplify(items[i], st, final && i === items.length - 1);
    if (a.k === 'false') continue;
    out.push(a);
    if (a.k === 'true') break; // what follows is never evaluated
    learn(a, false, st);
    remember(items[i], false, st);
  }
  undo(st, mark);
  return out.length === 0 ? FALSE : or(...out);
}

function simplifyAnd(items, st, final) {
  const mark = st.log.length;
  const out = [];
  for (let i = 0; i < items.length; i++) {
    const a = simplify(items[i], st, final);
    if (a.k === 'true') continue;
    if (a.k === 'false') {
      // the items before must stay where a load beyond the frame (a rejected frame)
      // differs from failing: `not (x and false)` accepts the frame otherwise.
      undo(st, mark);
      return final || !out.some(hasLoads) ? FALSE : and(...out, FALSE);
    }
    if (a.k === 'or' && i + 1 < items.length) {
      const rest = items.slice(i + 1);
      const restSize = rest.reduce((n, r) => n + size(r), 0);
      const copies = a.items.length * restSize + (final ? 0 : a.items.length * size(a));
      if (st.budget >= copies && informs(a, rest)) {
        st.budget -= copies;
        out.push(distribute(a.items, rest, st, final));
        undo(st, mark);
        return and(...out);
      }
    }
    out.push(a);
    learn(a, true, st);
    remember(items[i], true, st);
  }
  undo(st, mark);
  return out.length === 0 ? TRUE : and(...out);
}

// (a1 or a2 or ...) and rest, as (a1 and rest) or (a2 and rest) or ... Where this `and`
// is not final, a branch first tests the alternatives before it again (their loads have
// run, so nothing new is loaded): where a1 held and rest failed, the original never
// reaches a2's loads, and one beyond the frame must not reject what `not (...)` accepts.
function distribute(alternatives, rest, st, final) {
  const branches = [];
  for (let j = 0; j < alternatives.length; j++) {
    const last = j === alternatives.length - 1;
    const guard = final ? [] : alternatives.slice(0, j).map((a) => not(a));
    const b = simplifyAnd([...guard, alternatives[j], ...rest], st, final && last);
    if (b.k === 'false') continue;
    branches.push(b);
    if (b.k === 'true') break;
  }
  return branches.length === 0 ? FALSE : or(...branches);
}

// Whether what the alternatives of `a` test is tested again in rest: only then can a copy
// of rest per alternative be simpler (`vlan 100 and ip`: the tag types are not tested
// again, so the tag and EtherType tests are not copied three times).
function informs(a, rest) {
  const tested = new Set();
  keys(a, tested);
  const again = new Set();
  for (const r of rest) keys(r, again);
  for (const k of again) if (tested.has(k)) return true;
  return false;
}

function keys(node, into) {
  if (node.k === 'cmp') into.add(node.key);
  else if (node.k === 'not') keys(node.a, into);
  else if (node.k === 'and' || node.k === 'or') for (const item of node.items) keys(item, into);
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

function set(st, key, value) {
  st.log.push(key, st.facts.get(key));
  st.facts.set(key, value);
}

// Forgets the facts learned since the log was `mark` long.
function undo(st, mark) {
  while (st.log.length > mark) {
    const before = st.log.pop();
    const key = st.log.pop();
    if (before === undefined) st.facts.delete(key);
    else st.facts.set(key, before);
  }
}

// The facts that hold once `node` has evaluated to `truth`.
function learn(node, truth, st) {
  switch (node.k) {
    case 'cmp': {
      if (node.op !== 'eq') return;
      const fact = st.facts.get(node.key);
      if (truth) set(st, node.key, { eq: node.value });
      else if (fact === undefined || fact.eq === undefined) set(st, node.key, { ne: new Set(fact ? fact.ne : []).add(node.value) });
      return;
    }
    case 'and': if (truth) for (const item of node.items) learn(item, true, st); break;
    case 'or': if (!truth) for (const item of node.items) learn(item, false, st); break;
    case 'not': learn(node.a, !truth, st); break;
    default: return;
  }
  remember(node, truth, st);
}

// A subtree of and/or/not known true or false by its shape.
function remember(node, truth, st) {
  if (node.k === 'and' || node.k === 'or' || node.k === 'not') set(st, shape(node, st), truth);
}

// A number per distinct subtree (equal shapes, equal numbers), as a fact key: 'S' + number.
function shape(node, st) {
  let id = st.ids.get(node);
  if (id !== undefined) return id;
  let text;
  switch (node.k) {
    case 'and': case 'or': text = `${node.k}(${node.items.map((item) => shape(item, st)).join(',')})`; break;
    case 'not': text = `not(${shape(node.a, st)})`; break;
    case 'cmp': text = `${node.key}${node.op}${node.value}`; break;
    case 'true': case 'false': text = node.k; break;
    default: text = `rel#${st.shapes.size}`; // relations: never the same
  }
  id = st.shapes.get(text);
  if (id === undefined) {
    id = `S${st.shapes.size}`;
    st.shapes.set(text, id);
  }
  st.ids.set(node, id);
  return id;
}

const loads = new WeakMap();
function hasLoads(node) {
  switch (node.k) {
    case 'true': case 'false': return false;
    case 'not': return hasLoads(node.a);
    case 'and': case 'or': {
      let v = loads.get(node);
      if (v === undefined) loads.set(node, v = node.items.some(hasLoads));
      return v;
    }
    default: return true; // a comparison's load, or a relation (a division by 0 rejects too)
  }
}

module.exports = { optimize };
