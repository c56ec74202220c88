'use strict';
// `ixy latency` through a forwarder on the model: ports 0-1 and 2-3 cabled, `ixy forward`
// between 1 and 2, probes from 0 to 3. The model times the same probes itself (its latency
// truth knows PTP frames: RX write-back on port 1 to TX fetch on port 2), so the meter and
// the truth of one run can be held against each other: each probe's meter figure is its
// truth plus what lies outside the forwarder (both cables' port latencies, the probe's time
// on the line, the model's lag in handing it over), never less.

const assert = require('assert');
const { spawn } = require('child_process');
const path = require('path');
const { runIxy } = require('../support/helpers');
const { Model } = require('../../lib/model');
const { sleep } = require('../../lib/host/register-access');

const IXY = path.join(__dirname, '..', '..', 'bin', 'ixy.js');
const PROBE_WIRE_NS = (60 + 12) * 0.8; // the probe's bytes, FCS, preamble and SFD at 10 Gb/s
// A probe fetched from port 2's ring leaves when the line is free: behind at most a ring of
// 512 load frames a forwarder sent at once, 67.2 ns each.
const LINE_WAIT_NS = 512 * 67.2;

// The truth's value at rank r (1 = smallest) from its histogram: the low or high edge of
// the bucket that holds it, within min..max.
function truthAtRank(truth, r, edge) {
  let seen = 0;
  for (const [lowNs, widthNs, n] of truth.buckets) {
    seen += n;
    if (seen >= r) return Math.min(truth.maxNs, Math.max(truth.minNs, edge === 'low' ? lowNs : lowNs + widthNs));
  }
  return truth.maxNs;
}

describe('ixy latency through a forwarder (device model)', function () {
  this.timeout(90000);
  let model = null;
  let forward = null;
  beforeEach(async () => {
    model = await Model.start({ ports: 4, config: ['cable 0 1', 'cable 2 3', 'latency on'] });
  });
  afterEach(async () => {
    if (forward && forward.exitCode === null) forward.kill('SIGKILL');
    forward = null;
    if (model) await model.stop();
  });

  it('agrees with the model\'s truth of the same probes: above it by the two cables, never below', async () => {
    const env = { ...process.env, IXY_PCI_ROOT: model.dir };
    forward = spawn(process.execPath, [IXY, 'forward', model.addresses[1], model.addresses[2], '--seconds', '60'], { env, stdio: 'ignore' });
    await model.waitFor(1, (s) => s.rxQueueActive && s.linkUp, 20000);
    await model.waitFor(2, (s) => s.txQueuesActive > 0 && s.linkUp, 20000);
    await sleep(200);
    const r = await runIxy(['latency', model.addresses[0], model.addresses[3], '--rate', '100000', '--seconds', '2', '--json'], { env: { IXY_PCI_ROOT: model.dir } });
    assert.strictEqual(r.code, 0, r.stderr);
    const meter = JSON.parse(r.stdout);
    const truth = await model.latency(2);
    const stats = await model.stats();
    assert.ok(meter.count > 10, `${meter.count} probes`);
    assert.ok(truth.count >= meter.count, `the model timed ${truth.count} probes, the meter ${meter.count}`);
    assert.ok(meter.p50 > 0);
    // outside the forwarder: port 0's TX and port 1's RX latency, the probe arriving whole,
    // port 2's TX and port 3's RX latency
    const cables = stats[0].txLatencyNs + stats[1].rxLatencyNs + PROBE_WIRE_NS + stats[2].txLatencyNs + stats[3].rxLatencyNs;
    // The meter's probes are among the truth's (it gives up on one after 100 ms; the truth
    // has it), each above its truth by the cables and at most by the wait on port 2's line:
    // so its median lies between the truth's values at the median's rank, and at that rank
    // plus the probes the meter lost (bounds of the truth's ~3% buckets).
    const rank = Math.ceil(meter.count / 2);
    const lost = truth.count - meter.count;
    const meterNs = meter.p50 * 1000;
    const low = truthAtRank(truth, rank, 'low') + cables - 13; // 13: two 6.4 ns SYSTIM ticks
    const high = truthAtRank(truth, rank + lost, 'high') + cables + LINE_WAIT_NS;
    assert.ok(meterNs >= low, `meter p50 ${meterNs} ns, below the truth at its rank with the cables, ${low} ns`);
    assert.ok(meterNs <= high, `meter p50 ${meterNs} ns, above the truth at its rank + ${lost} lost with the cables, ${high} ns`);
  });
});
