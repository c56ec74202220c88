'use strict';

// Builds the bench's C programs into build/ when they are missing or older than their
// sources: the C yardstick (c-forward.c + c-forward-init.h), the line-trip probe
// (line-trip.c), libpcap's filter interpreter (filter-libpcap.c) and the AF_XDP forwarder
// (c-xdp-forward.c). gcc -O2, no
// -march=native: the figures should not depend on which CPU flags the build machine
// happened to have.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

// name: the binary in build/; sources: files in this folder, the first one compiled;
// libs: linker flags, which go after the source.
function build(name, sources, flags = [], libs = []) {
  const files = sources.map((f) => path.join(__dirname, f));
  const binary = path.join(ROOT, 'build', name);
  if (mtime(binary) >= Math.max(...files.map(mtime))) return binary;
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  execFileSync('gcc', ['-O2', '-Wall', '-Wextra', ...flags, '-o', binary, files[0], ...libs], { stdio: ['ignore', 'inherit', 'inherit'] });
  return binary;
}

function buildCForward() {
  return build('c-forward', ['c-forward.c', 'c-forward-init.h']);
}

function buildLineTrip() {
  return build('line-trip', ['line-trip.c'], ['-pthread']);
}

// libpcap's BPF interpreter for bench/filter.js; needs libpcap's headers (libpcap-dev).
function buildFilterLibpcap() {
  return build('filter-libpcap', ['filter-libpcap.c'], [], ['-lpcap']);
}

// The AF_XDP yardstick for bench/xdp.js (raw syscalls, kernel headers only).
function buildCXdpForward() {
  return build('c-xdp-forward', ['c-xdp-forward.c']);
}

module.exports = { buildCForward, buildLineTrip, buildFilterLibpcap, buildCXdpForward };
