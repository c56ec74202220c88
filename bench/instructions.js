'use strict';

// Instructions per packet of the drivers' own cost (the stand-in NIC, no model), counted
// by valgrind's callgrind: exact where time is not, so that a change can be judged on a
// busy host.
//   node bench/instructions.js [--mode forward|generate] [--batch 32] [--steps 30000]
//                              [--runs 3] [--lib DIR]   (another tree's lib/, for an A/B)
// JavaScript: bench/stand-in.js with "steps" (100,000 steps warm, then --steps), node
// --no-concurrent-recompilation so that what is compiled does not depend on timing, and
// traced, so that a count that took in a compilation is refused. The counted steps stand
// between two calls of os.loadavg(), and callgrind dumps its counts as each begins
// (--dump-before=uv_loadavg): the second dump holds the counted steps alone. Each process
// compiles the loop its own way (V8 inlines and allocates registers differently from one
// process to the next: a few instructions per packet, more in generate), so --runs
// processes are counted and the median is the figure, with each run's count beside it.
// C: c-forward --mode stand-in[-generate] for 0.5 and 1 s (its loop reads a clock only
// every 1024 steps), the difference of the two counts over the difference of the
// packets, which leaves start-up out. Under valgrind both run some 50 times slower: a
// minute or two each.
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { eachOption } = require('./args');
const { buildCForward } = require('./c-build');

const USAGE = 'usage: node bench/instructions.js [--mode forward|generate] [--batch N] [--steps N] [--runs N] [--lib DIR]';

// Runs argv under callgrind (with `callgrind` options added): the instruction count,
// the packets it reports, and what it printed.
function run(argv, callgrind = ['--callgrind-out-file=/dev/null']) {
  const res = spawnSync('valgrind', ['--tool=callgrind', ...callgrind, '--smc-check=all-non-file', ...argv],
    { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (res.error) throw res.error.code === 'ENOENT' ? new Error('valgrind is not installed (apt-get install valgrind)') : res.error;
  const total = /Collected : (\d+)/.exec(res.stderr);
  const lines = res.stdout.trim().split('\n');
  if (res.status !== 0 || total === null) throw new Error(`${argv.join(' ')} failed: ${res.stderr.trim().split('\n').pop()}`);
  const result = lines.findIndex((l) => l.startsWith('{"packets":'));
  if (result < 0) throw new Error(`${argv.join(' ')} printed no packet count`);
  return { instructions: Number(total[1]), packets: JSON.parse(lines[result]).packets, lines, result };
}

// One JavaScript process: the counted steps' instructions per packet.
function countJs(argv, dir) {
  const out = path.join(dir, 'callgrind.out');
  const { packets, lines, result } = run(argv, [`--callgrind-out-file=${out}`, '--dump-before=uv_loadavg']);
  // JavaScript runs with V8's compiler traced: a compilation or deoptimisation inside the
  // counted steps would be counted as theirs (a TurboFan compile is tens of millions).
  // (V8 also traces code it marks as the process exits: after the result.)
  const counting = lines.indexOf('{"counting":true}');
  if (counting >= 0 && lines.slice(counting, result).some((l) => /^\[(completed compiling|bailout)/.test(l))) {
    throw new Error('V8 compiled or deoptimised during the counted steps, which would count too: run again');
  }
  // The second marker's dump: from the first marker to it. None without node's symbols.
  if (!fs.existsSync(`${out}.2`)) throw new Error(`callgrind made no dump at uv_loadavg: is ${argv[0]} stripped of its symbols?`);
  const dump = fs.readFileSync(`${out}.2`, 'utf8');
  const summary = /^summary: (\d+)$/m.exec(dump);
  if (summary === null) throw new Error(`no summary in callgrind's dump ${out}.2`);
  for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f));
  return Number(summary[1]) / packets;
}

function perPacket(a, b) {
  return (b.instructions - a.instructions) / (b.packets - a.packets);
}

function median(values) {
  const v = [...values].sort((x, y) => x - y);
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

function main() {
  let mode = 'forward';
  let batch = 32;
  let steps = 30000;
  let runs = 3;
  let lib = null;
  eachOption(process.argv.slice(2), USAGE, (option, next) => {
    if (option === '--mode') mode = next();
    else if (option === '--batch') batch = Number(next());
    else if (option === '--steps') steps = Number(next());
    else if (option === '--runs') runs = Number(next());
    else if (option === '--lib') lib = path.resolve(next());
    else return false;
    return true;
  });
  if (mode !== 'forward' && mode !== 'generate') throw new Error('--mode must be forward or generate');
  if (!(Number.isInteger(runs) && runs >= 1)) throw new Error('--runs must be a whole number from 1');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-instructions-'));
  const js = [];
  try {
    // Another tree's lib/ runs under this tree's stand-in.js: a copy of it in the temporary
    // directory beside a link to that lib/ (whose requires then resolve in that tree).
    let standIn = path.join(__dirname, 'stand-in.js');
    if (lib !== null) {
      fs.mkdirSync(path.join(tmp, 'bench'));
      fs.copyFileSync(standIn, path.join(tmp, 'bench', 'stand-in.js'));
      fs.symlinkSync(lib, path.join(tmp, 'lib'));
      standIn = path.join(tmp, 'bench', 'stand-in.js');
    }
    const dumps = path.join(tmp, 'dumps');
    fs.mkdirSync(dumps);
    for (let r = 0; r < runs; r++) {
      js.push(countJs([process.execPath, '--no-concurrent-recompilation', '--trace-opt', '--trace-deopt', standIn,
        JSON.stringify({ mode, batch, ring: 512, warmSteps: 100000, steps })], dumps));
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const cForward = buildCForward();
  const c = (seconds) => run([cForward, '-', '--mode', mode === 'generate' ? 'stand-in-generate' : 'stand-in', '--batch', String(batch), '--warmup', '0', '--seconds', String(seconds)]);
  const cCount = perPacket(c(0.5), c(1));
  const jsCount = median(js);
  process.stdout.write(`${JSON.stringify({ mode, batch, lib: lib || 'lib', jsInstructionsPerPacket: jsCount, jsRuns: js.map((x) => Number(x.toFixed(2))), cInstructionsPerPacket: cCount, ratio: jsCount / cCount })}\n`);
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`instructions: ${err.message}\n`);
    process.exit(1);
  }
}
