#!/usr/bin/env node
'use strict';

// node bench/ab.js LIB_A LIB_B [--batch N] [--rounds N] [--window MS]
// A/B of two versions of the driver in one process, against one model with four ports:
// version A forwards between ports 0 and 1, version B between ports 2 and 3, in
// alternating windows (A, B, A, B, ...). Prints each version's median rate and the
// median of the B/A ratios of neighbouring windows, once both versions have shown that
// they forward their frames intact (checkFrames); then the same median for each of the
// host's phases (the line trip between the vCPUs, probed between window pairs: summary.js).
//
// Why: on this shared host a whole-process benchmark drifts by tens of percent within
// minutes, far more than most changes are worth. Windows of a few hundred milliseconds,
// interleaved, see the same host; A against itself gives a ratio of 1.00 within 1-2%.
//
// LIB_A and LIB_B are lib/ folders, e.g. this checkout's and a worktree of another
// commit (`git worktree add /tmp/old HEAD~1 && ln -s $PWD/build /tmp/old/build`).
// Each is loaded as its own set of modules, so each has its own JIT state. V8's flags
// belong to the process, so a change to lib/host/jit.js cannot be measured here: it needs two
// processes taking turns on one model, as side-by-side.js runs JavaScript and C.
const path = require('path');
const { Model } = require('../lib/model');
const { spread, total, checkDescriptors, tripsBetween, byPhase } = require('./summary');
const { forwardTraffic } = require('./run-one');
const { buildLineTrip } = require('./c-build');
const { tuneJit } = require('../lib/host/jit');

function parseArgs(argv) {
  const o = { libs: [], batch: 32, rounds: 12, window: 300 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--batch' || a === '--rounds' || a === '--window') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) throw new Error(`${a} needs a positive integer`);
      o[a.slice(2)] = v;
    } else {
      o.libs.push(path.resolve(a));
    }
  }
  if (o.libs.length !== 2) throw new Error('usage: ab.js LIB_A LIB_B [--batch N] [--rounds N] [--window MS]');
  return o;
}

// One version forwarding between two ports; window(ms) runs it and returns Mpps.
async function openSide(lib, addresses, batchSize) {
  const { open, PacketBatch } = require(path.join(lib, 'index')); // in every layout of lib/
  const { forwardBatch } = require(path.join(lib, 'apps', 'forward'));
  const a = await open(addresses[0]);
  const b = await open(addresses[1]);
  const [rxA, txA, rxB, txB] = [a.rxQueues[0], a.txQueues[0], b.rxQueues[0], b.txQueues[0]];
  const towardB = new PacketBatch(batchSize);
  const towardA = new PacketBatch(batchSize);
  return {
    dropped: 0, // frames a version that drops for a full TX ring dropped (this one holds them)
    window(ms) {
      const before = txA.packets + txB.packets;
      const start = performance.now();
      let now = start;
      let dropped = 0;
      while (now - start < ms) {
        for (let k = 0; k < 256; k++) {
          dropped += forwardBatch(rxA, txB, towardB) || 0;
          dropped += forwardBatch(rxB, txA, towardA) || 0;
        }
        now = performance.now();
      }
      this.dropped = dropped;
      return (txA.packets + txB.packets - before) / (now - start) / 1000;
    },
    close() {
      a.stop();
      b.stop();
      a.close();
      b.close();
    },
  };
}

// A faster version is only worth something if it still forwards the frames it was given.
// After the timed windows, one more window per version with the sinks checking every
// frame's IPv4 header and sequence number (the check slows the model, so it is not
// timed). A correct driver puts a frame out of sequence only where frames were lost: the
// ones it dropped for a full TX ring, or that the NIC dropped for want of an RX
// descriptor while the driver held frames back; at most once per frame lost. A
// driver that hands the NIC a buffer it still holds elsewhere forwards overwritten frames:
// prototypes with such a bug measured 5-13% "faster" with 12% of their frames out of
// sequence.
async function checkFrames(model, sides, libs) {
  for (let p = 0; p < 4; p++) {
    await model.sink(p, { check: true });
    await model.clear(p);
  }
  for (const side of sides) side.window(300);
  const ports = await model.stats();
  sides.forEach((side, k) => {
    const who = `${'AB'[k]} (${libs[k]})`;
    const mine = ports.slice(2 * k, 2 * k + 2);
    checkDescriptors(mine, who);
    const frames = total(mine, 'sinkFrames');
    const bad = total(mine, 'sinkBadFrames');
    const outOfSequence = total(mine, 'sinkSeqErrors');
    const lost = side.dropped + total(mine, 'rxDropNoDesc');
    if (frames === 0 || bad > 0 || outOfSequence > lost) {
      throw new Error(`${who} forwarded ${bad} damaged and ${outOfSequence} out-of-sequence frames of ${frames} ` +
        `(${lost} lost): its rate means nothing`);
    }
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  tuneJit(); // both versions compiled as the ixy command compiles them (lib/host/jit.js)
  const probe = buildLineTrip();
  const model = await Model.start({ ports: 4, config: forwardTraffic([0, 1, 2, 3]) });
  const sides = [];
  try {
    process.env.IXY_PCI_ROOT = model.dir;
    sides.push(await openSide(o.libs[0], model.addresses.slice(0, 2), o.batch));
    sides.push(await openSide(o.libs[1], model.addresses.slice(2, 4), o.batch));
    const warmupRounds = 2; // let both versions be optimised before measuring
    const pairs = []; // { a, b, trips }: the host's phase probed between the pairs
    const trips = tripsBetween(probe);
    for (let r = 0; r < warmupRounds + o.rounds; r++) {
      const a = sides[0].window(o.window);
      const b = sides[1].window(o.window);
      const around = trips();
      if (r >= warmupRounds) pairs.push({ a, b, trips: around });
    }
    await checkFrames(model, sides, o.libs);
    const ratios = spread(pairs.map((p) => p.b / p.a));
    process.stdout.write(`A ${spread(pairs.map((p) => p.a)).median.toFixed(2)} Mpps  B ${spread(pairs.map((p) => p.b)).median.toFixed(2)} Mpps  ` +
      `B/A ${ratios.median.toFixed(3)} [${ratios.min.toFixed(2)}..${ratios.max.toFixed(2)}]` +
      `  (batch ${o.batch}, ${o.rounds} windows of ${o.window} ms each)\n`);
    // The host's phases can favour one version differently (LOG.md, eleventh round).
    const phases = byPhase(pairs, (p) => p.b / p.a);
    const show = (p) => (p.count > 0 ? `${p.ratios.median.toFixed(3)} (${p.count})` : '-');
    process.stdout.write(`B/A by phase: vCPUs sharing a cache ${show(phases.near)}, apart ${show(phases.far)}, changing ${phases.mixed}\n`);
  } finally {
    for (const side of sides) side.close();
    await model.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`ab: ${err.message}\n`);
  process.exit(1);
});
