'use strict';

// One JavaScript benchmark run, in its own process (fresh JIT, fresh heap): the real
// `forward`, `forward --workers` (mode forward-workers) or `generate` app of lib/apps
// against the model named by IXY_PCI_ROOT.
//   node js-child.js '{"mode":"forward","batch":32,"warmup":1,"seconds":3,"addresses":[..]}'
// stdout: {"ready":true} once the ports are up, then one JSON line with what only this
// process can see: the heap allocated and the GCs during the measured window
// [ready + warmup, ready + warmup + seconds], and the app's own packet counts. The
// runner (run-one.js) takes the packet rate from the model over the same window.
const { heapWindow } = require('./heap-window');
const { tuneJit } = require('../lib/host/jit');
const { forward } = require('../lib/apps/forward');
const { generate } = require('../lib/apps/generate');
const { forwardWorkers } = require('../lib/apps/forward-workers');

const cfg = JSON.parse(process.argv[2]);
tuneJit(); // as the ixy command does (bin/ixy.js)

// The apps print one line when their ports are up; that is our "ready".
function readyOut(onReady) {
  let first = true;
  return {
    write() {
      if (first) {
        first = false;
        onReady();
      }
      return true;
    },
  };
}

async function main() {
  const heap = heapWindow();
  let window = null;
  const out = readyOut(() => {
    process.stdout.write('{"ready":true}\n');
    // The heap of worker threads is their own: the main thread's says nothing there.
    if (cfg.mode === 'forward-workers') return;
    // unref(): a run ended early (SIGTERM in side-by-side.js) exits without waiting for them.
    setTimeout(() => heap.start(), cfg.warmup * 1000).unref();
    setTimeout(() => { window = heap.stop(); }, (cfg.warmup + cfg.seconds) * 1000).unref();
  });
  // Run a little past the window so the runner's last sample falls inside the run.
  const seconds = cfg.warmup + cfg.seconds + 0.5;
  // The same RX and TX ring size as the C yardstick's --ring.
  const deviceOptions = { rxRingSize: cfg.ring, txRingSize: cfg.ring, idleRate: cfg.idleRate };
  // Benchmarks spin (lib/device/idle.js) unless the runner asks for another idle mode.
  // 'default': what the app does without an idle option (lib/device/idle.js bestIdle()).
  const idle = cfg.idleMode === 'default' ? undefined : cfg.idleMode || 'spin';
  const options = { batchSize: cfg.batch, seconds, out, deviceOptions, idle };
  let packets;
  if (cfg.mode === 'generate') {
    const r = await generate(cfg.addresses[0], options);
    packets = r.sent;
  } else if (cfg.mode === 'forward-workers') {
    const r = await forwardWorkers(cfg.addresses[0], cfg.addresses[1], { workers: cfg.workers, batchSize: cfg.batch, seconds, out, deviceOptions });
    packets = Object.values(r.stats).reduce((sum, s) => sum + s.txPackets, 0);
  } else {
    const r = await forward(cfg.addresses[0], cfg.addresses[1], options);
    packets = Object.values(r.stats).reduce((sum, s) => sum + s.txPackets, 0);
  }
  process.stdout.write(`${JSON.stringify({ done: true, packets, ...window })}\n`);
}

main().catch((err) => {
  process.stderr.write(`js-child: ${err.message}\n`);
  process.exit(1);
});
