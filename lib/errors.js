'use strict';

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

module.exports = { IxyError, fromNative };
