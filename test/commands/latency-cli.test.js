'use strict';
// `ixy latency <tx-pci> <rx-pci>` between two cabled model ports: PTP probes timestamped by
// the 82599's IEEE 1588 registers (lib/intel/ixgbe/timesync.js) among load traffic spaced by the
// NIC's rate limiter. The model's truth for a cable is the two ports' latency (the sender's
// TX and the receiver's RX, native/model/README.md "The wire"): each probe's RX minus TX
// timestamp, less the two clocks' offset, is that within two periods of SYSTIM (one per
// clock's rounding to its 6.4 ns ticks).

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { readPcap } = require('../../lib/pcap-file');
const { runIxy, suiteTmpDir } = require('../support/helpers');
const { Model } = require('../../lib/model');

const TICK_NS = 6.4;

describe('ixy latency (device model)', function () {
  this.timeout(60000);
  const tmpDir = suiteTmpDir('ixy-latency-cli-');
  let model;
  beforeEach(async () => { model = await Model.start({ ports: 2, config: ['cable 0 1'] }); });
  afterEach(async () => { if (model) await model.stop(); });
  const latency = (args) => runIxy(['latency', model.addresses[0], model.addresses[1], ...args], { env: { IXY_PCI_ROOT: model.dir } });

  it('--json --samples: probes agree with the model\'s truth (the cable\'s latency, above 0); the load is spaced by the rate limiter', async () => {
    const samples = path.join(tmpDir(), 'samples.csv');
    const capture = path.join(tmpDir(), 'tx.pcap');
    await model.pcapOut(0, capture, { nanoseconds: true });
    const r = await latency(['--seconds', '1', '--rate', '50000', '--json', '--samples', samples]);
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.strictEqual(lines.length, 1, 'one JSON object and nothing else');
    const summary = JSON.parse(lines[0]);
    assert.deepStrictEqual(Object.keys(summary), ['count', 'p50', 'p99', 'p99.9', 'p99.99', 'max']);
    assert.ok(summary.count > 0);
    const [tx, rx] = await model.stats();
    const cableNs = tx.txLatencyNs + rx.rxLatencyNs;
    assert.ok(cableNs > 0 && summary.p50 > 0);
    const rows = fs.readFileSync(samples, 'utf8').trim().split('\n');
    assert.strictEqual(rows[0], 'probe,tx_ns,rx_ns,latency_ns');
    assert.strictEqual(rows.length - 1, summary.count);
    for (const row of rows.slice(1)) {
      const ns = Number(row.split(',')[3]);
      assert.ok(Math.abs(ns - cableNs) <= 2 * TICK_NS, `probe ${row}: ${ns} ns, the cable's truth is ${cableNs} ns`);
    }
    for (const key of ['p50', 'p99', 'p99.9', 'p99.99', 'max']) assert.ok(Math.abs(summary[key] - cableNs / 1000) <= 2 * TICK_NS / 1000, `${key} ${summary[key]} us`);
    assert.ok(tx.ptpTxStamped >= summary.count && rx.ptpRxStamped >= summary.count, 'every sample is a pair of NIC timestamps');
    assert.strictEqual(tx.txRateLimited, 1);
    assert.ok(rx.rxDelivered > tx.ptpTxStamped, 'load arrived besides the probes');
    await model.pcapOut(0, null);
    const load = readPcap(capture).frames.filter((f) => f.data.readUInt16BE(12) === 0x0800)
      .map((f) => BigInt(f.sec) * 1000000000n + BigInt(f.nsec));
    assert.ok(load.length > 1);
    for (let i = 1; i < load.length; i++) assert.ok(load[i] - load[i - 1] >= 19999n, `load frames ${load[i] - load[i - 1]} ns apart, 50 kpps spaces them 20 us`);
  });

  it('a probe that leaves after its timeout (a TX stall) lends its timestamp to no later probe', async () => {
    const samples = path.join(tmpDir(), 'stalled.csv');
    const r = await runIxy(['latency', model.addresses[0], model.addresses[1], '--seconds', '2', '--json', '--samples', samples], {
      env: { IXY_PCI_ROOT: model.dir },
      onStart: async () => {
        await model.waitFor(0, (s) => s.ptpTxStamped > 10, 20000);
        await model.stall(0, 300); // three probe timeouts long
      },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    const [tx, rx] = await model.stats();
    const cableNs = tx.txLatencyNs + rx.rxLatencyNs;
    const rows = fs.readFileSync(samples, 'utf8').trim().split('\n').slice(1);
    assert.ok(rows.length > 10);
    for (const row of rows) {
      const ns = Number(row.split(',')[3]);
      assert.ok(Math.abs(ns - cableNs) <= 2 * TICK_NS, `probe ${row}: ${ns} ns, the cable's truth is ${cableNs} ns`);
    }
  });

  it('prints the percentiles and a histogram on the terminal', async () => {
    const r = await latency(['--seconds', '1']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^latency 0000:ff:00\.0 -> 0000:ff:00\.1: PTP probes among no load\n/);
    assert.match(r.stdout, /\n\d+ probes, \d+ lost: p50 [-\d.]+ us, p99 [-\d.]+ us, p99\.9 [-\d.]+ us, p99\.99 [-\d.]+ us, max [-\d.]+ us\n/);
    assert.match(r.stdout, /\| #+ +\d+\n$/);
  });

  // Issue 46, 12: generate took '50k', latency only whole numbers.
  it('takes --rate as generate does (50k)', async () => {
    const r = await latency(['--seconds', '1', '--rate', '50k']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^latency .*: PTP probes among 50000 pps of 60-byte frames\n/);
    assert.strictEqual((await model.stats(0)).txRateLimited, 1);
  });

  // Issue 46, 9: with nothing coming back it printed "p50 0 us ... max 0 us" and exit 0.
  it('with no probe back says so, in words and in JSON (null, not 0), and exits 1', async () => {
    await model.stop();
    model = await Model.start({ ports: 2 }); // no cable: nothing comes back
    let r = await latency(['--seconds', '1']);
    assert.strictEqual(r.code, 1);
    assert.match(r.stdout, /\n0 probes returned, \d+ lost: no latency measured\n$/);
    assert.match(r.stderr, /^ixy: no probe came back: all \d+ sent timed out \(100 ms each\); is 0000:ff:00\.1 wired to 0000:ff:00\.0\?\n$/);
    r = await latency(['--seconds', '1', '--json']);
    assert.strictEqual(r.code, 1);
    const summary = JSON.parse(r.stdout);
    assert.strictEqual(summary.count, 0);
    assert.ok(summary.lost > 0);
    assert.strictEqual(summary.p50, null);
  });

  // Issue 46, 9: a removed port ended it with the error alone.
  it('a port removed mid-run ends it with the summary of the probes measured, then EDEVICELOST', async () => {
    const r = await runIxy(['latency', model.addresses[0], model.addresses[1], '--seconds', '0'], {
      env: { IXY_PCI_ROOT: model.dir },
      onStart: (child) => child.stdout.once('data', () => setTimeout(() => model.command('remove 1'), 1000)),
    });
    assert.strictEqual(r.code, 1);
    const measured = /\n(\d+) probes, \d+ lost: p50 /.exec(r.stdout);
    assert.ok(measured && Number(measured[1]) > 0, r.stdout);
    assert.match(r.stderr, /^ixy: .*\n$/);
    assert.match(r.stderr, /0000:ff:00\.1/);
  });

  it('refuses a rate the NIC cannot space, and one port twice, with one line', async () => {
    let r = await latency(['--seconds', '1', '--rate', '10']);
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /^ixy: the 82599's rate limiter spaces frames for 9\.77 Mb\/s to 10 Gb\/s, not 0\.005 Mb\/s\n$/);
    r = await runIxy(['latency', model.addresses[0], model.addresses[0]], { env: { IXY_PCI_ROOT: model.dir } });
    assert.strictEqual(r.code, 1);
    assert.strictEqual(r.stderr, 'ixy: latency needs two different ports\n');
  });
});
