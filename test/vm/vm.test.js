'use strict';

// The igb and virtio drivers against QEMU's own device models, inside a QEMU guest (TCG).
// One boot runs every guest test file (test/vm/guest/*.test.js) but the VFIO ones, a second
// boot (a guest with an IOMMU, tests as a normal user) runs those (*-vfio*). Each guest test
// becomes a test case here, and each record a guest test reports about what it sent becomes
// a host-side check of QEMU's filter-dump pcap of that NIC, decoded by tshark, or of what the
// guest kernel logged.
// Without QEMU (or IXY_VM=0) the tests are reported as pending, with the reason, loudly.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const Mocha = require('mocha');
const { execFileSync } = require('child_process');

const GUEST_DIR = path.join(__dirname, 'guest');

function guestTestNames(vfio) {
  return fs.readdirSync(GUEST_DIR).filter((f) => f.endsWith('.test.js')).map((f) => f.replace(/\.test\.js$/, ''))
    .filter((name) => !name.startsWith('bench-') && /-vfio\b/.test(name) === vfio).sort();
}

// Which NIC kinds the guest tests use: a guest test file named after a kind ("igb",
// "virtio-legacy") or starting with one ("igb-forward") needs that kind's ports; the
// longest such kind ("igb-vfio-safety" needs igb-vfio, not igb).
function kindsFor(names) {
  const kinds = Object.keys(require('./guest/topology').KINDS);
  const used = new Set();
  for (const n of names) {
    const matching = kinds.filter((kind) => n === kind || n.startsWith(`${kind}-`));
    if (matching.length > 0) used.add(matching.reduce((a, b) => (b.length > a.length ? b : a)));
  }
  return kinds.filter((kind) => used.has(kind));
}

function skipLoudly(suite, reason) {
  console.log(`\n  !!! QEMU guest tests SKIPPED: ${reason}\n`);
  suite.addTest(new Mocha.Test(`SKIPPED (QEMU guest tests): ${reason}`));
}

guestSuite('igb and virtio drivers in a QEMU guest', { vfio: false });
guestSuite('igb and virtio drivers through VFIO in a QEMU guest with an IOMMU, as a normal user', { vfio: true });

function guestSuite(title, { vfio }) {
  describe(title, function () {
    this.timeout(15 * 60 * 1000);
    let run = null;
    let skipped = null;

    before(async function () {
      const suite = this.test.parent;
      if (process.env.IXY_VM === '0') {
        skipped = 'IXY_VM=0';
        return skipLoudly(suite, skipped);
      }
      const { runGuest } = require('./run');
      const tests = guestTestNames(vfio);
      try {
        run = await runGuest({ tests, kinds: kindsFor(tests), iommu: vfio, timeoutMs: 10 * 60 * 1000 });
      } catch (err) {
        skipped = `cannot build or start the guest: ${err.message.split('\n')[0]}`;
        return skipLoudly(suite, skipped);
      }
      if (run.bootSeconds === null) {
        skipped = `QEMU did not boot the guest: ${run.console.trim().split('\n').slice(-3).join(' | ')}`;
        return skipLoudly(suite, skipped);
      }
      console.log(`      (guest: build ${run.buildSeconds.toFixed(1)} s, boot to power-off ${run.bootToOffSeconds.toFixed(1)} s; ${run.workDir})`);
      for (const t of run.tests) {
        const test = t.state === 'pending'
          ? new Mocha.Test(`guest: ${t.title}`)
          : new Mocha.Test(`guest: ${t.title}`, () => assert.fail(`in the guest: ${t.error}`));
        if (t.state === 'pass') test.fn = () => {};
        suite.addTest(test);
      }
      for (const record of run.data.filter((d) => d.pcapCheck)) {
        const title = record.nic
          ? `host: QEMU's pcap of ${record.nic} agrees with the driver: ${record.what}`
          : `host: tshark reads ${record.file} from the guest: ${record.what}`;
        suite.addTest(new Mocha.Test(title, () => checkPcap(record)));
      }
      for (const record of run.data.filter((d) => d.pcapBefore)) {
        suite.addTest(new Mocha.Test(`host: QEMU's pcap of ${record.nic}: ${record.what}`, () => checkPcapBefore(record)));
      }
      for (const record of run.data.filter((d) => d.dmesgCheck)) {
        suite.addTest(new Mocha.Test(`host: the guest kernel logged ${record.what}`, () => {
          const pattern = new RegExp(record.pattern);
          assert.ok(run.dmesg.some((line) => pattern.test(line)), `no kernel line matches ${pattern}:\n${run.dmesg.join('\n')}`);
        }));
      }
    });

    after(function () {
      if (run && !skipped && run.tests.every((t) => t.state !== 'fail')) fs.rmSync(run.workDir, { recursive: true, force: true });
    });

    it('boots the guest, runs every guest test file and powers off', function () {
      if (skipped) this.skip();
      assert.ok(!run.timedOut, `the guest timed out; console in ${run.workDir}/console.log`);
      assert.ok(run.done, `mocha in the guest did not finish; console in ${run.workDir}/console.log`);
      assert.strictEqual(run.exit, run.done.failures, 'guest mocha exit status');
      assert.ok(run.tests.length > 0);
    });

    it('runs the guest tests under the Node that runs this suite', function () {
      if (skipped) this.skip();
      assert.strictEqual(run.nodeVersion, process.version);
    });

    // A record { nic, what, src, srcPort, size, count } says the driver sent `count` frames of
    // `size` bytes out of `nic` from MAC `src` and UDP port `srcPort`, numbered 0, 1, ...
    // (lib/packet.js). tshark reads QEMU's record of that NIC's wire and must see exactly those.
    // A record with `file` instead of `nic` names a pcap file the guest wrote (ixy pcap).
    function checkPcap(record) {
      const file = record.nic ? run.nics.find((n) => n.name === record.nic).pcap : path.join(run.workDir, record.file);
      const rows = tsharkFieldsFiltered(file, `eth.src == ${record.src} && udp.srcport == ${record.srcPort}`);
      assert.strictEqual(rows.length, record.count, `frames from ${record.src} port ${record.srcPort} in ${file}`);
      rows.forEach((row, i) => {
        assert.strictEqual(Number(row[0]), record.size, `length of frame ${i}`);
        assert.strictEqual(parseInt(row[1].slice(0, 8), 16), i, `sequence number of frame ${i}`);
        assert.ok(row[2] === 'Good' || row[2] === '1', `IPv4 checksum of frame ${i}: ${row[2]}`);
      });
    }

    // A record { nic, src, srcPort, firstAfterKill } says frames numbered from firstAfterKill
    // on were sent after the process driving `nic` was killed: none may have left through it.
    function checkPcapBefore(record) {
      const file = run.nics.find((n) => n.name === record.nic).pcap;
      const seqs = tsharkFieldsFiltered(file, `eth.src == ${record.src} && udp.srcport == ${record.srcPort}`)
        .map((row) => parseInt(row[1].slice(0, 8), 16));
      assert.ok(seqs.length > 0, `no frame left ${record.nic} before the kill either`);
      const late = seqs.filter((s) => s >= record.firstAfterKill);
      assert.deepStrictEqual(late, [], `frames that left ${record.nic} after its process was killed`);
    }
  });
}

// tshark's frame length, UDP payload (hex) and IPv4 checksum verdict for frames matching `filter`.
function tsharkFieldsFiltered(file, filter) {
  const args = ['-r', file, '-o', 'ip.check_checksum:TRUE', '-Y', filter, '-T', 'fields', '-E', 'separator=|',
    '-e', 'frame.len', '-e', 'udp.payload', '-e', 'ip.checksum.status'];
  const out = execFileSync('tshark', args, { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  return out.split('\n').filter((l) => l.length > 0).map((l) => l.split('|'));
}
