'use strict';

// The reference side of the differential filter test: the classic BPF program libpcap
// compiles for an expression (`tcpdump -ddd`: one "code jt jf k" line per instruction)
// run over a frame the way libpcap's own interpreter (bpf_filter.c) runs it. A load
// beyond the captured bytes, or a division by 0, returns 0 (reject); `len` is the wire
// length; a shift by 32 or more gives 0.
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

// Compiles expression with tcpdump. options: ['-O'] for libpcap's unoptimised program.
// Returns { program } or { error } (tcpdump's message) when tcpdump refuses it.
function compileBpf(expression, linkFile, options = []) {
  const r = spawnSync('tcpdump', [...options, '-ddd', '-r', linkFile, '--', expression], { encoding: 'utf8' });
  if (r.status !== 0) return { error: r.stderr.split('\n').filter((l) => !/^reading from/.test(l)).join(' ').trim() };
  const lines = r.stdout.trim().split('\n');
  const program = lines.slice(1).map((l) => l.split(' ').map(Number));
  return { program };
}

// A pcap file with no frame, link type Ethernet: what tcpdump -r needs to compile for it.
function emptyEthernetPcap(dir) {
  const file = path.join(dir, 'ethernet-empty.pcap');
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(262144, 16);
  header.writeUInt32LE(1, 20);
  fs.writeFileSync(file, header);
  return file;
}

function load(b, caplen, at, size) {
  if (at + size > caplen) return -1;
  if (size === 1) return b[at];
  if (size === 2) return (b[at] << 8) | b[at + 1];
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}

const SIZES = { 0x00: 4, 0x08: 2, 0x10: 1 };

// True when the program accepts the frame (returns non-zero).
function runBpf(program, b, caplen, wirelen = caplen) {
  let A = 0;
  let X = 0;
  const M = new Array(16).fill(0);
  for (let pc = 0; pc < program.length; pc++) {
    const [code, jt, jf, k] = program[pc];
    const cls = code & 0x07;
    if (cls === 0x00 || cls === 0x01) { // LD, LDX
      const mode = code & 0xe0;
      let v;
      if (mode === 0x00) v = k;
      else if (mode === 0x20) v = load(b, caplen, k, SIZES[code & 0x18]);
      else if (mode === 0x40) v = load(b, caplen, X + k, SIZES[code & 0x18]);
      else if (mode === 0x60) v = M[k];
      else if (mode === 0x80) v = wirelen;
      else if (mode === 0xa0) v = k >= caplen ? -1 : (b[k] & 0xf) << 2; // MSH
      else throw new Error(`bpf: load mode ${mode}`);
      if (v < 0) return false;
      if (cls === 0x00) A = v;
      else X = v;
    } else if (cls === 0x02) {
      M[k] = A;
    } else if (cls === 0x03) {
      M[k] = X;
    } else if (cls === 0x04) {
      const operand = (code & 0x08) ? X : k;
      const r = alu(code & 0xf0, A, operand);
      if (r < 0) return false;
      A = r;
    } else if (cls === 0x05) {
      const op = code & 0xf0;
      if (op === 0x00) {
        pc += k;
        continue;
      }
      const operand = (code & 0x08) ? X : k;
      let taken;
      if (op === 0x10) taken = A === operand;
      else if (op === 0x20) taken = A > operand;
      else if (op === 0x30) taken = A >= operand;
      else taken = (A & operand) !== 0;
      pc += taken ? jt : jf;
    } else if (cls === 0x06) {
      const rval = code & 0x18;
      return (rval === 0x10 ? A : rval === 0x08 ? X : k) !== 0;
    } else if ((code & 0xf8) === 0x80) {
      A = X; // TXA
    } else {
      X = A; // TAX
    }
  }
  throw new Error('bpf: fell off the end of the program');
}

// 32-bit unsigned arithmetic; -1 for a division by 0 (the frame is rejected).
function alu(op, a, b) {
  switch (op) {
    case 0x00: return (a + b) >>> 0;
    case 0x10: return (a - b) >>> 0;
    case 0x20: return Math.imul(a, b) >>> 0;
    case 0x30: return b === 0 ? -1 : Math.floor(a / b);
    case 0x40: return (a | b) >>> 0;
    case 0x50: return (a & b) >>> 0;
    case 0x60: return b < 32 ? (a << b) >>> 0 : 0;
    case 0x70: return b < 32 ? a >>> b : 0;
    case 0x80: return (-a) >>> 0;
    case 0x90: return b === 0 ? -1 : a % b;
    case 0xa0: return (a ^ b) >>> 0;
    default: throw new Error(`bpf: alu op ${op}`);
  }
}

module.exports = { compileBpf, emptyEthernetPcap, runBpf };
