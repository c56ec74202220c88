'use strict';

// Option objects are checked by name: a misspelt option (rxRingsize, batchsize) would
// otherwise be ignored and its default used without a word. checkOptionNames() throws
// EINVAL naming the unknown option and the valid one nearest to it.
const { IxyError, shown } = require('./errors');

// Throws EINVAL unless `options` is undefined or a plain object whose own keys are all in
// `known`. `what` names the call, e.g. "open()". Returns the options to destructure ({} for
// undefined).
function checkOptionNames(what, options, known) {
  if (!checkOptionsObject(what, options)) return {};
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = nearest(key, known);
    throw new IxyError('EINVAL', `${what} has no option '${key}'${near ? `: did you mean '${near}'?` : ''} (options: ${known.join(', ')})`);
  }
  return options;
}

// Throws EINVAL unless `options` is undefined or an object; true for an object.
function checkOptionsObject(what, options) {
  if (options === undefined) return false;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new IxyError('EINVAL', `${what}'s options must be an object, got ${shown(options)}`);
  }
  return true;
}

// The name in `names` fewest edits away from `key` (case ignored), if it is near enough to
// be a slip: at most a third of the longer name's letters.
function nearest(key, names) {
  let best = null;
  let bestDistance = Infinity;
  for (const name of names) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(2, Math.ceil(Math.max(key.length, best.length) / 3)) ? best : null;
}

// Levenshtein distance: insertions, deletions and substitutions, one row at a time.
function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

module.exports = { checkOptionNames, checkOptionsObject };
