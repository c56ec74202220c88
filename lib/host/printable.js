'use strict';

// Text from outside the program (a process's command line, a file's contents, a name in a
// directory someone else made) as it may reach a terminal: every character that could steer
// the terminal or hide what follows becomes a visible escape. C0 controls (ESC opens the
// terminal's escape sequences, CR and BS overwrite what was written), DEL, the C1 controls
// (0x9b is a one-byte CSI), Unicode's line separators and its bidirectional overrides and
// isolates: \xNN or \uNNNN.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeChar(c) {
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
}

function printable(text) {
  return String(text).replace(UNPRINTABLE, escapeChar);
}

module.exports = { printable };
