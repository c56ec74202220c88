'use strict';

// What a real 82599 demands of the driver, checked on the device model, which is strict
// in the same places (native/model/README.md): frames with wrong checksums are delivered,
// broken and split frames are not, drops and errors come from the NIC's own counters,
// link setup follows the part's media, bad TX input is refused, and a NIC that goes away,
// loses its link or stops sending is reported.
const assert = require('assert');
const path = require('path');
const ixy = require('../../lib');
const { Model } = require('../../lib/model');
const { sleep } = require('../../lib/host/register-access');
const { runIxy, tsharkFields, suiteTmpDir } = require('../support/helpers');

// Receives on dev's queue 0 until `done()` or `ms` pass; returns the frames received.
async function receiveFor(dev, ms, done = () => false) {
  const batch = new ixy.PacketBatch(64);
  const end = Date.now() + ms;
  let frames = 0;
  while (Date.now() < end && !done(frames)) {
    frames += dev.rxBatch(0, batch);
    batch.release();
    await sleep(1);
  }
  return frames;
}

describe('what a real 82599 demands, on models of other parts and of a lost NIC', function () {
  this.timeout(30000);

  afterEach(function () {
    delete process.env.IXY_PCI_ROOT;
  });

  it('keeps the link mode the NVM loaded on parts that are not SFP+ (XAUI, KX4): the link comes up', async function () {
    const model = await Model.start({ ports: 2, device: ['10fc', '10f7'] });
    process.env.IXY_PCI_ROOT = model.dir;
    try {
      for (const address of model.addresses) {
        const dev = await ixy.open(address, { linkTimeout: 2000 });
        try {
          assert.strictEqual(dev.linkSpeed, 10000);
        } finally {
          dev.close();
        }
      }
    } finally {
      await model.stop();
    }
  });

  it('reports a NIC that went away with EDEVICELOST and a non-zero exit', async function () {
    const model = await Model.start({ ports: 1 });
    try {
      const run = await runIxy(['generate', model.addresses[0], '--rate', '10000', '--seconds', '20'], {
        env: { IXY_PCI_ROOT: model.dir },
        onStart: async () => {
          await model.waitFor(0, (s) => s.txFrames > 0, 20000); // generating: gone while running
          await model.command('remove 0');
        },
      });
      assert.strictEqual(run.code, 1);
      assert.match(run.stderr, /^ixy: 0000:ff:00\.0 stopped answering \(its registers read all ones\): the NIC was removed, powered off or reset by someone else\n$/m);
      assert.doesNotMatch(run.stderr, /at .*\.js:\d+/, 'no stack trace');
    } finally {
      await model.stop();
    }
  });
});

// Issue 34, 11: a port that was removed, before or during a forward.
describe('a removed port', function () {
  this.timeout(30000);

  afterEach(function () {
    delete process.env.IXY_PCI_ROOT;
  });

  it('opening it fails at once with EDEVICELOST, not after an init wait with ETIMEDOUT', async function () {
    const model = await Model.start({ ports: 1 });
    process.env.IXY_PCI_ROOT = model.dir;
    try {
      await model.command('remove 0');
      await assert.rejects(ixy.open(model.addresses[0]), (err) => {
        assert.strictEqual(err.code, 'EDEVICELOST', err.message);
        assert.match(err.message, /^0000:ff:00\.0 does not answer \(its registers read all ones\): the NIC was removed or is powered off$/);
        return true;
      });
    } finally {
      await model.stop();
    }
  });

  it('forward: a port removed mid-run ends it with the totals of both ports, then EDEVICELOST', async function () {
    const model = await Model.start({ ports: 2, config: ['source 0 rate=20000'] });
    try {
      const run = await runIxy(['forward', ...model.addresses], {
        env: { IXY_PCI_ROOT: model.dir },
        onStart: (child) => child.stdout.once('data', async () => {
          await sleep(1500);
          await model.command('remove 1');
        }),
      });
      assert.strictEqual(run.code, 1, run.stderr);
      assert.match(run.stderr, /^ixy: 0000:ff:00\.1 stopped answering \(its registers read all ones\)/);
      assert.strictEqual(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stdout, /\[0000:ff:00\.0\] total RX [1-9]\d* packets/);
      assert.match(run.stdout, /\[0000:ff:00\.1\] total RX \d+ packets \d+ bytes, TX [1-9]\d* packets/);
    } finally {
      await model.stop();
    }
  });
});

describe('what a real 82599 demands, on the device model', function () {
  this.timeout(30000);
  const tmp = suiteTmpDir('ixy-82599-');
  let model;
  let env;

  before(async function () {
    model = await Model.start({ ports: 2 });
    env = { IXY_PCI_ROOT: model.dir };
    process.env.IXY_PCI_ROOT = model.dir;
  });

  after(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
  });

  afterEach(async function () {
    for (const port of [0, 1]) {
      await model.command(`source ${port} off`);
      await model.command(`sink ${port} off`);
    }
  });

  describe('receive', function () {
    it('delivers frames with wrong IPv4 and UDP checksums as sent, and reports them', async function () {
      const dev = await ixy.open(model.addresses[0]);
      try {
        const batch = new ixy.PacketBatch(32, null, { status: true });
        // Ten frames of each kind; every one must arrive with the checksum verdict given.
        // The model's default frames carry UDP checksum 0, which the 82599 flags (erratum).
        const kinds = [
          ['ipsum=bad udpsum=good', ixy.CHECKSUM_IP_BAD | ixy.CHECKSUM_L4_GOOD],
          ['udpsum=bad', ixy.CHECKSUM_IP_GOOD | ixy.CHECKSUM_L4_BAD],
          ['', ixy.CHECKSUM_IP_GOOD],
        ];
        for (const [options, expected] of kinds) {
          await model.command(`source 0 count=10 ${options}`);
          const flags = [];
          for (let k = 0; k < 500 && flags.length < 10; k++) {
            const n = dev.rxBatch(0, batch);
            for (let i = 0; i < n; i++) flags.push(batch.checksumOf(i));
            batch.release();
            if (n === 0) await sleep(2);
          }
          assert.deepStrictEqual(flags, new Array(10).fill(expected), `source ${options}`);
        }
        const s = dev.stats();
        assert.strictEqual(s.rxPackets, 30);
        assert.strictEqual(s.rxErrors, 0);
      } finally {
        dev.close();
      }
    });

    it('ixy pcap captures frames with bad checksums exactly as sent; tshark sees them bad', async function () {
      const file = path.join(tmp(), 'bad-checksums.pcap');
      // The source runs until afterEach turns it off: frames before the capture's open are lost.
      await model.command('source 0 rate=2000 ipsum=bad udpsum=bad');
      const run = await runIxy(['pcap', model.addresses[0], file, '20'], { env, timeoutMs: 20000 });
      assert.strictEqual(run.code, 0, run.stderr);
      const rows = tsharkFields(file, ['ip.checksum.status', 'udp.checksum.status']);
      assert.strictEqual(rows.length, 20);
      // tshark: status 0 (or "Bad") is a checksum it verified and found wrong.
      for (const [ip, udp] of rows) {
        assert.ok(ip === '0' || ip === 'Bad', `IPv4 checksum status ${ip}`);
        assert.ok(udp === '0' || udp === 'Bad', `UDP checksum status ${udp}`);
      }
    });

    it('counts frames with a bad FCS, runts and oversize frames in rxErrors and delivers none', async function () {
      const dev = await ixy.open(model.addresses[0]);
      try {
        await model.command('clear 0');
        // Each source command replaces the last: wait until each has offered all its frames.
        let offered = 0;
        for (const [count, options] of [[7, 'fcs=bad'], [5, 'size=40'], [3, 'size=1600']]) {
          await model.command(`source 0 count=${count} ${options}`);
          offered += count;
          await model.waitFor(0, (t) => t.rxOffered === offered);
        }
        const frames = await receiveFor(dev, 300);
        assert.strictEqual(frames, 0, 'no broken frame is delivered');
        const truth = await model.stats(0);
        const s = dev.stats();
        assert.strictEqual(s.rxPackets, 0);
        assert.strictEqual(s.rxErrors, truth.rxDropCrc + truth.rxDropRunt + truth.rxDropOversize);
        assert.ok(s.rxErrors > 0);
      } finally {
        dev.close();
      }
    });

    it('drops a frame that spans descriptors whole and counts it once (1 KiB buffers)', async function () {
      const dev = await ixy.open(model.addresses[0], { bufferSize: 1024 });
      try {
        await model.command('source 0 count=10 size=1500');
        await receiveFor(dev, 500);
        await model.command('source 0 count=10 size=600');
        const good = await receiveFor(dev, 1000, (got) => got >= 10);
        const s = dev.stats();
        assert.strictEqual(good, 10, 'the small frames after the split ones arrive');
        assert.strictEqual(s.rxPackets, 10, 'no piece of a split frame is delivered');
        assert.strictEqual(s.rxErrors, 10, 'each split frame counted once');
      } finally {
        dev.close();
      }
    });

    for (const [rxQueues, where] of [[1, 'MPC: frames wait in the packet buffer'], [2, 'QPRDC: DROP_EN']]) {
      it(`counts drops for want of room once, however often stats() is read (${rxQueues} RX queues, ${where})`, async function () {
        const dev = await ixy.open(model.addresses[0], { rxQueues, rxRingSize: 64 });
        const FRAMES = 12000;
        try {
          await model.command('clear 0');
          // More than the 512 KiB packet buffer holds (about 6,200 frames of 60 bytes).
          await model.command(`source 0 rate=200000 count=${FRAMES}`);
          // Nobody receives: the ring (and with one queue the packet buffer) fills, the rest is dropped.
          let truth;
          for (let k = 0; k < 100; k++) {
            await sleep(20);
            dev.stats();
            truth = await model.stats(0);
            if (truth.sourceBacklog === 0 && truth.rxOffered === FRAMES) break;
          }
          for (let k = 0; k < 5; k++) dev.stats();
          await sleep(20);
          const s = dev.stats();
          assert.ok(truth.rxDropNoDesc > 3000, `the model dropped ${truth.rxDropNoDesc}`);
          assert.strictEqual(s.rxMissed, truth.rxDropNoDesc);
        } finally {
          dev.close();
        }
      });
    }
  });

  describe('transmit', function () {
    it('refuses a batch above its capacity, frames too short or too long, and foreign buffers, sending nothing', async function () {
      const dev = await ixy.open(model.addresses[0]);
      const pool = new ixy.Mempool({ entries: 64, bufferSize: 2048 });
      try {
        const before = (await model.stats(0)).txFrames;
        const batch = new ixy.PacketBatch(4, pool);
        const fill = (length) => {
          batch.count = pool.allocMany(batch.ids, 4);
          for (let i = 0; i < batch.count; i++) {
            ixy.packet.writeUdpFrame(batch.data(i), { size: 60 });
            batch.lengths[i] = 60;
          }
          batch.lengths[2] = length;
        };
        const refused = (pattern) => {
          assert.throws(() => dev.txBatch(0, batch), (err) => err.code === 'EINVAL' && pattern.test(err.message));
          batch.freeFrom(0);
        };
        fill(16);
        refused(/frame 2 of the batch is 16 bytes; a frame must be 17\.\.2048/);
        fill(2049);
        refused(/2049 bytes/);
        fill(0);
        refused(/0 bytes/);
        fill(60);
        const id = batch.ids[1];
        batch.ids[1] = 64;
        assert.throws(() => dev.txBatch(0, batch), /buffer 64, which is not in the batch's pool/);
        batch.ids[1] = id;
        batch.freeFrom(0);
        fill(60);
        batch.count = 5;
        assert.throws(() => dev.txBatch(0, batch), /batch count 5 is above its capacity 4/);
        assert.throws(() => dev.txQueues[0].send(batch), /batch count 5 is above its capacity 4/, 'the queue itself refuses that too');
        batch.count = 4;
        batch.freeFrom(0);
        await sleep(20);
        assert.strictEqual((await model.stats(0)).txFrames, before, 'the NIC was given nothing');
        assert.strictEqual(dev.txQueues[0].inFlight, 0);
        fill(60);
        assert.strictEqual(dev.txBatch(0, batch), 4, 'a good batch goes out');
      } finally {
        dev.close();
        pool.close();
      }
    });
  });

  describe('options', function () {
    it('refuses a buffer size the NIC cannot receive into', async function () {
      for (const bufferSize of [512, 3000, 32768]) {
        await assert.rejects(ixy.open(model.addresses[0], { bufferSize }), (err) => err.code === 'EINVAL' && /bufferSize must be 1024, 2048, 4096, 8192 or 16384/.test(err.message));
      }
    });
  });

  describe('watching a running device', function () {
    it('prints link down and up as lines of their own while forwarding', async function () {
      const run = runIxy(['forward', ...model.addresses, '--seconds', '5'], {
        env,
        onStart: async () => {
          await model.waitFor(1, (s) => s.rxQueueActive && s.txQueuesActive > 0, 20000);
          await sleep(300);
          await model.link(1, false);
          await sleep(1500);
          await model.link(1, true);
        },
      });
      const { code, stdout, stderr } = await run;
      assert.strictEqual(code, 0, stderr);
      assert.match(stdout, new RegExp(`\\[${model.addresses[1].replace(/\./g, '\\.')}\\] link down\\n`));
      assert.match(stdout, new RegExp(`\\[${model.addresses[1].replace(/\./g, '\\.')}\\] link up at 10000 Mb/s\\n`));
    });

    it('finds a TX queue that stopped sending, resets it and sends again', async function () {
      let resumed = null;
      const run = await runIxy(['generate', model.addresses[0], '--rate', '20000', '--seconds', '14'], {
        env,
        onStart: async () => {
          await model.waitFor(0, (s) => s.txFrames > 0, 20000);
          await model.stall(0, 5000);
          await sleep(5100); // the stall is over; the queue was reset during it
          const a = (await model.stats(0)).txFrames;
          resumed = await model.waitFor(0, (s) => s.txFrames >= a + 2000, 6000).then(() => true, (err) => err.message);
        },
      });
      assert.strictEqual(run.code, 0, run.stderr);
      assert.match(run.stdout, /TX queue 0 hung \(frames pending, none sent for 2 s with the link up\): reset it, \d+ frames dropped/);
      assert.strictEqual(resumed, true, 'sending resumed after the reset');
    });
  });
});
