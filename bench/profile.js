#!/usr/bin/env node
'use strict';

// npm run profile [-- --seconds S] [--batch N] [--out DIR]
// A flame graph of `ixy forward` on the model: the model offers unlimited 64-byte frames
// on both ports, `ixy forward --seconds S` runs under 0x (V8's sampling profiler, no
// network needed), stops by itself after S seconds and prints its totals, and 0x then
// writes an HTML flame graph into DIR (default profile-<time>/, gitignored). Ctrl-C (or
// SIGTERM, SIGHUP) ends the profile early and 0x still writes the graph; the forwarder
// then prints no totals, because 0x preloads a SIGINT handler into it that exits at once.
// 0x runs in a process group of its own, and this script sends SIGINT to that whole group:
// 0x does not pass a SIGINT sent to it alone on to the profiled process (a timer that
// signalled 0x once left the forwarder running until 0x was killed), and a SIGTERM to
// this script alone would otherwise leave 0x and the forwarder running without it.
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { Model } = require('../lib/model');
const { MODEL_CONFIG } = require('./run-one');

const ROOT = path.join(__dirname, '..');
const ZERO_X = path.join(ROOT, 'node_modules', '0x', 'cmd.js');
const IXY = path.join(ROOT, 'bin', 'ixy.js');

function parseArgs(argv) {
  const o = { seconds: 10, batch: 32, out: path.join(ROOT, `profile-${new Date().toISOString().replace(/[:.]/g, '-')}`) };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--help' || argv[i] === '-h') {
      process.stdout.write('usage: npm run profile [-- --seconds S (default 10)] [--batch N (default 32)] [--out DIR (default profile-<time>/)]\n');
      process.exit(0);
    } else if (argv[i] === '--seconds') o.seconds = Number(argv[i + 1]);
    else if (argv[i] === '--batch') o.batch = Number(argv[i + 1]);
    else if (argv[i] === '--out') o.out = path.resolve(argv[i + 1]);
    else throw new Error(`unknown option ${argv[i]} (use --seconds, --batch, --out)`);
  }
  if (!(o.seconds > 0)) throw new Error('--seconds must be positive');
  return o;
}

function findHtml(dir) {
  if (!fs.existsSync(dir)) return null;
  const html = fs.readdirSync(dir).find((f) => f.endsWith('.html'));
  return html ? path.join(dir, html) : null;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(ZERO_X)) throw new Error('0x is not installed: run npm install (it is a devDependency)');
  const model = await Model.start({ ports: 2, config: MODEL_CONFIG.forward });
  try {
    const args = [ZERO_X, '--output-dir', o.out, '--', process.execPath, IXY, 'forward', ...model.addresses, '--batch', String(o.batch), '--seconds', String(o.seconds)];
    const child = spawn(process.execPath, args, { env: { ...process.env, IXY_PCI_ROOT: model.dir }, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    // End the profile early: the forwarder exits (see the top of this file), 0x writes the
    // graph, and this process waits for both. (The group's id is 0x's pid: detached.)
    const stopEarly = () => {
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        // the group has already gone
      }
    };
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const s of signals) process.on(s, stopEarly);
    let status;
    try {
      status = await exited;
    } finally {
      for (const s of signals) process.removeListener(s, stopEarly);
    }
    const html = findHtml(o.out);
    if (!html) throw new Error(`0x exited with ${status} and wrote no flame graph into ${o.out}`);
    process.stdout.write(`flame graph: ${html}\n`);
  } finally {
    await model.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`profile: ${err.message}\n`);
  process.exit(1);
});
