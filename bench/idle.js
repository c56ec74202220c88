#!/usr/bin/env node
'use strict';

// What an idle loop costs and how fast it wakes (issues 24, 39), per idle mode (lib/device/idle.js):
//   node bench/idle.js [--seconds 10] [--rounds 10] [--modes spin,backoff,interrupt] [--loops forward,pcap,receive]
// For three loops on the model: `ixy forward` (the commands' run loop), `ixy pcap ADDRESS -`
// (the same run loop, writing to a pipe) and a `for await (const batch of dev.receive(0))`
// loop (receive()):
//   CPU: the driver process's user + system time (/proc/PID/stat, i.e. getrusage) over
//        --seconds with no traffic, as a share of one core: once right after start-up
//        ("first"), and once from --settle seconds on ("settled"), when V8 has compiled
//        what the idle path calls often and the heap has had its first collections; a
//        tool left idle pays the settled figure, the first once.
//   wake-up: after 1 s without traffic, one frame from the model's source: from the
//        model writing its RX descriptor back (stats rxLastNs) to the frame reaching
//        JavaScript (receive(): the loop body reads process.hrtime.bigint(), the same
//        CLOCK_MONOTONIC) or leaving on the other port (forward: txLastNs, when the
//        model took it from the TX ring; the model polls TX at once while it has had
//        work in the last 2 ms, so this adds microseconds; pcap: when this process reads the
//        frame's record from the pipe, which adds the pipe's way). --rounds frames per loop.
// 'interrupt' sleeps on the model's interrupts (lib/host/model-irq.js). The model runs on CPU 0 and
// the driver on CPU 1 (as in loss.js): on one CPU they take turns of milliseconds.
const { spawn } = require('child_process');
const path = require('path');
const readline = require('readline');
const { Model } = require('../lib/model');
const { eachOption } = require('./args');
const { sleep } = require('./run-one');
const { pin, cpuSeconds } = require('./host');
const { spread } = require('./summary');

const IXY = path.join(__dirname, '..', 'bin', 'ixy.js');
const USAGE = `usage: node bench/idle.js [--seconds S] [--settle S] [--rounds N] [--modes LIST] [--loops LIST]
  --seconds S   idle seconds over which CPU is measured (default 10)
  --settle S    seconds after start-up when the settled CPU window begins (default 20)
  --rounds N    frames, each after 1 s of idleness, for the wake-up (default 10)
  --modes LIST  idle modes (default spin,backoff,interrupt)
  --loops LIST  loops (default forward,pcap,receive)
  --idle-rate R idleRate of the loops (frames/s; bounds a backoff sleep, lib/device/idle-bound.js)`;

// The receive() loop, run as `node bench/idle.js --child-receive ADDRESS MODE`: prints
// {"ready":true}, then per batch that follows 100 ms without one {"t":ns}.
async function childReceive(address, idle, idleRate) {
  const ixy = require('../lib/index');
  const dev = await ixy.open(address, { idle, idleRate: idleRate ? Number(idleRate) : undefined });
  const stop = new AbortController();
  process.on('SIGTERM', () => stop.abort());
  process.stdout.write('{"ready":true}\n');
  let last = 0n;
  for await (const batch of dev.receive(0, { signal: stop.signal })) {
    const t = process.hrtime.bigint();
    if (batch.count > 0 && t - last > 100000000n) process.stdout.write(`{"t":"${t}"}\n`);
    last = t;
  }
  dev.close();
}

// Starts a driver process for `loop` ('forward', 'pcap' or 'receive') in `mode`; resolves
// with { child, lines } once it is ready (lines: an async iterator over its stdout; for
// pcap, over the times, process.hrtime.bigint(), at which its records came down the pipe).
async function startDriver(model, loop, mode, idleRate) {
  const rateArgs = idleRate ? ['--idle-rate', String(idleRate)] : [];
  const args = {
    forward: [IXY, 'forward', ...model.addresses, '--idle', mode, ...rateArgs],
    pcap: [IXY, 'pcap', model.addresses[0], '-', '--idle', mode, ...rateArgs],
    receive: [path.join(__dirname, 'idle.js'), '--child-receive', model.addresses[0], mode, ...(idleRate ? [String(idleRate)] : [])],
  }[loop];
  const child = spawn(process.execPath, args, { env: { ...process.env, IXY_PCI_ROOT: model.dir }, stdio: ['ignore', 'pipe', loop === 'pcap' ? 'ignore' : 'inherit'] });
  const lines = loop === 'pcap' ? chunkTimes(child.stdout) : readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next(); // pcap: the file header, written once the port is up
  if (first.done) throw new Error(`the ${loop} driver exited before it was ready`);
  return { child, lines };
}

// An async iterator over when each chunk came from `stream`: {"t":ns} lines, as the receive
// child prints them.
function chunkTimes(stream) {
  const waiting = [];
  const times = [];
  stream.on('data', () => {
    const t = `{"t":"${process.hrtime.bigint()}"}`;
    if (waiting.length > 0) waiting.shift()({ value: t, done: false });
    else times.push(t);
  });
  stream.on('end', () => { while (waiting.length > 0) waiting.shift()({ value: undefined, done: true }); });
  return { next: () => (times.length > 0 ? Promise.resolve({ value: times.shift(), done: false }) : new Promise((resolve) => waiting.push(resolve))) };
}

// The share of a core process `pid` uses over the next `seconds`.
async function cpuShare(pid, seconds) {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  return (cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000);
}

async function measure(loop, mode, o) {
  const model = await Model.start({ ports: 2, config: ['sink 1'] });
  let driver = null;
  try {
    pin(model.pid, 0);
    driver = await startDriver(model, loop, mode, o.idleRate);
    const pid = driver.child.pid;
    pin(pid, 1);
    const started = performance.now();
    await sleep(1500); // past the start-up and into idleness
    const cpuFirst = await cpuShare(pid, o.seconds);
    await sleep(Math.max(0, o.settle * 1000 - (performance.now() - started)));
    const cpu = await cpuShare(pid, o.seconds);

    const wakeUs = [];
    for (let r = 0; r < o.rounds; r++) {
      await sleep(1000);
      const before = await model.stats();
      await model.command('source 0 count=1');
      let deliveredNs;
      if (loop !== 'forward') {
        const line = await driver.lines.next();
        if (line.done) throw new Error('the receive loop ended');
        deliveredNs = BigInt(JSON.parse(line.value).t);
      } else {
        const [, p1] = await model.waitFor(1, (s) => s.txFrames > before[1].txFrames, 5000).then(() => model.stats());
        deliveredNs = BigInt(p1.txLastNs);
      }
      const [p0] = await model.stats();
      wakeUs.push(Number(deliveredNs - BigInt(p0.rxLastNs)) / 1000);
    }
    return { cpuFirst, cpu, wakeUs };
  } finally {
    if (driver) {
      driver.child.kill('SIGTERM');
      await new Promise((resolve) => (driver.child.exitCode !== null ? resolve() : driver.child.on('exit', resolve)));
    }
    await model.stop();
  }
}

async function main(argv) {
  if (argv[0] === '--child-receive') return childReceive(argv[1], argv[2], argv[3]);
  const o = { seconds: 10, settle: 20, rounds: 10, modes: ['spin', 'backoff', 'interrupt'], loops: ['forward', 'pcap', 'receive'] };
  eachOption(argv, USAGE, (a, next) => {
    if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--settle') o.settle = Number(next());
    else if (a === '--rounds') o.rounds = Number(next());
    else if (a === '--modes') o.modes = next().split(',');
    else if (a === '--loops') o.loops = next().split(',');
    else if (a === '--idle-rate') o.idleRate = Number(next());
    else return false;
    return true;
  });
  if (!(o.seconds > 0) || !(o.rounds >= 1) || !(o.settle >= 0)) throw new Error('--seconds and --rounds must be positive, --settle 0 or more');
  process.stdout.write(`idle loops on the model: CPU over ${o.seconds} s without traffic (first: after start-up; settled: from ${o.settle} s on), wake-up after 1 s idle (${o.rounds} frames)\n`);
  const results = {};
  const pct = (share) => `${(share * 100).toFixed(2)}%`;
  const lines = ['| loop | idle | CPU settled (share of a core) | CPU first | wake-up p50 us | wake-up max us |', '|---|---|---|---|---|---|'];
  for (const loop of o.loops) {
    for (const mode of o.modes) {
      const r = await measure(loop, mode, o);
      results[`${loop}/${mode}`] = r;
      process.stdout.write(`  ${loop.padEnd(8)} ${mode.padEnd(8)} CPU settled ${pct(r.cpu).padStart(6)}, first ${pct(r.cpuFirst).padStart(6)} of a core` +
        `   wake-up median ${spread(r.wakeUs).median.toFixed(0).padStart(5)} us  max ${Math.max(...r.wakeUs).toFixed(0).padStart(5)} us\n`);
      lines.push(`| ${loop} | ${mode} | ${pct(r.cpu)} | ${pct(r.cpuFirst)} | ${spread(r.wakeUs).median.toFixed(0)} | ${Math.max(...r.wakeUs).toFixed(0)} |`);
    }
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
  return results;
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`bench/idle.js: ${err.message}\n`);
    process.exit(1);
  });
}
