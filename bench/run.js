#!/usr/bin/env node
'use strict';

// npm run bench [-- --quick] [--seconds S] [--warmup S] [--runs N] [--batches 1,2,..]
//                [--ring N] [--rounds N] [--window MS] [--no-c] [--results DIR]
//                [--latest | --no-latest] [--node PATH]
// npm run bench -- --loss [options]: loss at fixed rates instead (loss.js, --loss --help).
// npm run bench -- --latency [options]: forwarding latency at fixed rates (latency.js).
// npm run bench -- --latency-meter [options]: ixy latency against the model's truth (latency-meter.js).
// npm run bench -- --pacing [options]: how evenly generate spaces frames at a rate (pacing.js).
// npm run bench -- --workers 1,2 [options]: forwarding with worker threads (workers.js).
// npm run bench -- --xdp [options]: AF_XDP on veth pairs, JS against C and tcpdump (xdp.js).
// Bidirectional forwarding on the model (64-byte frames, sources unlimited, sinks without
// check), for each batch size: runs of the JS driver and of the C yardstick, one driver
// process per run, alternating (the JS/C ratio of each run pair); then both side by side
// on one model in alternating windows (side-by-side.js: the JS/C ratio with both on the
// same host); then the TX-only rate of `generate` (runs, and side by side), the drivers'
// own cost without the model (stand-in.js), and the model's ceiling (the C yardstick
// without touching packets). Writes bench/results/<time>.json and, for full runs,
// bench/results/latest.json and the plot bench/latest.svg. See PERFORMANCE.md.
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { runOne, runStandIn } = require('./run-one');
const { sideBySide } = require('./side-by-side');
const { buildCForward, buildLineTrip } = require('./c-build');
const { plotSvg } = require('./plot');
const { eachOption } = require('./args');
const { spread, summarize, machine, writeResults, tripsBetween, byPhase } = require('./summary');

const ALL_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const USAGE = `usage: npm run bench [-- options]
  --loss              loss at fixed rates instead of the rates at full load (loss.js;
                      npm run bench -- --loss --help lists its options)
  --latency           forwarding latency at fixed rates, JS and C, from the model's
                      latency truth (latency.js; --latency --help lists its options)
  --latency-meter     ixy latency through a forwarder against the model's truth of the
                      same run (latency-meter.js; --latency-meter --help)
  --pacing            how evenly \`ixy generate --rate\` spaces its frames on the model's
                      wire, and its CPU (pacing.js; --pacing --help lists its options)
  --xdp               AF_XDP on veth pairs: ixy forward against a C AF_XDP forwarder,
                      ixy pcap against tcpdump (xdp.js; --xdp --help lists its options)
  --workers 1,2       \`ixy forward --workers N\` for each N: totals and ns/packet per
                      worker (workers.js; --workers 1 --help lists its options)
  --generate          only generate (TX only, batch 32): runs and side by side; does not
                      replace latest.json / latest.svg
  --quick             a short run: batches 1,32,256, 1 run of 0.5+1 s, 2 window rounds;
                      does not replace latest.json / latest.svg
  --batches 1,2,..    batch sizes (default ${ALL_BATCHES.join(',')})
  --seconds S         measured seconds per run (default 3)
  --warmup S          seconds before measuring (default 1)
  --runs N            run pairs (JS, C) per batch size (default 3)
  --rounds N          side-by-side window pairs per batch size (default 12)
  --window MS         side-by-side window (default 300)
  --ring N            descriptors per ring, a power of two 64..4096 (default 512)
  --no-c              JavaScript only, without the C yardstick
  --results DIR       where the results JSON goes (default bench/results)
  --latest, --no-latest  write results/latest.json and the plot latest.svg (default: unless --quick)
  --node PATH         the Node.js binary that runs the JavaScript driver (default: this one)`;

function parseArgs(argv) {
  const o = {
    quick: false, seconds: 3, warmup: 1, runs: 3, batches: ALL_BATCHES, ring: 512, rounds: 12, window: 300, c: true,
    results: path.join(__dirname, 'results'), latest: null, node: process.execPath,
  };
  eachOption(argv, USAGE, (a, next) => {
    if (a === '--quick') o.quick = true;
    else if (a === '--generate') o.generateOnly = true;
    else if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--warmup') o.warmup = Number(next());
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--batches') o.batches = next().split(',').map(Number);
    else if (a === '--ring') o.ring = Number(next());
    else if (a === '--rounds') o.rounds = Number(next());
    else if (a === '--window') o.window = Number(next());
    else if (a === '--no-c') o.c = false;
    else if (a === '--results') o.results = next();
    else if (a === '--latest') o.latest = true;
    else if (a === '--no-latest') o.latest = false;
    else if (a === '--node') o.node = next();
    else return false;
    return true;
  });
  if (o.quick) {
    if (!argv.includes('--seconds')) o.seconds = 1;
    if (!argv.includes('--warmup')) o.warmup = 0.5;
    if (!argv.includes('--runs')) o.runs = 1;
    if (!argv.includes('--batches')) o.batches = [1, 32, 256];
    if (!argv.includes('--rounds')) o.rounds = 2;
    if (!argv.includes('--window')) o.window = 150;
  }
  if (o.generateOnly) o.batches = [];
  if (o.latest === null) o.latest = !o.quick && !o.generateOnly; // a partial run must not replace the published figures
  for (const b of o.batches) if (!Number.isInteger(b) || b < 1 || b > 4096) throw new Error(`bad batch size ${b}`);
  if (!Number.isInteger(o.ring) || o.ring < 64 || o.ring > 4096 || (o.ring & (o.ring - 1)) !== 0) throw new Error(`--ring must be a power of two from 64 to 4096, got ${o.ring}`);
  if (!(o.seconds > 0) || !(o.warmup >= 0) || !(o.runs >= 1)) throw new Error('--seconds, --warmup and --runs must be positive');
  if (!Number.isInteger(o.rounds) || o.rounds < 1 || !Number.isInteger(o.window) || o.window < 50) {
    throw new Error('--rounds must be a positive integer and --window at least 50 (ms)');
  }
  return o;
}

// The version of the Node.js binary that --node names (the results record it).
function nodeVersion(binary) {
  let out = '';
  try {
    out = execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch (err) {
    throw new Error(`--node ${binary}: cannot run it (${err.code || err.message.split('\n')[0]})`);
  }
  if (!/^v\d+\.\d+\.\d+/.test(out)) throw new Error(`--node ${binary}: not a Node.js binary (--version said '${out.split('\n')[0]}')`);
  return out;
}

function fmt(n, digits = 2) {
  return n === null || n === undefined ? '-' : n.toFixed(digits);
}

function printSummary(label, s) {
  process.stdout.write(`  ${label.padEnd(28)} ${fmt(s.mpps.median).padStart(7)} Mpps  [${fmt(s.mpps.min)}..${fmt(s.mpps.max)}]` +
    `  ${fmt(s.nsPerPacket.median, 1).padStart(6)} ns/pkt${s.heapBytesPerPacket !== undefined ? `  heap ${fmt(s.heapBytesPerPacket, 3)} B/pkt  GCs ${s.gcs}` : ''}` +
    `${s.rxPerCall && s.rxPerCall.median > 0 ? `  mean RX batch ${fmt(s.rxPerCall.median, 1)}` : ''}\n`);
}

// One run of `spec` with the command line's timing and ring size.
function runWith(o, spec) {
  return runOne({ warmup: o.warmup, seconds: o.seconds, ring: o.ring, node: o.node, ...spec });
}

async function measure(o, spec, label) {
  const runs = [];
  for (let r = 0; r < o.runs; r++) runs.push(await runWith(o, spec));
  const s = summarize(runs);
  printSummary(label, s);
  return s;
}

// C and JavaScript alternate, run by run (C, JS, C, JS, ...): this host's speed drifts
// by tens of percent over minutes, and alternating puts both languages through the same
// drift. The ratio is the median of the ratios of each run pair.
// The host's phase (the line trip, see summary.js) is probed between the pairs.
async function measurePair(o, spec, probe) {
  const c = [];
  const js = [];
  const pairs = [];
  const trips = tripsBetween(probe);
  for (let r = 0; r < o.runs; r++) {
    c.push(await runWith(o, { ...spec, lang: 'c' }));
    js.push(await runWith(o, { ...spec, lang: 'js' }));
    pairs.push({ trips: trips(), ratio: js[r].mpps / c[r].mpps });
  }
  const row = { c: summarize(c), js: summarize(js) };
  row.ratios = spread(pairs.map((p) => p.ratio));
  row.ratio = row.ratios.median;
  row.pairs = pairs;
  row.phases = byPhase(pairs, (p) => p.ratio);
  printSummary('C', row.c);
  printSummary('JavaScript', row.js);
  process.stdout.write(`  ${'JavaScript / C, run pairs'.padEnd(28)} ${fmt(row.ratio).padStart(7)}       [${fmt(row.ratios.min)}..${fmt(row.ratios.max)}]  (median of run pairs)\n`);
  printPhases(row.phases, 'run pairs');
  return row;
}

// The drivers' own cost, without the model (stand-in.js): C and JavaScript runs
// alternate, and the ratio is the median of the run pairs' ratios.
async function measureStandIn(o, batch, cForward) {
  const pairs = [];
  for (let r = 0; r < o.runs; r++) {
    const spec = { batch, warmup: o.warmup, seconds: o.seconds, ring: o.ring, cForward, node: o.node };
    const c = await runStandIn({ ...spec, lang: 'c' });
    const js = await runStandIn({ ...spec, lang: 'js' });
    pairs.push({ c, js, ratio: js.mpps / c.mpps });
  }
  const row = {
    batch,
    c: summarize(pairs.map((p) => p.c)),
    js: summarize(pairs.map((p) => p.js)),
    ratios: spread(pairs.map((p) => p.ratio)),
  };
  row.ratio = row.ratios.median;
  process.stdout.write(`  batch ${String(batch).padEnd(4)} C ${fmt(row.c.nsPerPacket.median, 1).padStart(5)} ns/pkt, JavaScript ${fmt(row.js.nsPerPacket.median, 1).padStart(5)} ns/pkt` +
    `, JavaScript / C ${fmt(row.ratio)} [${fmt(row.ratios.min)}..${fmt(row.ratios.max)}]\n`);
  return row;
}

// generate's own cost without the model (stand-in.js generate, c-forward --mode
// stand-in-generate), in CPU ns per packet: the process's CPU time, which the host's
// share of CPU for it does not change. C and JavaScript alternate; the ratio is the
// median of the run pairs' JavaScript ns over C ns (a cost: above 1 is slower, where the
// other JavaScript / C figures are rates).
async function measureGenerateStandIn(o, cForward) {
  const pairs = [];
  for (let r = 0; r < o.runs; r++) {
    const spec = { batch: 32, warmup: o.warmup, seconds: o.seconds, ring: o.ring, cForward, node: o.node, mode: 'stand-in-generate' };
    const c = await runStandIn({ ...spec, lang: 'c' });
    const js = await runStandIn({ ...spec, lang: 'js' });
    pairs.push({ c: c.cpuNsPerPacket, js: js.cpuNsPerPacket, ratio: js.cpuNsPerPacket / c.cpuNsPerPacket });
  }
  const row = { c: spread(pairs.map((p) => p.c)), js: spread(pairs.map((p) => p.js)), ratios: spread(pairs.map((p) => p.ratio)), pairs };
  process.stdout.write(`  ${'own cost (stand-in), CPU'.padEnd(28)} JavaScript ${fmt(row.js.median, 2)} ns/pkt, C ${fmt(row.c.median, 2)} ns/pkt, ` +
    `JavaScript's ns / C's ${fmt(row.ratios.median)} [${fmt(row.ratios.min)}..${fmt(row.ratios.max)}] (${pairs.length} run pairs)\n`);
  return row;
}

// Both drivers on one model, taking turns in windows (side-by-side.js): the JS/C ratio
// with both languages on the same host, window pair by window pair.
async function measureSideBySide(o, batch, cForward, probe, mode = 'forward') {
  // One session per run of the other method: as many fresh processes of each driver.
  const s = await sideBySide({ mode, batch, ring: o.ring, rounds: o.rounds, sessions: Math.min(o.runs, o.rounds), windowMs: o.window, warmup: o.warmup, cForward, probe, node: o.node });
  process.stdout.write(`  ${'JavaScript / C, side by side'.padEnd(28)} ${fmt(s.ratio).padStart(7)}       [${fmt(s.ratios.min)}..${fmt(s.ratios.max)}]` +
    `  (median of ${s.rounds} window pairs of ${s.windowMs} ms in ${s.sessions} sessions; JS ${fmt(s.js.median)}, C ${fmt(s.c.median)} Mpps)\n`);
  printPhases(s.phases, 'window pairs');
  return s;
}

// The ratio in each of the host's phases (byPhase() in summary.js), where it had some.
function printPhases(phases, what) {
  for (const [name, label] of [['near', 'vCPUs sharing a cache'], ['far', 'vCPUs apart']]) {
    const p = phases[name];
    if (p.count > 0) {
      process.stdout.write(`  ${`  ${label}`.padEnd(28)} ${fmt(p.ratios.median).padStart(7)}       [${fmt(p.ratios.min)}..${fmt(p.ratios.max)}]` +
        `  (${p.count} ${what}, line trip ${name === 'near' ? '<' : '>='} ${phases.nearBelowNs} ns)\n`);
    }
  }
  if (phases.mixed > 0) process.stdout.write(`  ${'  phase changed during'.padEnd(28)} ${String(phases.mixed).padStart(7)} ${what}\n`);
}

async function main() {
  const o = parseArgs(argv);
  const jsNode = nodeVersion(o.node);
  const cForward = o.c ? buildCForward() : null;
  const probe = o.c ? buildLineTrip() : null;
  const started = new Date();
  const result = {
    date: started.toISOString(),
    machine: { ...machine(), node: jsNode }, // the JS driver's Node, not necessarily this one's
    options: { seconds: o.seconds, warmup: o.warmup, runs: o.runs, rounds: o.rounds, windowMs: o.window, frameSize: 60, ringSize: o.ring },
  };
  process.stdout.write(`bench: JavaScript under Node ${jsNode}; ${o.runs} run(s) of ${o.warmup}+${o.seconds} s per point; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);

  result.forward = [];
  for (const batch of o.batches) {
    process.stdout.write(`forward, batch ${batch}\n`);
    const row = o.c
      ? { batch, ...await measurePair(o, { batch, cForward }, probe), sideBySide: await measureSideBySide(o, batch, cForward, probe) }
      : { batch, js: await measure(o, { lang: 'js', batch }, 'JavaScript') };
    result.forward.push(row);
  }

  process.stdout.write('generate (TX only), batch 32\n');
  result.generate = { batch: 32, js: await measure(o, { lang: 'js', mode: 'generate', batch: 32 }, 'JavaScript') };
  if (o.c) {
    result.generate.c = await measure(o, { lang: 'c', mode: 'generate', batch: 32, cForward }, 'C');
    result.generate.sideBySide = await measureSideBySide(o, 32, cForward, probe, 'generate');
    result.generate.standIn = await measureGenerateStandIn(o, cForward);
  }

  if (o.c && !o.generateOnly) {
    process.stdout.write('the drivers\' own cost: forwarding against a stand-in NIC, no model\n');
    result.standIn = [];
    for (const batch of o.quick ? [32] : [1, 32, 256]) result.standIn.push(await measureStandIn(o, batch, cForward));

    // The model's ceiling: a driver that does nothing but ring work (no packet touched).
    process.stdout.write('model ceiling (C yardstick, packets not touched)\n');
    result.ceiling = [];
    for (const batch of o.quick ? [256] : [32, 64, 256]) {
      result.ceiling.push({ batch, c: await measure(o, { lang: 'c', batch, touch: false, cForward }, `batch ${batch}`) });
    }
  }
  result.loadAverageAfter = os.loadavg();

  const file = writeResults(o.results, '', started, result);
  process.stdout.write(`results: ${file}\n`);
  if (o.latest) {
    const latest = path.join(__dirname, 'results', 'latest.json');
    fs.writeFileSync(latest, `${JSON.stringify(result, null, 2)}\n`);
    const svg = plotSvg(result); // null with --no-c: no ratio to plot
    if (svg) fs.writeFileSync(path.join(__dirname, 'latest.svg'), svg);
    process.stdout.write(`latest: ${latest}${svg ? `, the plot ${path.join(__dirname, 'latest.svg')}` : ''}\n`);
  }
}

const argv = process.argv.slice(2);
const other = ['--loss', '--latency-meter', '--latency', '--pacing', '--xdp'].find((a) => argv.includes(a));
let run = other ? () => require(`./${other.slice(2)}`).main(argv.filter((a) => a !== other)) : main;
if (!other && argv.includes('--workers')) run = () => require('./workers').main(argv); // --workers keeps its value
run().catch((err) => {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(1);
});
