'use strict';

// The tests every driver gets in the guest, against QEMU's model of its NIC. Ports of a kind
// (see topology.js): 0-1 cabled together, 2-3 cabled together.
//   init: open, link, MAC as QEMU was told, promiscuous on and off, `ixy list`
//   pair: N frames generated on port 0 arrive, exactly and intact, on port 1
//   forward: port 0 is the traffic source, port 1 -> port 2 forwarded, port 3 checks
//   capture: `ixy pcap` (lib/apps/pcap.js) on port 1 records what port 0 sends; the file
//            goes to the host over the console for tshark
// Frame counts are small: under TCG JavaScript runs ~20x slower than on the host.
const assert = require('assert');
const fs = require('fs');
const ixy = require('../../../lib');
const { PacketBatch } = require('../../../lib/memory/batch');
const { forwardBatch } = require('../../../lib/apps/forward');
const topology = require('./topology');
const { readPcap } = require('../../../lib/pcap-file');
const { pcap } = require('../../../lib/apps/pcap');
const { Generator, Checker, reportSent, reportFile } = require('./traffic');

const FRAMES = 2000;
const TIMEOUT_MS = 120000;
// Frames in flight at most. QEMU queues a frame that finds no free receive buffer instead
// of dropping it, and a later frame can then overtake the queued one (its net layer
// delivers directly once buffers are back, before flushing the queue). A window well
// below the smallest RX ring (virtio: 128 chains) keeps every receive ring from running
// dry, so order is the driver's alone.
const WINDOW = 64;
const CAPTURED = 500;

function nicTests(kind, { driver, speed }) {
  const ports = topology.nics([kind]);
  const addr = (i) => ports[i].address;

  describe(`${kind} (${driver}) against QEMU's model`, function () {
    it('is listed with its driver, initialises, brings the link up and reads the MAC', async function () {
      const listed = ixy.listDevices().find((d) => d.address === addr(0));
      assert.ok(listed, `${addr(0)} not found`);
      assert.strictEqual(require('../../../lib/driver-table').driverFor(listed).name, driver);
      const dev = await ixy.open(addr(0));
      try {
        assert.strictEqual(dev.driver, driver);
        assert.strictEqual(dev.mac, ports[0].mac);
        if (speed) assert.strictEqual(dev.linkSpeed, speed);
        else assert.ok(dev.linkSpeed > 0);
        assert.strictEqual(dev.promiscuous, true);
        dev.promiscuous = false;
        assert.strictEqual(dev.promiscuous, false);
        dev.promiscuous = true;
      } finally {
        dev.close();
      }
    });

    it(`sends ${FRAMES} frames on one port and receives exactly those on its peer, intact`, async function () {
      const a = await ixy.open(addr(0));
      const b = await ixy.open(addr(1));
      const spec = { size: 128, srcPort: 4001, src: ports[0].mac };
      const gen = new Generator(spec);
      const checker = new Checker(spec);
      const batch = new PacketBatch(64);
      try {
        const deadline = Date.now() + TIMEOUT_MS;
        while (checker.received < FRAMES && Date.now() < deadline) {
          if (gen.seq < FRAMES) gen.send(a.txQueues[0], Math.min(FRAMES - gen.seq, WINDOW - (gen.seq - checker.received)));
          b.rxBatch(0, batch);
          checker.take(batch);
          if (batch.count === 0) await new Promise((r) => setImmediate(r));
        }
        await settle(() => { b.rxBatch(0, batch); checker.take(batch); });
        assert.deepStrictEqual(checker.problems, []);
        assert.strictEqual(checker.received, FRAMES, 'frames received');
        assert.strictEqual(a.stats().txPackets, FRAMES);
        assert.strictEqual(b.stats().rxPackets, FRAMES);
        checkHardwareCounters(a, 'tx', FRAMES);
        checkHardwareCounters(b, 'rx', FRAMES);
        reportSent(ports[0].name, `${FRAMES} generated frames`, { ...spec, count: a.stats().txPackets });
      } finally {
        a.close();
        b.close();
        gen.close();
      }
    });

    it(`forwards ${FRAMES} frames from a third port through two ports to a fourth, intact`, async function () {
      const devs = [];
      try {
        for (let i = 0; i < 4; i++) devs.push(await ixy.open(addr(i)));
        const [source, fwdIn, fwdOut, sink] = devs;
        const spec = { size: 300, srcPort: 4002, src: ports[0].mac };
        const gen = new Generator(spec);
        const checker = new Checker(spec);
        const fwdBatch = new PacketBatch(32);
        const sinkBatch = new PacketBatch(64);
        try {
          const deadline = Date.now() + TIMEOUT_MS;
          while (checker.received < FRAMES && Date.now() < deadline) {
            if (gen.seq < FRAMES) gen.send(source.txQueues[0], Math.min(FRAMES - gen.seq, WINDOW - (gen.seq - checker.received)));
            forwardBatch(fwdIn.rxQueues[0], fwdOut.txQueues[0], fwdBatch);
            sink.rxBatch(0, sinkBatch);
            checker.take(sinkBatch);
            await new Promise((r) => setImmediate(r));
          }
          await settle(() => { sink.rxBatch(0, sinkBatch); checker.take(sinkBatch); });
          assert.deepStrictEqual(checker.problems, []);
          assert.strictEqual(checker.received, FRAMES, 'frames at the sink');
          assert.strictEqual(fwdIn.stats().rxPackets, FRAMES);
          assert.strictEqual(fwdOut.stats().txPackets, FRAMES);
          reportSent(ports[2].name, `${FRAMES} forwarded frames`, { ...spec, count: fwdOut.stats().txPackets });
        } finally {
          for (const d of devs) d.stop(); // TX rings hold other ports' buffers: stop all first
          for (const d of devs) d.close();
          gen.close();
        }
      } finally {
        for (const d of devs) d.close();
      }
    });

    it(`captures ${CAPTURED} frames to a pcap file with ixy pcap, intact and in order`, async function () {
      const file = `/tmp/${kind}-capture.pcap`;
      const spec = { size: 128, srcPort: 4003, src: ports[0].mac };
      const a = await ixy.open(addr(0));
      const gen = new Generator(spec);
      const quiet = { write() {}, isTTY: false };
      let finished = false;
      const capture = pcap(addr(1), file, { count: CAPTURED, err: quiet }).finally(() => { finished = true; });
      try {
        // The file appears once port 1 is up; frames sent earlier would meet a device still
        // initialising.
        const deadline = Date.now() + TIMEOUT_MS;
        while (!fs.existsSync(file) && !finished) await new Promise((r) => setTimeout(r, 10));
        while (!finished && Date.now() < deadline) {
          if (gen.seq < CAPTURED) gen.send(a.txQueues[0], Math.min(16, CAPTURED - gen.seq));
          await new Promise((r) => setTimeout(r, 1));
        }
        const result = await capture;
        assert.strictEqual(result.frames, CAPTURED);
        const checker = new Checker(spec);
        for (const f of readPcap(file).frames) checker.check(f.data, f.data.length);
        assert.deepStrictEqual(checker.problems, []);
        assert.strictEqual(checker.received, CAPTURED);
        reportFile(`${kind}-capture.pcap`, fs.readFileSync(file), `ixy pcap's file of ${CAPTURED} frames`, { ...spec, count: CAPTURED });
      } finally {
        await capture.catch(() => {});
        a.close();
        gen.close();
      }
    });
  });
}

// Hardware counters, where the driver reads them (hardwareCounters()), must agree too.
function checkHardwareCounters(dev, direction, frames) {
  if (typeof dev.hardwareCounters !== 'function') return;
  const c = dev.hardwareCounters();
  assert.strictEqual(direction === 'tx' ? c.txPackets : c.rxPackets, frames, `hardware ${direction} packet counter`);
}

// Runs `poll` for a little while longer: anything extra that arrives is counted as a problem.
async function settle(poll) {
  const until = Date.now() + 300;
  while (Date.now() < until) {
    poll();
    await new Promise((r) => setTimeout(r, 10));
  }
}

module.exports = { nicTests };
