'use strict';

const util = require('util');

// Every failure a user can cause is an IxyError: a one-line message that says what is wrong
// and what to do, and a `code` that programs can test. The CLI prints the message alone.
class IxyError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'IxyError';
    this.code = code;
  }
}

// Errors from the addon carry errno names (ENOENT, EACCES) or ixy codes (ENOHUGEPAGES):
// turn them into IxyErrors, keeping the code.
function fromNative(err, what) {
  if (err instanceof IxyError) return err;
  if (err && err.code === 'EACCES') {
    return new IxyError('ENOTROOT', `${what}: permission denied: run as root`);
  }
  const code = (err && err.code) || 'EIO';
  return new IxyError(code, err && err.message ? err.message : `${what} failed`);
}

// A value a caller passed, as a message shows it: strings quoted and called strings, so
// that '2' and 2 cannot be mistaken for each other.
function shown(value) {
  const text = util.inspect(value, { depth: 0, breakLength: Infinity });
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

module.exports = { IxyError, fromNative, shown, checkInteger };
