'use strict';

const util = require('util');
const { printable } = require('./printable');

// Every failure a user can cause is an IxyError: a one-line message that says what is wrong
// and what to do, and a `code` that programs can test. The CLI prints the message alone.
// Messages quote foreign text (link targets, file contents, command lines): printable()
// makes sure none of it can steer the terminal the message is printed on.
class IxyError extends Error {
  constructor(code, message) {
    super(printable(message));
    this.name = 'IxyError';
    this.code = code;
  }
}

// The one errno-to-IxyError mapping, for the addon's errors and Node's fs errors alike.
// Not permitted (EACCES, EPERM) becomes ENOTROOT with the remedy; any other error keeps its
// code (ENOENT, ENOSPC, or an ixy code the addon chose, such as ENOHUGEPAGES) and message.
// `what` says what was being done, e.g. "cannot map /sys/.../resource0".
function fromNative(err, what) {
  if (err instanceof IxyError) return err;
  const code = err && err.code;
  if (code === 'EACCES' || code === 'EPERM') {
    return new IxyError('ENOTROOT', `${what}: permission denied: run as root`);
  }
  return new IxyError(code || 'EIO', err && err.message ? err.message : `${what} failed`);
}

// The longest text a message quotes from its caller: a longer one (a 100,000-character
// "address") is cut, and the message says how long it was.
const QUOTE_MAX = 80;

// `text` in quotes, cut to QUOTE_MAX characters.
function quoted(text) {
  return text.length <= QUOTE_MAX ? `'${text}'` : `'${text.slice(0, QUOTE_MAX)}...' (${text.length} characters)`;
}

// A value a caller passed, as a message shows it: strings quoted and called strings, so
// that '2' and 2 cannot be mistaken for each other.
function shown(value) {
  const text = util.inspect(value, { depth: 0, breakLength: Infinity, maxStringLength: QUOTE_MAX, maxArrayLength: 20 });
  if (typeof value === 'number' || value === null || value === undefined) return text;
  return `${text} (${typeof value === 'object' ? 'an object' : `a ${typeof value}`})`;
}

// Throws EINVAL unless value is an integer in [min, max]; the message says which of the
// two it is not, and shows what was given. `why` may explain the range.
function checkInteger(name, value, min, max, why = '') {
  if (!Number.isInteger(value)) {
    throw new IxyError('EINVAL', `${name} must be an integer, got ${shown(value)}`);
  }
  if (value < min || value > max) {
    throw new IxyError('EINVAL', `${name} must be ${min}..${max}${why}, got ${value}`);
  }
}

module.exports = { IxyError, fromNative, shown, quoted, checkInteger };
