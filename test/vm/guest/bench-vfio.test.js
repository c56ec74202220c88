'use strict';

// Forwarding through VFIO against forwarding through sysfs and physical addresses, side by
// side in one guest (the IOMMU in passthrough for the sysfs path: iommu=pt), as a benchmark:
// not part of `npm test` (test/vm/vm.test.js leaves bench-* out). Run it with
//   node test/vm/run.js bench-vfio igb-vfio
// Port 0 sends as fast as it can, `ixy forward 1 2` (a child process) forwards, port 3
// counts what arrives over a steady window. Ports 1 and 2 alternate between vfio-pci (the
// forwarder runs as user 1000) and no driver (it runs as root through sysfs). The guest has
// one vCPU under TCG: the figure is the ratio, not the rates.
const fs = require('fs');
const ixy = require('../../../lib');
const { PacketBatch } = require('../../../lib/memory/batch');
const topology = require('./topology');
const { Generator, spawnIxy } = require('./traffic');

const ports = topology.nics(['igb-vfio']);
const addr = (i) => ports[i].address;
const ROUNDS = 5;
const WARM_MS = 5000;
const WINDOW_MS = 10000;

const tick = () => new Promise((r) => setImmediate(r));

// Frames per second at port 3 while `ixy forward 1 2` runs with spawn options `as`.
async function measure(source, sink, as) {
  const gen = new Generator({ size: 64, srcPort: 4020, src: ports[0].mac });
  const batch = new PacketBatch(64);
  const { child, exited, said } = spawnIxy(['forward', addr(1), addr(2), '--idle', 'spin'], as);
  let count = 0;
  const drain = () => {
    sink.rxBatch(0, batch);
    count += batch.count;
    batch.freeFrom(0);
  };
  try {
    // Quiet until the forwarder is up (the guest has one vCPU to share with it), then
    // traffic until its first frames come through (anything older is not counted).
    const deadline = Date.now() + 120000;
    while (!/forwarding/.test(said())) {
      if (Date.now() > deadline) throw new Error(`the forwarder did not start; it said: ${said().trim()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    drain();
    count = 0;
    while (count === 0) {
      if (Date.now() > deadline) throw new Error(`nothing forwarded; the forwarder said: ${said().trim()}`);
      gen.send(source.txQueues[0], 32);
      drain();
      await tick();
    }
    const warmUntil = Date.now() + WARM_MS;
    while (Date.now() < warmUntil) {
      gen.send(source.txQueues[0], 32);
      drain();
      await tick();
    }
    count = 0;
    const start = Date.now();
    while (Date.now() - start < WINDOW_MS) {
      gen.send(source.txQueues[0], 32);
      drain();
      await tick();
    }
    if (count === 0) throw new Error(`nothing forwarded in the window; the forwarder said: ${said().trim()}`);
    return count / ((Date.now() - start) / 1000);
  } finally {
    child.kill('SIGINT');
    await exited;
    gen.close();
  }
}

// The guest has no igb module for `ixy unbind` to hand the port to: leave it unbound.
function releaseFromVfio(address) {
  const dev = `/sys/bus/pci/devices/${address}`;
  fs.writeFileSync(`${dev}/driver_override`, '\n');
  if (fs.existsSync(`${dev}/driver`)) fs.writeFileSync(`${dev}/driver/unbind`, address);
}

// A new binding makes a new /dev/vfio/N, root's: give it to the user again (init.sh did
// the first time).
function grant(group) {
  fs.chownSync(`/dev/vfio/${group}`, 1000, 1000);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

describe('forwarding through VFIO and through sysfs, side by side', function () {
  this.timeout(30 * 60 * 1000);

  it(`measures ${ROUNDS} rounds of each, alternating`, async function () {
    const source = await ixy.open(addr(0));
    const sink = await ixy.open(addr(3));
    const rates = { vfio: [], sysfs: [] };
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const mode of ['vfio', 'sysfs']) {
          for (const i of [1, 2]) {
            if (mode === 'vfio') grant(ixy.bind(addr(i)).iommuGroup);
            else releaseFromVfio(addr(i));
          }
          const as = mode === 'vfio' ? { uid: 1000, gid: 1000 } : {};
          rates[mode].push(await measure(source, sink, as));
          console.log(`@@ixy bench ${mode} round ${round}: ${Math.round(rates[mode][round])} frames/s`);
        }
      }
    } finally {
      source.close();
      sink.close();
    }
    const ratio = median(rates.vfio) / median(rates.sysfs);
    console.log(`@@ixy data ${JSON.stringify({ bench: 'vfio-vs-sysfs', rates, ratio })}`);
  });
});
