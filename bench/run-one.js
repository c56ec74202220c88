'use strict';

// One benchmark run: a fresh model, one driver process (the JS app or the C yardstick),
// and the packet rate as the model itself counts it (frames consumed from the TX rings,
// both ports) over [ready + warmup, ready + warmup + seconds]. The same clock and the
// same counter for both languages, so the JS/C ratio compares like with like.
const { spawn } = require('child_process');
const path = require('path');
const { Model } = require('../lib/model');
const { total, checkDescriptors } = require('./summary');

const JS_CHILD = path.join(__dirname, 'js-child.js');
const JS_STAND_IN = path.join(__dirname, 'stand-in.js');

// The model's traffic for forwarding on the given ports: 64-byte frames on the wire (60
// bytes without the FCS), sources unlimited (rate 0: every free RX descriptor is filled
// on each visit), sinks that count without checking. The lines are unlimited too: these
// benchmarks measure the drivers' speed, which exceeds 10 Gb/s (14.88 Mpps of 64 bytes).
function forwardTraffic(ports) {
  return ports.flatMap((p) => [`source ${p} rate=0 size=60`, `sink ${p}`, `wire ${p} unlimited`]);
}

const MODEL_CONFIG = {
  forward: forwardTraffic([0, 1]),
  generate: ['sink 0', 'wire 0 unlimited'],
};

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Total frames the driver handed to the wire on the model's ports (or on those of
// `only`, by index), with the time it was read (midpoint of the request, in ms), and
// every port's statistics.
async function sample(model, only = null) {
  const before = performance.now();
  const ports = await model.stats();
  const at = (before + performance.now()) / 2;
  return { at, txFrames: total(only ? only.map((p) => ports[p]) : ports, 'txFrames'), ports };
}

// The command of a driver process: the C yardstick, or the JS app run by `node` (a
// Node.js binary; `npm run bench -- --node PATH` compares Node lines on the same host).
function childCommand(lang, cfg, cForward, node = process.execPath) {
  const standIn = cfg.mode === 'stand-in' || cfg.mode === 'stand-in-generate';
  if (lang === 'c') {
    const margin = standIn ? 0 : 0.5; // keep running past the runner's last sample
    return [cForward, [cfg.dir || '-', '--mode', cfg.mode, '--batch', String(cfg.batch), '--touch', cfg.touch === false ? '0' : '1',
      '--warmup', String(cfg.warmup), '--seconds', String(cfg.seconds + margin), '--ring', String(cfg.ring),
      '--first-port', String(cfg.firstPort || 0)]];
  }
  if (standIn) return [node, [JS_STAND_IN, JSON.stringify({ ...cfg, mode: cfg.mode === 'stand-in' ? 'forward' : 'generate' })]];
  return [node, [JS_CHILD, JSON.stringify(cfg)]];
}

// Starts one driver process (the JS app or the C yardstick) on the model in cfg.dir and
// resolves once it says its ports are up: { child, lines (its JSON lines), exited,
// running(), stderr(), finished(), kill() }. Rejects, with what the driver printed, if it
// exits before that. finished() waits for the driver to end by itself and resolves with its
// last JSON line, or rejects with what it printed unless it exited 0; kill() kills it if
// it still runs. node: the Node.js binary of the JS driver.
async function startDriver(lang, cfg, cForward, node = process.execPath) {
  const [cmd, args] = childCommand(lang, cfg, cForward, node);
  const child = spawn(cmd, args, { env: { ...process.env, IXY_PCI_ROOT: cfg.dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  let stderr = '';
  let ready = null;
  const isReady = new Promise((resolve) => { ready = resolve; });
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.startsWith('{')) lines.push(JSON.parse(line));
      if (line.includes('"ready":true')) ready(true);
    }
  });
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  if (!(await Promise.race([isReady, exited.then(() => false)]))) {
    throw new Error(`${lang} driver failed before it was ready: ${stderr.trim() || 'no message'}`);
  }
  const running = () => child.exitCode === null && child.signalCode === null;
  const finished = async () => {
    const { code, signal } = await exited;
    if (code !== 0) throw new Error(`${lang} driver exited with ${code ?? signal}: ${stderr.trim()}`);
    return lines[lines.length - 1];
  };
  const kill = () => { if (running()) child.kill('SIGKILL'); };
  return { child, lines, exited, running, stderr: () => stderr, finished, kill };
}

// Resolves with { mpps, nsPerPacket, packets, seconds, child: <the child's last JSON line> }.
async function runOne({ lang, mode = 'forward', batch, warmup, seconds, touch = true, ring = 512, cForward, node }) {
  const model = await Model.start({ ports: 2, config: MODEL_CONFIG[mode] });
  let driver = null;
  try {
    const cfg = { mode, batch, warmup, seconds, touch, ring, dir: model.dir, addresses: model.addresses };
    driver = await startDriver(lang, cfg, cForward, node);
    await sleep(warmup * 1000);
    const s1 = await sample(model);
    await sleep(seconds * 1000);
    const s2 = await sample(model);
    const last = await driver.finished();
    checkDescriptors(s2.ports, `${lang} driver`);
    const packets = s2.txFrames - s1.txFrames;
    const secs = (s2.at - s1.at) / 1000;
    const mpps = packets / secs / 1e6;
    return { mpps, nsPerPacket: mpps > 0 ? 1000 / mpps : null, packets, seconds: secs, child: last };
  } finally {
    if (driver) driver.kill();
    await model.stop();
  }
}

// One run of a driver against its stand-in NIC, without the model (stand-in.js and
// c-forward --mode stand-in): resolves with what it printed last, { mpps, nsPerPacket, ... }.
// mode: 'stand-in' (forwarding) or 'stand-in-generate'.
async function runStandIn({ lang, batch, warmup, seconds, ring = 512, cForward, node, mode = 'stand-in' }) {
  const driver = await startDriver(lang, { mode, batch, warmup, seconds, ring }, cForward, node);
  return driver.finished();
}

module.exports = { runOne, runStandIn, startDriver, sample, sleep, forwardTraffic, MODEL_CONFIG };
