'use strict';

// Builds the C yardstick (c-forward.c + c-forward-init.h) into build/c-forward when it is
// missing or older than its sources. gcc -O2, no -march=native: the figures should not
// depend on which CPU flags the build machine happened to have.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..', '..');
const SOURCES = ['c-forward.c', 'c-forward-init.h'].map((f) => path.join(__dirname, f));
const BINARY = path.join(ROOT, 'build', 'c-forward');

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

function buildCForward() {
  const newest = Math.max(...SOURCES.map(mtime));
  if (mtime(BINARY) >= newest) return BINARY;
  fs.mkdirSync(path.dirname(BINARY), { recursive: true });
  execFileSync('gcc', ['-O2', '-Wall', '-Wextra', '-o', BINARY, SOURCES[0]], { stdio: ['ignore', 'inherit', 'inherit'] });
  return BINARY;
}

module.exports = { buildCForward, C_FORWARD: BINARY };
