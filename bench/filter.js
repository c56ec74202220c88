#!/usr/bin/env node
'use strict';

// npm run bench:filter [-- --rounds N] [--reps N] [--expression EXPR]
// The capture filter alone, in ns per frame, over the same 4,096 frames of 64 bytes
// (60 captured, the NIC strips the FCS) held in pool-sized buffers:
//   - ixy.compileFilter(EXPR), the predicate V8 optimises;
//   - a hand-written JavaScript predicate that makes the same tests (the target: ixy's
//     within 1.5x of it);
//   - libpcap's BPF interpreter, pcap_compile + pcap_offline_filter in a small C program
//     built now against the system's libpcap (the target: ixy's faster).
// Three frames in eight match. Each prints the median of --rounds rounds (min..max); the
// JavaScript rounds alternate, so that both see the same load on a shared machine.
// Every implementation must keep the same frames, or the bench fails.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { compileFilter } = require('../lib/filter');
const { PcapWriter } = require('../lib/pcap');
const { buildFilterLibpcap } = require('./c-build');
const { eachOption } = require('./args');
const { spread } = require('./summary');

const EXPRESSION = 'udp and dst port 5000 and src net 10.0.0.0/8';
const USAGE = `usage: npm run bench:filter [-- options]
  --rounds N          rounds, of which the median is shown (default 9)
  --reps N            passes over the frames per round (default 500)
  --expression EXPR   another expression (the hand-written predicate is then left out)
  --diff N            instead: compare with tcpdump on N random expressions over 2,000
                      random frames (test/support/filter-diff.js); --seed S picks them`;
const FRAMES = 4096;
const LENGTH = 60;

// What the expression tests, written out by hand: IPv4, UDP, not a later fragment, the
// destination port past the IPv4 header (whose length is in the packet), the source net.
function handWritten(b, len) {
  if (len < 34 || b[12] !== 0x08 || b[13] !== 0x00 || b[23] !== 17) return false;
  if (((b[20] & 0x1f) | b[21]) !== 0) return false;
  const udp = 14 + ((b[14] & 15) << 2);
  if (len < udp + 4 || ((b[udp + 2] << 8) | b[udp + 3]) !== 5000) return false;
  return b[26] === 10;
}

// Eight kinds of frame in turn; three match (the last byte of the source varies).
function frames() {
  const arena = new Uint8Array(FRAMES * 2048);
  const out = [];
  for (let i = 0; i < FRAMES; i++) {
    const b = arena.subarray(i * 2048, (i + 1) * 2048);
    const kind = i % 8;
    const v6 = kind === 5;
    const arp = kind === 6;
    b.set([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
    b[12] = arp ? 0x08 : v6 ? 0x86 : 0x08;
    b[13] = arp ? 0x06 : v6 ? 0xdd : 0x00;
    if (v6) {
      b.set([0x60, 0, 0, 0, 0, 12, 17, 64], 14);
      b.set([0x13, 0x88, 0x13, 0x88], 54);
    } else if (!arp) {
      b.set([0x45, 0, 0, 46, 0, 1, 0, 0, 64, kind === 3 ? 6 : 17, 0, 0], 14);
      b.set([kind === 2 ? 192 : 10, kind === 2 ? 168 : 1, 2, i & 0xff, 10, 0, 0, 1], 26);
      const dport = kind === 1 ? 5001 : 5000;
      b.set([0x30, 0x39, dport >> 8, dport & 0xff, 0, 26, 0, 0], 34);
    }
    out.push(b);
  }
  return out;
}

// One measuring loop per predicate (a new function each), so that each call site sees
// one predicate only, as the capture loop does.
function makeLoop() {
  return new Function('frames', 'length', 'keep', 'reps', `
    let kept = 0;
    for (let r = 0; r < reps; r++) {
      for (let i = 0; i < frames.length; i++) if (keep(frames[i], length)) kept++;
    }
    return kept / reps;`);
}

function timeRound(loop, list, keep, reps) {
  const start = process.hrtime.bigint();
  const kept = loop(list, LENGTH, keep, reps);
  const ns = Number(process.hrtime.bigint() - start) / (reps * list.length);
  return { ns, kept };
}

function libpcap(list, expression, rounds, reps) {
  let binary;
  try {
    binary = buildFilterLibpcap();
  } catch {
    return { skipped: 'cannot build bench/filter-libpcap.c against libpcap: install libpcap-dev (apt-get install libpcap-dev) for this comparison' };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-filter-bench-'));
  try {
    const file = path.join(dir, 'frames.pcap');
    const writer = new PcapWriter(file);
    for (const b of list) writer.write(b, LENGTH, 0, 0);
    writer.close();
    const out = execFileSync(binary, [file, String(rounds), String(reps), expression], { encoding: 'utf8' });
    const runs = out.trim().split('\n').map((l) => l.split(' ').map(Number));
    return { ns: runs.map(([ns]) => ns), kept: runs[0][1] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function show(name, values) {
  const s = spread(values);
  return `${name.padEnd(28)} ${s.median.toFixed(2).padStart(7)} ns/frame  (${s.min.toFixed(2)}..${s.max.toFixed(2)})`;
}

function main() {
  let rounds = 9;
  let reps = 500;
  let expression = EXPRESSION;
  let diff = 0;
  let seed = 1;
  eachOption(process.argv.slice(2), USAGE, (option, next) => {
    if (option === '--diff') diff = Number(next());
    else if (option === '--seed') seed = Number(next());
    else if (option === '--rounds') rounds = Number(next());
    else if (option === '--reps') reps = Number(next());
    else if (option === '--expression') expression = next();
    else return false;
    return true;
  });
  for (const [name, v] of [['--rounds', rounds], ['--reps', reps]]) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a whole number of at least 1, got ${v}`);
  }
  if (diff > 0) return differentialRun(diff, seed);
  const list = frames();
  const keep = compileFilter(expression);
  const ours = [];
  const hand = [];
  const ourLoop = makeLoop();
  const handLoop = makeLoop();
  timeRound(ourLoop, list, keep, reps); // warm-up: both optimised before measuring
  timeRound(handLoop, list, handWritten, reps);
  let kept = null;
  for (let r = 0; r < rounds; r++) {
    const a = timeRound(ourLoop, list, keep, reps);
    ours.push(a.ns);
    if (expression === EXPRESSION) {
      const h = timeRound(handLoop, list, handWritten, reps);
      hand.push(h.ns);
      if (h.kept !== a.kept) throw new Error(`the hand-written predicate kept ${h.kept} frames, ixy's ${a.kept}`);
    }
    kept = a.kept;
  }
  const pcap = libpcap(list, expression, rounds, reps);
  if (!pcap.skipped && pcap.kept !== kept) throw new Error(`libpcap kept ${pcap.kept} frames, ixy ${kept}`);
  console.log(`filter '${expression}': ${list.length} frames of ${LENGTH} bytes, ${kept} kept; median of ${rounds} rounds of ${reps} passes`);
  console.log(show('ixy compileFilter', ours));
  if (hand.length) console.log(`${show('hand-written JavaScript', hand)}  ixy/hand ${(spread(ours).median / spread(hand).median).toFixed(2)}x`);
  if (pcap.skipped) console.log(`libpcap: skipped: ${pcap.skipped}`);
  else console.log(`${show('libpcap pcap_offline_filter', pcap.ns)}  libpcap/ixy ${(spread(pcap.ns).median / spread(ours).median).toFixed(2)}x`);
}

// The differential test at a size for the bench: N expressions, 2,000 frames.
function differentialRun(n, seed) {
  const { differential } = require('../test/support/filter-diff');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-filter-diff-'));
  try {
    const start = Date.now();
    const r = differential({ seed, expressions: n, frames: 2000, dir });
    const { mismatches } = r;
    delete r.mismatches;
    console.log(`filter differential, seed ${seed}: ${JSON.stringify(r)}; ${mismatches.length} mismatches; ${((Date.now() - start) / 1000).toFixed(1)} s`);
    for (const m of mismatches) console.log(`  ${m}`);
    if (mismatches.length > 0) process.exitCode = 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(1);
}
