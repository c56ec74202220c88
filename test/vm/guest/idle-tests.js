'use strict';

// idle 'interrupt' through VFIO (lib/host/interrupts.js, lib/device/idle.js): a loop with nothing to
// do sleeps in the event loop until the NIC's receive interrupt, and every frame that comes
// afterwards arrives. Ports 0-1 of a kind are cabled together. The CPU bound is coarse (a
// loop that spins uses a whole core, one that sleeps next to nothing); the guest prints the
// measured share for the record.
const assert = require('assert');
const ixy = require('../../../lib');
const { PacketBatch } = require('../../../lib/memory/batch');
const topology = require('./topology');
const { Generator, Checker, spawnIxy } = require('./traffic');
const { cpuShare } = require('../../support/helpers');

const IDLE_CPU_BOUND = 0.3; // of one core
const IDLE_MS = 3000;
const BURSTS = 10;
const BURST = 10;
const TIMEOUT_MS = 120000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The lowest CPU share of up to three IDLE_MS windows, stopping at the first under the
// bound: a loop that sleeps gets there once its start-up work is done (under TCG, on a
// loaded host, that may take seconds); one that spins never does.
async function idleShare(pid) {
  let lowest = Infinity;
  for (let i = 0; i < 3 && lowest >= IDLE_CPU_BOUND; i++) lowest = Math.min(lowest, await cpuShare(() => sleep(IDLE_MS), pid));
  return lowest;
}

function idleTests(kind) {
  const ports = topology.nics([kind]);
  const addr = (i) => ports[i].address;

  describe(`${kind}: idle 'interrupt'`, function () {
    it(`receive() sleeps until the NIC interrupts, and takes every frame of ${BURSTS} bursts after idleness`, async function () {
      const a = await ixy.open(addr(0));
      const b = await ixy.open(addr(1));
      const spec = { size: 100, srcPort: 4030, src: ports[0].mac };
      const gen = new Generator(spec);
      const checker = new Checker(spec);
      const iterator = b.receive(0, { idle: 'interrupt' });
      const consumer = (async () => {
        for await (const batch of iterator) {
          for (let i = 0; i < batch.count; i++) checker.check(batch.data(i), batch.lengths[i]);
          if (checker.received >= BURSTS * BURST) break;
        }
      })();
      try {
        await sleep(500); // the loop goes idle and arms the interrupt
        const line = b.interrupts();
        const before = line.count;
        const share = await idleShare();
        console.log(`@@ixy data ${JSON.stringify({ idleCpu: { kind, mode: 'interrupt', loop: 'receive()', share, interrupts: line.count - before } })}`);
        assert.ok(share < IDLE_CPU_BOUND, `an idle receive() loop used ${(100 * share).toFixed(1)}% of a core`);
        // Bursts far apart: the loop sleeps again between them, and each wakes it.
        for (let burst = 0; burst < BURSTS; burst++) {
          gen.send(a.txQueues[0], BURST);
          await sleep(300);
        }
        const deadline = Date.now() + TIMEOUT_MS;
        while (checker.received < BURSTS * BURST && Date.now() < deadline) await sleep(50);
        await consumer;
        assert.deepStrictEqual(checker.problems, []);
        assert.strictEqual(checker.received, BURSTS * BURST);
        assert.ok(line.count - before >= BURSTS / 2, `${line.count - before} interrupts for ${BURSTS} bursts`);
      } finally {
        await iterator.return();
        b.close();
        a.close();
        gen.close();
      }
    });

    it('ixy forward --idle interrupt sleeps while nothing comes, then forwards every frame', async function () {
      const source = await ixy.open(addr(0));
      const sink = await ixy.open(addr(3));
      const spec = { size: 100, srcPort: 4031, src: ports[0].mac };
      const gen = new Generator(spec);
      const checker = new Checker(spec);
      const batch = new PacketBatch(64);
      const { child, exited, said } = spawnIxy(['forward', addr(1), addr(2), '--idle', 'interrupt']);
      try {
        // Up once it prints its first rates line; then idle.
        const up = Date.now() + TIMEOUT_MS;
        while (!/RX:/.test(said()) && Date.now() < up) await sleep(100);
        assert.match(said(), /RX:/, `the forwarder did not start: ${said()}`);
        await sleep(500);
        const share = await idleShare(child.pid);
        console.log(`@@ixy data ${JSON.stringify({ idleCpu: { kind, mode: 'interrupt', loop: 'ixy forward', share } })}`);
        assert.ok(share < IDLE_CPU_BOUND, `an idle forwarder used ${(100 * share).toFixed(1)}% of a core`);
        const deadline = Date.now() + TIMEOUT_MS;
        while (checker.received < BURSTS * BURST && Date.now() < deadline) {
          if (gen.seq < BURSTS * BURST && gen.seq <= checker.received) gen.send(source.txQueues[0], BURST);
          sink.rxBatch(0, batch);
          checker.take(batch);
          await sleep(batch.count > 0 ? 0 : 50);
        }
        assert.deepStrictEqual(checker.problems, []);
        assert.strictEqual(checker.received, BURSTS * BURST, `frames at the sink; the forwarder said: ${said().trim().split('\n').slice(-2).join(' | ')}`);
      } finally {
        child.kill('SIGINT');
        await exited;
        source.close();
        sink.close();
        gen.close();
      }
    });
  });
}

module.exports = { idleTests };
