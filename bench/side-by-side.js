'use strict';

// JavaScript and C side by side: both drivers up at once on one model of four ports, the
// JS app on ports 0 and 1, the C yardstick on ports 2 and 3 (`generate` sends on the
// first of each pair, into a sink), but only one of them running at a time. The other
// is stopped (SIGSTOP) and the two take turns in windows of a few hundred milliseconds,
// in the order JS, C, C, JS, JS, C, ... Each window pair gives one JS/C ratio.
//
// Why: this host changes speed by itself, from one second to the next (other guests on
// the same machine; see bench/LOG.md, tenth round). A JS run and a C run of
// a few seconds each, one after the other, often see different hosts: their ratios
// spread from 0.6 to 1.1. Windows 300 ms apart nearly always see the same host. The
// windows are spread over a few sessions, each with fresh processes (see sideBySide()).
//
// A stopped driver's RX rings fill and its TX rings drain; the model only glances at its
// ports (no free descriptor, nothing to send). Each window starts SETTLE_MS after the
// driver is let go again, so the burst that empties its full rings is not counted.
//
// Before and after each window pair, with both drivers stopped, the line-trip probe
// (line-trip.c) tells which phase the host was in. The ratio differs between the phase
// in which the two vCPUs share a cache and the one in which they do not (LOG.md,
// eleventh round), so it is also given for each phase.
const { Model } = require('../lib/model');
const { startDriver, sample, sleep, forwardTraffic } = require('./run-one');
const { spread, checkDescriptors, tripsBetween, byPhase } = require('./summary');

const SETTLE_MS = 30;
const STOP_WAIT_MS = 5000;

// For each mode: the ports whose TX counts, for each side, and the model's traffic.
// c-forward opens two ports from --first-port in either mode and generates on the first.
const LAYOUT = {
  forward: { js: [0, 1], c: [2, 3], traffic: forwardTraffic([0, 1, 2, 3]) },
  generate: { js: [0], c: [2], traffic: [0, 1, 2, 3].flatMap((p) => [`sink ${p}`, `wire ${p} unlimited`]) },
};

// Lets a side's driver run for about ms and stops it again; returns its rate in Mpps.
async function runWindow(model, { lang, driver, ports }, ms) {
  if (!driver.running()) {
    throw new Error(`the ${lang} driver exited during the side-by-side run: ${driver.stderr().trim() || 'no message'}`);
  }
  driver.child.kill('SIGCONT');
  await sleep(SETTLE_MS);
  const a = await sample(model, ports);
  await sleep(ms);
  const b = await sample(model, ports);
  driver.child.kill('SIGSTOP');
  return (b.txFrames - a.txFrames) / (b.at - a.at) / 1000;
}

// Ends a driver that may be stopped: SIGTERM (the JS app then closes its ports), and
// SIGKILL if it has not exited after STOP_WAIT_MS.
async function finish(driver) {
  if (!driver.running()) return;
  driver.child.kill('SIGCONT');
  driver.child.kill('SIGTERM');
  const timer = setTimeout(() => driver.child.kill('SIGKILL'), STOP_WAIT_MS);
  await driver.exited;
  clearTimeout(timer);
}

// One session: a fresh model and a fresh process of each driver, `rounds` window pairs
// (numbered from firstRound in the whole measurement) after `warmup` seconds of each
// driver (the JS driver's JIT settles). Returns the windows' rates in Mpps and the line
// trips in ns before and after each pair: [{ js, c, trips: [before, after] }].
async function session({ mode, batch, ring, rounds, firstRound, windowMs, warmup, cForward, probe, node }) {
  const layout = LAYOUT[mode];
  const model = await Model.start({ ports: 4, config: layout.traffic });
  const drivers = [];
  try {
    // Long enough never to end by themselves: finish() ends them.
    const cfg = { mode, batch, ring, warmup: 0, seconds: 24 * 3600, dir: model.dir };
    const js = { lang: 'js', ports: layout.js };
    js.driver = await startDriver('js', { ...cfg, addresses: layout.js.map((p) => model.addresses[p]) }, null, node);
    drivers.push(js.driver);
    js.driver.child.kill('SIGSTOP');
    const c = { lang: 'c', ports: layout.c };
    c.driver = await startDriver('c', { ...cfg, firstPort: layout.c[0] }, cForward);
    drivers.push(c.driver);
    c.driver.child.kill('SIGSTOP');

    await runWindow(model, js, warmup * 1000);
    await runWindow(model, c, warmup * 1000);
    const windows = [];
    const trips = tripsBetween(probe); // the host's phase before and after each pair
    for (let r = 0; r < rounds; r++) {
      const w = {};
      const even = (firstRound + r) % 2 === 0; // JS, C, C, JS, ... across sessions
      for (const side of even ? [js, c] : [c, js]) w[side.lang] = await runWindow(model, side, windowMs);
      w.trips = trips();
      windows.push(w);
    }
    checkDescriptors(await model.stats(), 'side by side');
    return windows;
  } finally {
    for (const d of drivers) await finish(d);
    await model.stop();
  }
}

// rounds window pairs in all, spread over `sessions` sessions: a driver process can sit
// in a slow mode for its whole life (the C yardstick's mean RX batch of about 1, see
// LOG.md, ninth round), so one process of each would weigh a single draw as much
// as the whole measurement. Resolves with { js, c, ratios: spread() of Mpps and of the
// JS/C ratios, ratio: their median, phases: byPhase() of the ratios (summary.js), rounds,
// sessions, windowMs, windows: [{ js, c, trips }] }. mode: 'forward' or 'generate';
// probe: the line-trip binary; node: the Node.js binary of the JS driver.
async function sideBySide({ mode = 'forward', batch, ring = 512, rounds = 12, sessions = 3, windowMs = 300, warmup = 1, cForward, probe, node = process.execPath }) {
  if (!LAYOUT[mode]) throw new Error(`side by side: no mode ${mode}`);
  const windows = [];
  for (let k = 0; k < sessions; k++) {
    const share = Math.round((rounds * (k + 1)) / sessions) - Math.round((rounds * k) / sessions);
    if (share > 0) windows.push(...await session({ mode, batch, ring, rounds: share, firstRound: windows.length, windowMs, warmup, cForward, probe, node }));
  }
  const ratios = spread(windows.map((w) => w.js / w.c));
  return {
    js: spread(windows.map((w) => w.js)),
    c: spread(windows.map((w) => w.c)),
    ratios,
    ratio: ratios.median,
    phases: byPhase(windows, (w) => w.js / w.c),
    rounds,
    sessions,
    windowMs,
    windows,
  };
}

module.exports = { sideBySide };
