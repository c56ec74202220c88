'use strict';

// Multiqueue and RSS of the virtio driver against QEMU's virtio-net (topology.js,
// 'virtio-rss'): port 1 sends many UDP and TCP flows to port 0, whose 4 RX queues QEMU
// fills by its RSS, with hash reports. Every flow must stay on one queue and in order,
// and each frame's reported hash and its queue must be what the test's own Toeplitz
// (test/support/rss.js) and the indirection table the driver documents (entry i names
// queue i % 4 of 128) say. Port 4 has RSS without hash reports (the queue alone is
// checked), port 2 is a legacy device with multiqueue, which has no RSS (QEMU's TAP
// spreads the flows), port 3 a legacy device without multiqueue.
const assert = require('assert');
const ixy = require('../../../lib');
const packet = require('../../../lib/packet');
const { Mempool } = require('../../../lib/memory/mempool');
const { PacketBatch } = require('../../../lib/memory/batch');
const { MS_KEY, hashOf } = require('../../support/rss');
const topology = require('./topology');

const ports = topology.nics(['virtio-rss']);
const QUEUES = 4;
const FLOWS = 48;
const PER_FLOW = 4;
const SIZE = 96;
const TABLE = 128;
// Frames in flight at most: below the smallest RX ring (128 chains), so that QEMU never
// holds a frame back for want of buffers (test/vm/guest/nic-tests.js says why that matters).
const WINDOW = 48;
const TIMEOUT_MS = 120000;
const MARK = 0x49585952; // 'IXYR': a frame this test sent, then flow id and sequence number

// Flow n's tuple; TCP flows take other tuples than the UDP flows of the same n.
function flowOf(n, protocol) {
  const f = protocol === packet.IPPROTO_TCP ? n + 100 : n;
  return {
    src: `10.${1 + (f % 7)}.${f}.${1 + (f % 3)}`,
    dst: `192.168.${f % 5}.${2 + f}`,
    sport: 1024 + 37 * f,
    dport: 5000 + 11 * f,
    protocol,
  };
}

const put32 = (b, at, v) => { b[at] = v >>> 24; b[at + 1] = (v >>> 16) & 0xff; b[at + 2] = (v >>> 8) & 0xff; b[at + 3] = v & 0xff; };
const get32 = (b, at) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
const payloadAt = (protocol) => packet.ETH_HEADER + packet.IPV4_HEADER + (protocol === packet.IPPROTO_TCP ? packet.TCP_HEADER : packet.UDP_HEADER);

// Frame `seq` of flow `id`: Ethernet, IPv4, TCP (ACK|PSH) or UDP, then MARK, id, seq and a
// pattern, with valid IPv4 and TCP/UDP checksums.
function writeFlowFrame(b, flow, id, seq, dst, src) {
  const l3 = packet.writeEthernetHeader(b, dst, src);
  packet.writeIpv4Header(b, l3, { srcIp: flow.src, dstIp: flow.dst, protocol: flow.protocol, totalLength: SIZE - l3 });
  const l4 = l3 + packet.IPV4_HEADER;
  if (flow.protocol === packet.IPPROTO_TCP) {
    packet.writeTcpHeader(b, l4, { srcPort: flow.sport, dstPort: flow.dport, seq: 1000 * seq, flags: packet.TCP_ACK | packet.TCP_PSH });
  } else {
    packet.writeUdpHeader(b, l4, flow.sport, flow.dport, SIZE - l4);
  }
  const p = payloadAt(flow.protocol);
  put32(b, p, MARK);
  put32(b, p + 4, id);
  put32(b, p + 8, seq);
  for (let i = p + 12; i < SIZE; i++) b[i] = i & 0xff;
  packet.writeL4Checksum(b, l3);
}

// Sends PER_FLOW frames of every flow (interleaved) from `tx` TX queue 0 to `rx`, polling
// all of rx's RX queues, with at most WINDOW frames in flight. Returns per flow the queues
// its frames came on, and what went wrong. hashes: the device reports each frame's hash,
// which must be the Toeplitz hash (else 0); table: the queue must be the table's entry.
async function sendFlows(tx, txMac, rx, rxMac, flows, { hashes, table }) {
  const pool = new Mempool({ entries: 1024, bufferSize: 2048 });
  const out = new PacketBatch(32, pool);
  const batch = new PacketBatch(64, null, { hashes: true });
  const total = flows.length * PER_FLOW;
  const seen = flows.map(() => ({ queues: new Set(), next: 0 }));
  const queues = rx.rxQueues.length;
  const perQueue = new Array(queues).fill(0);
  const problems = [];
  let sent = 0;
  let received = 0;
  const take = (q) => {
    rx.rxBatch(q, batch);
    for (let i = 0; i < batch.count; i++) {
      received++;
      perQueue[q]++;
      const b = batch.data(i);
      const p = payloadAt(b[23]);
      if (get32(b, p) !== MARK) {
        problems.push(`queue ${q}: a frame the test did not send (${batch.lengths[i]} bytes, ethertype ${b[12].toString(16)}${b[13].toString(16)})`);
        continue;
      }
      const id = get32(b, p + 4);
      const seq = get32(b, p + 8);
      const flow = flows[id];
      const rec = seen[id];
      rec.queues.add(q);
      if (seq !== rec.next) problems.push(`flow ${id}: frame ${seq} came after frame ${rec.next - 1}`);
      rec.next = seq + 1;
      const hash = hashOf(MS_KEY, flow.src, flow.dst, flow.sport, flow.dport);
      if (hashes && batch.hashes[i] !== hash) problems.push(`flow ${id} frame ${seq}: QEMU reported hash ${batch.hashes[i].toString(16)}, Toeplitz says ${hash.toString(16)}`);
      if (!hashes && batch.hashes[i] !== 0) problems.push(`flow ${id} frame ${seq}: hash ${batch.hashes[i]} without hash reports`);
      if (table && q !== (hash & (TABLE - 1)) % queues) problems.push(`flow ${id} frame ${seq}: on queue ${q}, the table names ${(hash & (TABLE - 1)) % queues} for hash ${hash.toString(16)}`);
    }
    batch.freeFrom(0);
  };
  try {
    const deadline = Date.now() + TIMEOUT_MS;
    while (received < total && Date.now() < deadline) {
      const want = Math.min(total - sent, WINDOW - (sent - received), out.capacity);
      if (want > 0) {
        const got = pool.allocMany(out.ids, want);
        for (let i = 0; i < got; i++) {
          const n = sent + i;
          const id = n % flows.length;
          writeFlowFrame(pool.buffers[out.ids[i]], flows[id], id, Math.floor(n / flows.length), rxMac, txMac);
          out.lengths[i] = SIZE;
        }
        out.count = got;
        const s = tx.txBatch(0, out);
        out.freeFrom(s);
        sent += s;
      }
      for (let q = 0; q < queues; q++) take(q);
      await new Promise((r) => setImmediate(r));
    }
    // A little longer: anything more that arrives is a problem.
    const until = Date.now() + 300;
    while (Date.now() < until) {
      for (let q = 0; q < queues; q++) take(q);
      await new Promise((r) => setTimeout(r, 10));
    }
    return { received, total, seen, perQueue, problems };
  } finally {
    tx.stop(); // its TX ring may hold buffers of `pool`: stopped and reclaimed before the pool goes
    tx.close();
    pool.close();
  }
}

describe('virtio-rss (virtio) multiqueue and RSS against QEMU\'s virtio-net', function () {
  const addr = (i) => ports[i].address;

  // [flows, protocol (null: both), port, RX queues, what else]
  const cases = [
    ['UDP', packet.IPPROTO_UDP, 0, QUEUES, 'the reported hash the test\'s Toeplitz'],
    ['TCP', packet.IPPROTO_TCP, 0, QUEUES, 'the reported hash the test\'s Toeplitz'],
    ['UDP and TCP', null, 4, QUEUES, 'without hash reports'],
    ['UDP and TCP', null, 0, 2, `the table over 2 of ${QUEUES} queue pairs (txQueues ${QUEUES})`],
  ];
  for (const [name, protocol, port, rxQueues, how] of cases) {
    it(`spreads ${FLOWS} ${name} flows over ${rxQueues} RX queues as QEMU's RSS hashes them (port ${port}): one queue per flow, in order, ${how}`, async function () {
      const hashes = port === 0;
      const flows = Array.from({ length: FLOWS }, (_, f) => flowOf(f, protocol || (f % 2 ? packet.IPPROTO_TCP : packet.IPPROTO_UDP)));
      const rx = await ixy.open(addr(port), { rxQueues, txQueues: QUEUES });
      try {
        assert.strictEqual(rx.rxQueues.length, rxQueues);
        assert.strictEqual(rx.txQueues.length, QUEUES);
        const tx = await ixy.open(addr(1));
        const r = await sendFlows(tx, ports[1].mac, rx, ports[port].mac, flows, { hashes, table: true });
        assert.deepStrictEqual(r.problems.slice(0, 10), []);
        assert.strictEqual(r.received, r.total, 'frames received');
        r.seen.forEach((s, f) => assert.strictEqual(s.queues.size, 1, `flow ${f} came on queues ${[...s.queues]}`));
        // The flows were chosen so that the table spreads them over every queue.
        const expected = new Array(rxQueues).fill(0);
        for (const flow of flows) expected[(hashOf(MS_KEY, flow.src, flow.dst, flow.sport, flow.dport) & (TABLE - 1)) % rxQueues] += PER_FLOW;
        assert.ok(expected.every((n) => n > 0), `the test's flows miss a queue: ${expected}`);
        assert.deepStrictEqual(r.perQueue, expected, 'frames per queue');
        assert.deepStrictEqual(rx.stats().rxQueues.map((q) => q.packets), expected, 'stats().rxQueues');
      } finally {
        rx.close();
      }
    });
  }

  it('sends on each of 4 TX queues', async function () {
    const a = await ixy.open(addr(0), { rxQueues: QUEUES, txQueues: QUEUES });
    const b = await ixy.open(addr(1));
    const pool = new Mempool({ entries: 1024, bufferSize: 2048 });
    try {
      const out = new PacketBatch(8, pool);
      const flows = Array.from({ length: QUEUES }, (_, q) => flowOf(q, packet.IPPROTO_UDP));
      for (let q = 0; q < QUEUES; q++) {
        const got = pool.allocMany(out.ids, 8);
        for (let i = 0; i < got; i++) {
          writeFlowFrame(pool.buffers[out.ids[i]], flows[q], q, i, ports[1].mac, ports[0].mac);
          out.lengths[i] = SIZE;
        }
        out.count = got;
        assert.strictEqual(a.txBatch(q, out), 8, `frames queue ${q} took`);
      }
      const batch = new PacketBatch(64);
      const next = new Array(QUEUES).fill(0);
      const deadline = Date.now() + TIMEOUT_MS;
      let received = 0;
      while (received < 8 * QUEUES && Date.now() < deadline) {
        b.rxBatch(0, batch);
        for (let i = 0; i < batch.count; i++) {
          const d = batch.data(i);
          const p = payloadAt(d[23]);
          assert.strictEqual(get32(d, p), MARK, 'a frame the test sent');
          const q = get32(d, p + 4);
          assert.strictEqual(get32(d, p + 8), next[q]++, `order of the frames sent on queue ${q}`);
          received++;
        }
        batch.freeFrom(0);
        await new Promise((r) => setImmediate(r));
      }
      assert.deepStrictEqual(next, new Array(QUEUES).fill(8), 'frames received per TX queue');
      assert.deepStrictEqual(a.stats().txQueues.map((q) => q.packets), new Array(QUEUES).fill(8), 'stats().txQueues');
    } finally {
      a.stop();
      a.close();
      b.close();
      pool.close();
    }
  });

  it('keeps each flow on one queue with multiqueue but no RSS (a legacy device; the TAP steers), without hashes', async function () {
    const flows = Array.from({ length: FLOWS }, (_, f) => flowOf(f, f % 2 ? packet.IPPROTO_TCP : packet.IPPROTO_UDP));
    const rx = await ixy.open(addr(2), { rxQueues: QUEUES, txQueues: QUEUES });
    try {
      const tx = await ixy.open(addr(1));
      const r = await sendFlows(tx, ports[1].mac, rx, ports[2].mac, flows, { hashes: false, table: false });
      assert.deepStrictEqual(r.problems.slice(0, 10), []);
      assert.strictEqual(r.received, r.total, 'frames received');
      r.seen.forEach((s, f) => assert.strictEqual(s.queues.size, 1, `flow ${f} came on queues ${[...s.queues]}`));
      assert.ok(r.perQueue.filter((n) => n > 0).length > 1, `every flow on one queue: ${r.perQueue}`);
    } finally {
      rx.close();
    }
  });

  it('refuses more queues than the device has, with one line and a code, and leaves the device free', async function () {
    const oneLine = (code, pattern) => (err) => err.code === code && pattern.test(err.message) && !err.message.includes('\n');
    await assert.rejects(ixy.open(addr(3), { rxQueues: QUEUES }), oneLine('EUNSUPPORTED', /offers no multiqueue/));
    await assert.rejects(ixy.open(addr(0), { rxQueues: 2 * QUEUES }), oneLine('EUNSUPPORTED', /has 4 queue pairs/));
    await assert.rejects(ixy.open(addr(0), { rxQueues: 1.5 }), oneLine('EINVAL', /rxQueues must be an integer/));
    for (const i of [0, 3]) (await ixy.open(addr(i))).close();
  });
});
