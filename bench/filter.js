#!/usr/bin/env node
'use strict';

// npm run bench:filter [-- --rounds N] [--reps N] [--expression EXPR] [--diff N [--seed S]]
// Capture filters alone, in ns per frame, over the same 4,096 frames of 64 bytes (60
// captured, the NIC strips the FCS) held in pool-sized buffers, for each expression of
// EXPRESSIONS (or --expression):
//   - ixy.compileFilter(EXPR), the predicate V8 optimises;
//   - a hand-written JavaScript predicate that makes the same tests (the target: ixy's
//     within 1.2x of it);
//   - libpcap's BPF interpreter, pcap_compile + pcap_offline_filter in a small C program
//     built now against the system's libpcap (the target: ixy's faster).
// Each prints the median of --rounds rounds (min..max); the JavaScript rounds alternate,
// so that both see the same load on a shared machine, and ixy/hand is the median of the
// rounds' ratios. Every implementation must keep the
// same frames, or the bench fails.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { compileFilter } = require('../lib/filter');
const { PcapWriter } = require('../lib/pcap-file');
const { buildFilterLibpcap } = require('./c-build');
const { eachOption } = require('./args');
const { spread } = require('./summary');

const USAGE = `usage: npm run bench:filter [-- options]
  --rounds N          rounds, of which the median is shown (default 9)
  --reps N            passes over the frames per round (default 500)
  --expression EXPR   only this expression (the hand-written predicate is left out
                      unless it is one of the bench's own)
  --diff N            instead: compare with tcpdump on N random expressions over 2,000
                      random frames (test/support/filter-diff.js); --seed S picks them`;
const { EXPRESSIONS, frames, LENGTH } = require('./filter-hand');

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
  let only = null;
  let diff = 0;
  let seed = 1;
  eachOption(process.argv.slice(2), USAGE, (option, next) => {
    if (option === '--diff') diff = Number(next());
    else if (option === '--seed') seed = Number(next());
    else if (option === '--rounds') rounds = Number(next());
    else if (option === '--reps') reps = Number(next());
    else if (option === '--expression') only = next();
    else return false;
    return true;
  });
  for (const [name, v] of [['--rounds', rounds], ['--reps', reps], ['--diff', diff + 1], ['--seed', seed]]) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a whole number of at least 1, got ${v}`);
  }
  if (diff > 0) return differentialRun(diff, seed);
  const list = frames();
  const table = only === null ? EXPRESSIONS : [EXPRESSIONS.find(([e]) => e === only) || [only, null]];
  const ratios = [];
  for (const [expression, hand] of table) {
    const ratio = benchOne(list, expression, hand, rounds, reps);
    if (ratio !== null) ratios.push(`${ratio.toFixed(2)}x`);
  }
  if (ratios.length > 1) console.log(`ixy/hand, each expression: ${ratios.join(' ')}`);
}

// Times one expression; returns ixy's median over the hand-written one's (null: none).
function benchOne(list, expression, handWritten, rounds, reps) {
  const keep = compileFilter(expression);
  const ours = [];
  const hand = [];
  const ourLoop = makeLoop();
  const handLoop = makeLoop();
  timeRound(ourLoop, list, keep, reps); // warm-up: both optimised before measuring
  if (handWritten) timeRound(handLoop, list, handWritten, reps);
  let kept = null;
  for (let r = 0; r < rounds; r++) {
    const a = timeRound(ourLoop, list, keep, reps);
    ours.push(a.ns);
    if (handWritten) {
      const h = timeRound(handLoop, list, handWritten, reps);
      hand.push(h.ns);
      if (h.kept !== a.kept) throw new Error(`'${expression}': the hand-written predicate kept ${h.kept} frames, ixy's ${a.kept}`);
    }
    kept = a.kept;
  }
  const pcap = libpcap(list, expression, rounds, reps);
  if (!pcap.skipped && pcap.kept !== kept) throw new Error(`'${expression}': libpcap kept ${pcap.kept} frames, ixy ${kept}`);
  console.log(`filter '${expression}': ${list.length} frames of ${LENGTH} bytes, ${kept} kept; median of ${rounds} rounds of ${reps} passes`);
  console.log(show('ixy compileFilter', ours));
  // The ratio of each round's pair (run back to back, under the same load), the median.
  const ratio = hand.length ? spread(ours.map((ns, r) => ns / hand[r])).median : null;
  if (hand.length) console.log(`${show('hand-written JavaScript', hand)}  ixy/hand ${ratio.toFixed(2)}x`);
  if (pcap.skipped) console.log(`libpcap: skipped: ${pcap.skipped}`);
  else console.log(`${show('libpcap pcap_offline_filter', pcap.ns)}  libpcap/ixy ${(spread(pcap.ns).median / spread(ours).median).toFixed(2)}x`);
  return ratio;
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
