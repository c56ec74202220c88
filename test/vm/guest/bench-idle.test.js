'use strict';

// What each idle mode costs and how fast it wakes, on QEMU's NICs through VFIO (the only
// place with interrupts), as a benchmark: not part of `npm test` (test/vm/vm.test.js leaves
// bench-* out). Run it with
//   node test/vm/run.js bench-idle igb-vfio,virtio-vfio
// Per kind and mode, a receive() loop on port 1: its CPU over 10 s without traffic
// (process.cpuUsage), then 5 times: 1 s of idleness, one frame sent from port 0 in the same
// process, the time until the loop has it. Under TCG everything runs ~20 times slower than
// on hardware: compare the modes, not the figures with the host's.
const ixy = require('../../../lib');
const topology = require('./topology');
const { Generator } = require('./traffic');
const { cpuShare } = require('../../support/helpers');

const IDLE_MS = 10000;
const WAKES = 5;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

describe('idle modes through VFIO: CPU when idle, wake-up after idleness', function () {
  this.timeout(30 * 60 * 1000);

  for (const kind of ['igb-vfio', 'virtio-vfio']) {
    for (const idle of ['spin', 'backoff', 'interrupt']) {
      it(`${kind}, idle '${idle}'`, async function () {
        const ports = topology.nics([kind]);
        const a = await ixy.open(ports[0].address);
        const b = await ixy.open(ports[1].address);
        const gen = new Generator({ size: 64, srcPort: 4040, src: ports[0].mac });
        const iterator = b.receive(0, { idle });
        let arrived = null;
        const consumer = (async () => {
          for await (const batch of iterator) if (batch.count > 0 && arrived !== null) arrived(performance.now());
        })();
        try {
          await sleep(500);
          const share = await cpuShare(() => sleep(IDLE_MS));
          const wakeMs = [];
          for (let i = 0; i < WAKES; i++) {
            await sleep(1000);
            const got = new Promise((resolve) => { arrived = resolve; });
            const t0 = performance.now();
            gen.send(a.txQueues[0], 1);
            wakeMs.push((await got) - t0);
            arrived = null;
          }
          const record = { bench: 'idle', kind, idle, cpuShare: share, wakeMs, wakeMedianMs: median(wakeMs) };
          console.log(`@@ixy data ${JSON.stringify(record)}`);
        } finally {
          await iterator.return();
          await consumer;
          b.close();
          a.close();
          gen.close();
        }
      });
    }
  }
});
