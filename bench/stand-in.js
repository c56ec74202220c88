'use strict';

// The driver's own cost, without the model: the JavaScript forwarding loop against a NIC
// played in this process, so that no cache line travels between cores and the host's
// phases (see summary.js, byPhase()) do not enter. The C yardstick has the same mode
// (`c-forward --mode stand-in`, c-forward-init.h), and run.js gives the ratio of the two.
//   node stand-in.js '{"batch":32,"warmup":1,"seconds":3,"ring":512}'  (add "mode":"generate"
//   for the generator, as c-forward --mode stand-in-generate)
// stdout: {"ready":true}, then one JSON line: { packets, seconds, mpps, nsPerPacket,
// cpuNsPerPacket } (CPU ns: the process's CPU time over the window, which the host's
// other work does not move, as c-forward prints it).
//
// Two ports, each an RX and a TX queue on a register file in plain memory and a mempool
// of its own, as `ixy forward` opens them (rings of `ring`, RX descriptors given back in
// groups of ring/4); between two steps the stand-in NIC completes every RX descriptor up
// to RDT as a 60-byte frame (the buffer itself is not written) and marks every TX
// descriptor up to TDT done. Each step forwards one batch each way with the app's own
// forwardBatch(), touch included. The stand-in's own work is part of the figure, in both
// languages alike.
const os = require('os');
const { openPort, standInNic, closeQueues } = require('../lib/warm-up/stand-in');
const { PacketBatch } = require('../lib/memory/batch');
const { forwardBatch } = require('../lib/apps/forward');
const { Generator } = require('../lib/traffic/generator');
const { tuneJit } = require('../lib/host/jit');
const { runSlice, SLICE_MS } = require('../lib/loop');
const ixgbeLayout = require('../lib/intel/ixgbe/registers');

// One step of `ixy forward` between ports a and b, as forward() makes it (lib/apps/forward.js):
// a closure over the queues and the two batches, one per direction, so that TurboFan
// sees them as the constants it sees in forward()'s step; and the stand-in NIC's turn.
// Steps run in the apps' own slices (runSlice(), lib/loop), which TurboFan compiles
// with the step inlined: what is measured is the code `ixy forward` runs.
function forwardStep(a, b, batchSize) {
  const rxA = a.rx;
  const txA = a.tx;
  const rxB = b.rx;
  const txB = b.tx;
  const towardB = new PacketBatch(batchSize);
  const towardA = new PacketBatch(batchSize);
  return () => {
    standInNic(a);
    standInNic(b);
    forwardBatch(rxA, txB, towardB);
    forwardBatch(rxB, txA, towardA);
    return false;
  };
}

// Steps for about `ms` milliseconds in the slices runLoop() runs; returns the packets the
// TX queues sent.
function stepFor(txQueues, step, ms) {
  const sent = () => txQueues.reduce((n, tx) => n + tx.packets, 0);
  const before = sent();
  const pace = { stepsPerRead: 16, total: 0, slices: 0 };
  const end = performance.now() + ms;
  do runSlice(step, pace, SLICE_MS); while (performance.now() < end);
  return sent() - before;
}

// One step of `ixy generate` at full speed on `port`, made as generate()'s fullSpeedStep()
// makes it (lib/apps/generate.js): a closure over the generator, the queue and the batch;
// and the stand-in NIC's turn, completing every TX descriptor (c-forward --mode
// stand-in-generate).
function generateStep(port, gen, batch) {
  const tx = port.tx;
  const n = batch.capacity;
  return () => {
    standInNic(port, 60, 0);
    gen.send(tx, batch, n);
    return false;
  };
}

// Says ready, steps through the warm-up, then times cfg.seconds of steps and prints the
// result line (the top of this file).
function measure(txQueues, step, cfg) {
  process.stdout.write('{"ready":true}\n');
  stepFor(txQueues, step, cfg.warmup * 1000);
  const start = performance.now();
  const cpu = process.cpuUsage();
  const packets = stepFor(txQueues, step, cfg.seconds * 1000);
  const { user, system } = process.cpuUsage(cpu);
  const seconds = (performance.now() - start) / 1000;
  const mpps = packets / seconds / 1e6;
  process.stdout.write(`${JSON.stringify({ packets, seconds, mpps, nsPerPacket: 1000 / mpps, cpuNsPerPacket: ((user + system) * 1000) / packets })}\n`);
}

function measureGenerate(cfg) {
  const port = openPort(ixgbeLayout, cfg.ring);
  const gen = new Generator();
  measure([port.tx], generateStep(port, gen, new PacketBatch(cfg.batch)), cfg);
  closeQueues(port);
  port.pool.close();
  gen.close();
}

// `steps` steps in one slice of runSlice() (sliceMs 0: one round, as an idle poll makes).
function runSteps(step, steps) {
  if (steps > 0) runSlice(step, { stepsPerRead: steps, total: 0, slices: 0 }, 0);
}

// With "steps" in the configuration: a fixed number of steps instead of a time, for
// counting instructions (bench/instructions.js): "warmSteps" first, in 20 calls (so that
// the loop is optimised as a function, not only on stack replacement), then "steps" in
// one; prints {"counting":true} before the latter and { packets } after it. A call reads
// the clock twice (runSlice()), nothing per step. The counted call stands between two
// calls of os.loadavg(), which nothing else here makes: callgrind's
// --dump-before=uv_loadavg then counts it on its own.
function countSteps(cfg) {
  const ports = [openPort(ixgbeLayout, cfg.ring)];
  let run;
  if (cfg.mode === 'generate') {
    const [port] = ports;
    const gen = new Generator();
    const step = generateStep(port, gen, new PacketBatch(cfg.batch));
    run = (steps) => {
      runSteps(step, steps);
      return port.tx.packets;
    };
  } else {
    ports.push(openPort(ixgbeLayout, cfg.ring));
    const [a, b] = ports;
    const step = forwardStep(a, b, cfg.batch);
    run = (steps) => {
      runSteps(step, steps);
      return a.tx.packets + b.tx.packets;
    };
  }
  // Empty calls first: the line after the loop records its feedback in the interpreter,
  // or each optimised run() would deoptimise there and be compiled again, sometimes
  // inside the counted call.
  for (let k = 0; k < 100; k++) run(0);
  for (let k = 0; k < 20; k++) run(Math.floor(cfg.warmSteps / 20));
  const before = run(0);
  process.stdout.write('{"counting":true}\n'); // what V8 traces after this line happened in the counted steps
  os.loadavg(); // the markers (above)
  const after = run(cfg.steps);
  os.loadavg();
  process.stdout.write(`${JSON.stringify({ packets: after - before })}\n`);
  ports.forEach(closeQueues); // queues first: a TX ring may hold the other port's buffers
  for (const port of ports) port.pool.close();
}

function main() {
  tuneJit(); // as the ixy command does (bin/ixy.js)
  const cfg = JSON.parse(process.argv[2]);
  if (cfg.steps !== undefined) {
    countSteps(cfg);
    return;
  }
  if (cfg.mode === 'generate') {
    measureGenerate(cfg);
    return;
  }
  const a = openPort(ixgbeLayout, cfg.ring);
  const b = openPort(ixgbeLayout, cfg.ring);
  measure([a.tx, b.tx], forwardStep(a, b, cfg.batch), cfg);
  // Queues first: each TX ring holds the other port's buffers.
  closeQueues(a);
  closeQueues(b);
  a.pool.close();
  b.pool.close();
}

if (require.main === module) main();
