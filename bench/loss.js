'use strict';

// Loss at fixed rates (npm run bench -- --loss [options]): does the forwarder keep up
// with traffic well within its capacity, from the first frame on?
//
// For each rate and each driver (the JS `forward` app and the C yardstick), N runs of:
// a fresh model with a sink on both ports; the driver started and left idle for --idle
// seconds; then port 0's source at the fixed rate (64-byte frames) for --seconds, with
// the model's rxDropNoDesc on port 0 (frames that found no free RX descriptor and no room
// in the packet buffer) sampled every --interval ms. The model runs on CPU 0 and the
// driver's thread on CPU 1. Where V8's own threads (compiler, GC helpers) go is --helpers:
// `model` (default) puts them on CPU 0, as a machine with a spare core would; `driver`
// puts them on the driver's CPU, which then also pays for every compilation.
// The model skips the time it was itself descheduled (sourcePausedUs), so what is
// counted is what the driver lost.
const os = require('os');
const path = require('path');
const { Model } = require('../lib/model');
const { startDriver, sleep } = require('./run-one');
const { buildCForward } = require('./c-build');
const { machine, spread, writeResults } = require('./summary');
const { eachOption } = require('./args');
const { pin, pinDriver } = require('./host');

const FRAME_SIZE = 60; // 64 bytes on the wire with the FCS

async function port0(model) {
  return (await model.stats())[0];
}

// One run: { drops (per interval), dropsFirstSecond, dropsAfter, offered, delivered }.
// rate 0 is the source unlimited: then the run measures the forwarder's maximum instead.
async function lossRun({ lang, rate, idle, idleMode = 'spin', idleRate, seconds, intervalMs, batch, ring, helpers, cForward }) {
  // unlimited lines: the loss at rates above 10 Gb/s is the driver's, not the wire's
  const model = await Model.start({ ports: 2, config: ['sink 0', 'sink 1', 'wire 0 unlimited', 'wire 1 unlimited'] });
  let driver = null;
  try {
    pin(model.pid, 0);
    const cfg = { mode: 'forward', batch, warmup: 0, seconds: idle + seconds + 1, ring, dir: model.dir, addresses: model.addresses, idleMode, idleRate };
    driver = await startDriver(lang, cfg, cForward);
    pinDriver(driver.child.pid, helpers);
    await sleep(idle * 1000);
    await model.command(`source 0 rate=${rate} size=${FRAME_SIZE}`);
    const start = await port0(model);
    const t0 = performance.now();
    const drops = [];
    let last = start;
    for (let k = 1; k * intervalMs <= seconds * 1000; k++) {
      await sleep(t0 + k * intervalMs - performance.now());
      const s = await port0(model);
      drops.push(s.rxDropNoDesc - last.rxDropNoDesc);
      last = s;
    }
    const elapsed = (performance.now() - t0) / 1000;
    await model.command('source 0 off');
    const perSecond = Math.round(1000 / intervalMs);
    const dropsFirstSecond = drops.slice(0, perSecond).reduce((a, b) => a + b, 0);
    const dropsAfter = drops.slice(perSecond).reduce((a, b) => a + b, 0);
    const offered = last.rxOffered - start.rxOffered;
    const delivered = last.rxDelivered - start.rxDelivered;
    const pausedMs = (last.sourcePausedUs - start.sourcePausedUs) / 1000;
    return { drops, dropsFirstSecond, dropsAfter, offered, delivered, pausedMs, mpps: delivered / elapsed / 1e6 };
  } finally {
    if (driver) driver.kill();
    await model.stop();
  }
}

function print(line) {
  process.stdout.write(`${line}\n`);
}

function describe(lang, r) {
  const total = r.dropsFirstSecond + r.dropsAfter;
  const share = r.offered > 0 ? (100 * total) / r.offered : 0;
  const busy = r.drops.map((d, i) => (d > 0 ? `${i}:${d}` : null)).filter(Boolean).join(' ');
  return `  ${lang.padEnd(3)} first second ${String(r.dropsFirstSecond).padStart(7)}, after ${String(r.dropsAfter).padStart(7)}, ` +
    `total ${String(total).padStart(7)} of ${r.offered} (${share.toFixed(3)}%)${busy ? `  [interval:drops ${busy}]` : ''}`;
}

// The forwarder's maximum one way (port 0's source unlimited) in `runs` runs.
async function maximum(o, lang, cForward) {
  const rates = [];
  for (let r = 0; r < o.runs; r++) {
    const run = await lossRun({ ...o, lang, rate: 0, idle: 0.2, seconds: 2, cForward });
    rates.push(Number(run.mpps.toFixed(2)));
  }
  return rates;
}

// o: parseLossArgs()'s options; cForward: the C yardstick's binary, or null for JS only.
async function measureLoss(o, cForward) {
  const langs = cForward ? ['js', 'c'] : ['js'];
  const result = { options: { ...o, frameSize: FRAME_SIZE }, maximum: {}, maximumRuns: {}, rates: [] };
  if (o.rates.includes('half')) {
    for (const lang of langs) {
      result.maximumRuns[lang] = await maximum(o, lang, cForward);
      result.maximum[lang] = spread(result.maximumRuns[lang]).median;
    }
    print(`maximum one way (source unlimited, median of ${o.runs}): ` +
      `${langs.map((l) => `${l} ${result.maximum[l].toFixed(2)} Mpps [${result.maximumRuns[l].join(' ')}]`).join(', ')}`);
  }
  const half = Math.min(...Object.values(result.maximum)) / 2;
  for (const wanted of o.rates) {
    const mpps = wanted === 'half' ? Number(half.toFixed(2)) : wanted;
    print(`${mpps} Mpps${wanted === 'half' ? ' (half the lower maximum)' : ''}, ${o.idle} s idle, then ${o.seconds} s of traffic; drops every ${o.intervalMs} ms`);
    const row = { mpps, half: wanted === 'half', runs: { js: [], c: [] } };
    for (let r = 0; r < o.runs; r++) {
      for (const lang of langs) {
        const run = await lossRun({ ...o, lang, rate: Math.round(mpps * 1e6), cForward });
        row.runs[lang].push(run);
        print(describe(lang, run));
      }
    }
    for (const lang of langs) {
      const runs = row.runs[lang];
      const sum = (key) => runs.reduce((a, r) => a + r[key], 0);
      row[lang] = {
        dropsFirstSecond: sum('dropsFirstSecond'),
        dropsAfter: sum('dropsAfter'),
        offered: sum('offered'),
        runsWithoutDrops: runs.filter((r) => r.dropsFirstSecond + r.dropsAfter === 0).length,
      };
    }
    result.rates.push(row);
  }
  print('');
  print('rate Mpps | driver | drops in 1st s | drops after | share of offered | runs without a drop');
  for (const row of result.rates) {
    for (const lang of langs) {
      const t = row[lang];
      const share = (100 * (t.dropsFirstSecond + t.dropsAfter)) / t.offered;
      print(`${String(row.mpps).padStart(9)} | ${lang.padEnd(6)} | ${String(t.dropsFirstSecond).padStart(14)} | ${String(t.dropsAfter).padStart(11)} | ` +
        `${`${share.toFixed(4)}%`.padStart(16)} | ${t.runsWithoutDrops} of ${row.runs[lang].length}`);
    }
  }
  return result;
}

const USAGE = `usage: npm run bench -- --loss [options]
  --rates R,R,..      rates in Mpps, and 'half' for half the lower of both drivers' maximum
                      one way (default 0.1,1,5,half)
  --runs N            runs per rate and driver (default 5)
  --idle S            seconds the driver is idle before the traffic starts (default 1)
  --idle-mode M       the JS forwarder's idle mode meanwhile: spin (default), backoff, interrupt, or
                      default (what ixy forward does without --idle: interrupt on the model)
                      (lib/device/idle.js)
  --idle-rate PPS     the JS forwarder's idleRate (the rate that bounds a backoff sleep)
  --seconds S         seconds of traffic (default 5)
  --interval MS       drops are sampled this often (default 250)
  --batch N           RX batch size of both drivers (default 32)
  --ring N            RX and TX ring size of both drivers (default 512, as ixy forward)
  --helpers model|driver  the CPU of V8's own threads (default model, see loss.js)
  --no-c              JavaScript only
  --results DIR       where the results JSON goes (default bench/results)`;

function parseRate(text) {
  if (text === 'half') return text;
  const mpps = Number(text);
  if (!(mpps > 0) || mpps > 100) throw new Error(`bad rate '${text}': Mpps above 0 (at most 100), or half`);
  return mpps;
}

function parseLossArgs(argv) {
  const o = {
    rates: [0.1, 1, 5, 'half'], runs: 5, idle: 1, seconds: 5, intervalMs: 250, batch: 32, ring: 512,
    helpers: 'model', c: true, results: path.join(__dirname, 'results'),
  };
  eachOption(argv, USAGE, (a, next) => {
    if (a === '--rates') o.rates = next().split(',').map(parseRate);
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--idle') o.idle = Number(next());
    else if (a === '--idle-mode') o.idleMode = next();
    else if (a === '--idle-rate') o.idleRate = Number(next());
    else if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--interval') o.intervalMs = Number(next());
    else if (a === '--batch') o.batch = Number(next());
    else if (a === '--ring') o.ring = Number(next());
    else if (a === '--helpers') o.helpers = next();
    else if (a === '--no-c') o.c = false;
    else if (a === '--results') o.results = next();
    else return false;
    return true;
  });
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs must be a positive integer');
  if (!(o.idle >= 0) || !(o.seconds >= 1)) throw new Error('--idle must be 0 or more and --seconds at least 1');
  if (!Number.isInteger(o.intervalMs) || o.intervalMs < 20 || o.intervalMs > 1000) throw new Error('--interval must be 20..1000 ms');
  if (!Number.isInteger(o.batch) || o.batch < 1 || o.batch > 4096) throw new Error(`bad batch size ${o.batch}`);
  if (!Number.isInteger(o.ring) || o.ring < 64 || o.ring > 4096 || (o.ring & (o.ring - 1)) !== 0) throw new Error(`--ring must be a power of two from 64 to 4096, got ${o.ring}`);
  if (o.helpers !== 'model' && o.helpers !== 'driver') throw new Error('--helpers must be model or driver');
  return o;
}

async function main(argv) {
  const o = parseLossArgs(argv);
  if (os.cpus().length < 2) throw new Error('the loss benchmark needs two CPUs: one for the model, one for the driver');
  // This process samples the model every --interval ms: on CPU 0 too, so that the
  // driver's CPU runs the driver alone.
  pin(process.pid, 0);
  const started = new Date();
  const cForward = o.c ? buildCForward() : null;
  const result = { date: started.toISOString(), machine: machine(), ...await measureLoss(o, cForward) };
  const file = writeResults(o.results, 'loss-', started, result);
  print(`results: ${file}`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`bench --loss: ${err.message}\n`);
    process.exit(1);
  });
}

module.exports = { main, measureLoss, lossRun };
