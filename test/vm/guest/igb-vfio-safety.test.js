'use strict';

// What VFIO buys on a real machine, checked on QEMU's igb behind its emulated IOMMU, as the
// unprivileged user /init runs the tests as (init.sh):
//   - the process needs no root: no pagemap, DMA addresses are IOVAs the IOMMU maps;
//   - one owner per device (EBUSY in the same process and in another);
//   - a forwarder killed with SIGKILL leaves no DMA behind: the kernel resets the device,
//     no frame leaves after the kill (the host checks QEMU's pcap), and the device can be
//     opened again at once;
//   - a device writing to memory the IOMMU does not map faults (the kernel logs a DMAR
//     fault, the host checks) and the memory stays untouched.
const assert = require('assert');
const { spawnSync } = require('child_process');
const ixy = require('../../../lib');
const pci = require('../../../lib/host/pci');
const vfio = require('../../../lib/host/vfio');
const { PacketBatch } = require('../../../lib/memory/batch');
const topology = require('./topology');
const { Generator, Checker, spawnIxy, IXY } = require('./traffic');

const ports = topology.nics(['igb-vfio']);
const addr = (i) => ports[i].address;
const TIMEOUT_MS = 120000;

const tick = (ms = 0) => new Promise((r) => (ms ? setTimeout(r, ms) : setImmediate(r)));

describe('igb through VFIO: what the IOMMU and the kernel guarantee', function () {
  it('runs without root: the device is bound to vfio-pci and its DMA addresses are IOVAs', async function () {
    assert.notStrictEqual(process.getuid(), 0, 'the VFIO tests run as a normal user');
    assert.strictEqual(pci.boundDriver(addr(0)), 'vfio-pci');
    const dev = await ixy.open(addr(0));
    try {
      const memory = dev.pools[0].memory;
      assert.ok(memory.pagePhys[0] >= 2 ** 32, `IOVA ${memory.pagePhys[0]} (a physical address would need root)`);
      assert.strictEqual(memory.iommuMapped, true);
    } finally {
      dev.close();
    }
  });

  it('gives a device to one owner: a second open, here or in another process, gets EBUSY', async function () {
    const dev = await ixy.open(addr(0));
    try {
      await assert.rejects(ixy.open(addr(0)), (err) => err.code === 'EBUSY' && err.message.includes(String(process.pid)));
      const other = spawnSync(process.execPath, [IXY, 'pcap', addr(0), '/tmp/never.pcap', '1'], { encoding: 'utf8', timeout: TIMEOUT_MS });
      assert.notStrictEqual(other.status, 0);
      assert.match(other.stderr, new RegExp(`EBUSY|held by|${process.pid}`));
      assert.strictEqual(other.stderr.trim().split('\n').length, 1, `one line: ${other.stderr}`);
    } finally {
      dev.close();
    }
    const again = await ixy.open(addr(0));
    again.close();
  });

  it('stops a forwarder killed with SIGKILL: no frame leaves after the kill, and the port opens again at once', async function () {
    // Port 0 sends into port 1; the child forwards 1 -> 2; port 3 (cabled to 2) is the sink.
    const source = await ixy.open(addr(0));
    const sink = await ixy.open(addr(3));
    const spec = { size: 200, srcPort: 4010, src: ports[0].mac };
    const gen = new Generator(spec);
    const batch = new PacketBatch(64);
    let seen = 0;
    let lastSeq = -1;
    const drain = () => {
      sink.rxBatch(0, batch);
      for (let i = 0; i < batch.count; i++) lastSeq = ixy.packet.readSeq(batch.data(i));
      seen += batch.count;
      batch.freeFrom(0);
    };
    const { child, exited, said } = spawnIxy(['forward', addr(1), addr(2)]);
    try {
      // Until frames come through the forwarder, and a while longer.
      const deadline = Date.now() + TIMEOUT_MS;
      while (seen < 200 && Date.now() < deadline) {
        gen.send(source.txQueues[0], 8);
        drain();
        await tick(2);
      }
      assert.ok(seen >= 200, `the forwarder forwarded ${seen} frames; it said: ${said().trim().split('\n').slice(-3).join(' | ')}`);
      child.kill('SIGKILL');
      await exited;
      const firstAfterKill = gen.seq;
      // The port the dead process held is free at once: no lock, no VFIO group left open.
      const reopened = await ixy.open(addr(1));
      reopened.close();
      const seenAtKill = seen;
      for (let i = 0; i < 50; i++) {
        gen.send(source.txQueues[0], 8);
        drain();
        await tick(5);
      }
      assert.ok(lastSeq < firstAfterKill, `frame ${lastSeq} reached the sink though sent after the kill (from ${firstAfterKill})`);
      console.log(`@@ixy data ${JSON.stringify({ pcapBefore: true, nic: ports[2].name, src: spec.src, srcPort: spec.srcPort, firstAfterKill, what: `${seenAtKill} frames forwarded before SIGKILL, none of the ${gen.seq - firstAfterKill} sent after it` })}`);
    } finally {
      child.kill('SIGKILL');
      source.close();
      sink.close();
      gen.close();
    }
  });

  it('makes a write to memory the IOMMU does not map a fault, and the memory stays untouched', async function () {
    const a = await ixy.open(addr(0));
    const b = await ixy.open(addr(1));
    const spec = { size: 128, srcPort: 4011, src: ports[0].mac };
    const gen = new Generator(spec);
    const batch = new PacketBatch(64);
    try {
      // First the path works.
      const checker = new Checker(spec);
      const deadline = Date.now() + TIMEOUT_MS;
      while (checker.received < 16 && Date.now() < deadline) {
        if (gen.seq < 16) gen.send(a.txQueues[0], 16 - gen.seq);
        b.rxBatch(0, batch);
        checker.take(batch);
        await tick(1);
      }
      assert.strictEqual(checker.received, 16);
      // Then b's packet buffers leave the IOMMU (its RX descriptors still point at them),
      // marked so that any write by the device would show.
      const memory = b.pools[0].memory;
      vfio.untrack(memory);
      const bytes = new Uint8Array(memory.buffer);
      bytes.fill(0xa5);
      for (let i = 0; i < 8; i++) {
        gen.send(a.txQueues[0], 4);
        await tick(20);
      }
      await tick(500);
      assert.ok(bytes.every((v) => v === 0xa5), 'the device wrote into memory the IOMMU does not map');
      const device = addr(1).slice(5); // the kernel names it bus:slot.function
      console.log(`@@ixy data ${JSON.stringify({ dmesgCheck: true, pattern: `DMAR: \\[DMA Write.*${device.replace('.', '\\.')}`, what: `a DMAR fault for ${device}'s write into unmapped memory` })}`);
    } finally {
      // The frames already received were freed into b's pool: stop b before its pool goes.
      b.close();
      a.close();
      gen.close();
    }
  });
});
