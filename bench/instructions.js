'use strict';

// Instructions per packet of the drivers' own cost (the stand-in NIC, no model), counted
// by valgrind's callgrind: exact where time is not, so that a change can be judged on a
// busy host. Each driver runs twice, the second time with more packets, and the
// difference of the two counts over the difference of the packets leaves start-up,
// warm-up and compilation out.
//   node bench/instructions.js [--mode forward|generate] [--batch 32] [--steps 30000]
//                              [--lib DIR]   (another tree's lib/, for an A/B)
// JavaScript: bench/stand-in.js with "steps" (100,000 steps warm, then 0 or --steps),
// node --no-concurrent-recompilation so that what is compiled does not depend on timing,
// and traced, so that a count that took in a compilation is refused.
// C: c-forward --mode stand-in[-generate] for 0.5 and 1 s (its loop reads a clock only
// every 1024 steps). Under valgrind both run some 50 times slower: a minute or two each.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { eachOption } = require('./args');
const { buildCForward } = require('./c-build');

const USAGE = 'usage: node bench/instructions.js [--mode forward|generate] [--batch N] [--steps N] [--lib DIR]';

// Runs argv under callgrind: its instruction count and the packets it reports.
function run(argv) {
  const res = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', '--smc-check=all-non-file', ...argv],
    { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (res.error) throw res.error.code === 'ENOENT' ? new Error('valgrind is not installed (apt-get install valgrind)') : res.error;
  const total = /Collected : (\d+)/.exec(res.stderr);
  const lines = res.stdout.trim().split('\n');
  if (res.status !== 0 || total === null) throw new Error(`${argv.join(' ')} failed: ${res.stderr.trim().split('\n').pop()}`);
  // JavaScript runs with V8's compiler traced: a compilation or deoptimisation inside the
  // counted steps would be counted as theirs (a TurboFan compile is tens of millions).
  // (V8 also traces code it marks as the process exits: after the result.)
  const result = lines.findIndex((l) => l.startsWith('{"packets":'));
  if (result < 0) throw new Error(`${argv.join(' ')} printed no packet count`);
  const counting = lines.indexOf('{"counting":true}');
  if (counting >= 0 && lines.slice(counting, result).some((l) => /^\[(completed compiling|bailout)/.test(l))) {
    throw new Error('V8 compiled or deoptimised during the counted steps, which would count too: run again');
  }
  return { instructions: Number(total[1]), packets: JSON.parse(lines[result]).packets };
}

function perPacket(a, b) {
  return (b.instructions - a.instructions) / (b.packets - a.packets);
}

function main() {
  let mode = 'forward';
  let batch = 32;
  let steps = 30000;
  let lib = null;
  eachOption(process.argv.slice(2), USAGE, (option, next) => {
    if (option === '--mode') mode = next();
    else if (option === '--batch') batch = Number(next());
    else if (option === '--steps') steps = Number(next());
    else if (option === '--lib') lib = path.resolve(next());
    else return false;
    return true;
  });
  if (mode !== 'forward' && mode !== 'generate') throw new Error('--mode must be forward or generate');
  // Another tree's lib/ runs under this tree's stand-in.js: a copy of it in a temporary
  // directory beside a link to that lib/ (whose requires then resolve in that tree).
  let standIn = path.join(__dirname, 'stand-in.js');
  let tmp = null;
  if (lib !== null) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-instructions-'));
    fs.mkdirSync(path.join(tmp, 'bench'));
    fs.copyFileSync(standIn, path.join(tmp, 'bench', 'stand-in.js'));
    fs.symlinkSync(lib, path.join(tmp, 'lib'));
    standIn = path.join(tmp, 'bench', 'stand-in.js');
  }
  const js = (n) => run([process.execPath, '--no-concurrent-recompilation', '--trace-opt', '--trace-deopt', standIn,
    JSON.stringify({ mode, batch, ring: 512, warmSteps: 100000, steps: n })]);
  const cForward = buildCForward();
  const c = (seconds) => run([cForward, '-', '--mode', mode === 'generate' ? 'stand-in-generate' : 'stand-in', '--batch', String(batch), '--warmup', '0', '--seconds', String(seconds)]);
  let jsCount;
  try {
    jsCount = perPacket(js(0), js(steps));
  } finally {
    if (tmp !== null) fs.rmSync(tmp, { recursive: true, force: true });
  }
  const cCount = perPacket(c(0.5), c(1));
  process.stdout.write(`${JSON.stringify({ mode, batch, lib: lib || 'lib', jsInstructionsPerPacket: jsCount, cInstructionsPerPacket: cCount, ratio: jsCount / cCount })}\n`);
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`instructions: ${err.message}\n`);
    process.exit(1);
  }
}
