'use strict';

// Every error a user can cause: one line on stderr, a non-zero exit, no stack trace, and
// nothing left behind (hugepages, hugetlbfs files). Plus the happy paths of list and demo.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const { Model } = require('../../lib/model');
const { IXY, assertForwardAccounts, runIxy, hugepageBytes, hugetlbfsFiles } = require('../support/helpers');
const { sleep } = require('../../lib/host/register-access');

// A failed run must say what is wrong in one stderr line, with no stack trace and a
// non-zero exit; returns that line.
function assertOneLineError(run, pattern) {
  assert.notStrictEqual(run.code, 0, `expected failure, got exit 0: ${run.stdout}`);
  const lines = run.stderr.trim().split('\n');
  assert.strictEqual(lines.length, 1, `expected one line on stderr, got:\n${run.stderr}`);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'stack trace printed');
  return lines[0];
}

async function failsWith(args, pattern, env = {}) {
  return assertOneLineError(await runIxy(args, { env }), pattern);
}

// Runs a command synchronously with NODE and IXY in its environment (for shell snippets).
function runVia(command, args, env) {
  const r = spawnSync(command, args, { env: { ...process.env, ...env, IXY, NODE: process.execPath }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Runs a shell snippet that ends with `ixy ...` in a private mount namespace, so that
// hugetlbfs can be unmounted or shrunk for this one process only.
function inMountNamespace(script, env) {
  return runVia('unshare', ['-m', 'sh', '-c', script], env);
}

describe('ixy command', function () {
  let model;
  let env;
  let hugepagesBefore;

  before(async function () {
    hugepagesBefore = hugepageBytes(); // this process's, not the machine's
    model = await Model.start({ ports: 2 });
    env = { IXY_PCI_ROOT: model.dir };
  });

  after(async function () {
    if (model) await model.stop();
  });

  it('rejects a malformed PCI address before touching any path', async function () {
    await failsWith(['forward', '../../etc', '0000:ff:00.1'], /not a PCI address/, env);
    await failsWith(['generate', '0000:FF:00.0'], /not a PCI address/, env);
  });

  it('reports a missing device', async function () {
    await failsWith(['generate', '0000:ff:00.7'], /no PCI device 0000:ff:00\.7/, env);
  });

  it('refuses a device it does not support, naming what it found', async function () {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-pci-'));
    try {
      const dev = path.join(root, '0000:00:05.0');
      fs.mkdirSync(dev);
      fs.writeFileSync(path.join(dev, 'vendor'), '0x8086\n'); // an e1000 (82540EM): not an ixy NIC
      fs.writeFileSync(path.join(dev, 'device'), '0x100e\n');
      fs.writeFileSync(path.join(dev, 'class'), '0x020000\n');
      const line = await failsWith(['generate', '0000:00:05.0'], /does not support/, { IXY_PCI_ROOT: root });
      assert.match(line, /8086:100e/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('rejects out-of-range batch and frame sizes', async function () {
    await failsWith(['forward', model.addresses[0], model.addresses[1], '--batch', '0'], /--batch must be 1\.\.512/, env);
    await failsWith(['forward', model.addresses[0], model.addresses[1], '--batch', '9999'], /--batch must be 1\.\.512/, env);
    await failsWith(['generate', model.addresses[0], '--size', '59'], /frame size must be 60\.\.1514/, env);
    await failsWith(['generate', model.addresses[0], '--size', 'big'], /frame size must be a whole number/, env);
  });

  it('--xdp-bind and --xdp-mode: a bad value, or a device that is no xdp: one, is one line', async function () {
    await failsWith(['pcap', model.addresses[0], '-', '--xdp-mode', 'skb'], /^ixy: option '--xdp-mode <mode>' argument 'skb' is invalid\. Allowed choices are auto, native, generic\./, env);
    await failsWith(['generate', model.addresses[0], '--xdp-bind', 'zero-copy'], /Allowed choices are auto, copy, zerocopy/, env);
    // A pcap file of one 60-byte frame, for replay.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-xdp-flags-')), 'one.pcap');
    const header = Buffer.from('d4c3b2a1020004000000000000000000ffff000001000000', 'hex');
    const record = Buffer.from('00000000000000003c0000003c000000', 'hex');
    fs.writeFileSync(file, Buffer.concat([header, record, Buffer.alloc(60)]));
    try {
      for (const args of [['forward', model.addresses[0], model.addresses[1]], ['generate', model.addresses[0]], ['replay', model.addresses[0], file], ['pcap', model.addresses[0], '-']]) {
        await failsWith([...args, '--xdp-mode', 'generic'], /^ixy: xdpMode \(--xdp-mode\) is an option of AF_XDP devices \(xdp:<interface>\), not of 0000:ff:00\.0, which ixy drives itself$/, env);
      }
      await failsWith(['forward', model.addresses[0], model.addresses[1], '--workers', '2', '--xdp-bind', 'copy'], /^ixy: mode \(--xdp-bind\) is an option of AF_XDP devices/, env);
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  // Issue 46, 12: both ran (a pacing only checked with a rate; any rate accepted).
  it('generate refuses an unknown --pacing and a --rate above the link, before the device', async function () {
    await failsWith(['generate', model.addresses[0], '--pacing', 'foo', '--count', '1'], /^ixy: pacing must be one of auto, nic, software, burst, got 'foo'/, env);
    await failsWith(['generate', model.addresses[0], '--rate', '100Gbit', '--count', '1'], /^ixy: rate '100Gbit' \(a string\) is 195312500 frames\/s of 60 bytes, above what a 10 Gb\/s link carries \(14880952\)/, env);
    await failsWith(['generate', model.addresses[0], '--rate', '14880953', '--count', '1'], /above what a 10 Gb\/s link carries/, env);
    const s = await model.stats(0);
    assert.strictEqual(s.dmaOwnerPid, 0, 'no device opened');
  });

  // setTimeout takes at most 2^31 - 1 ms: a longer --seconds warned and ended the run at once.
  it('--seconds past 24.8 days with --workers is a long run, not an instant one', async function () {
    for (const args of [['forward', ...model.addresses], ['pcap', model.addresses[0], '/dev/null']]) {
      let alive = false;
      const run = await runIxy([...args, '--workers', '1', '--seconds', '3000000'], {
        env,
        onStart: (child) => setTimeout(() => {
          alive = child.exitCode === null;
          child.kill('SIGINT');
        }, 2000),
      });
      assert.ok(alive, `${args[0]} ended by itself: ${run.stderr}`);
      assert.strictEqual(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stderr, /TimeoutOverflowWarning/);
    }
  });

  it('help shows each default once and says where 0 means no limit', function () {
    for (const command of ['forward', 'generate', 'pcap', 'demo']) {
      const help = execFileSync(process.execPath, [IXY, command, '--help'], { encoding: 'utf8' });
      // One entry per option or argument: its first line and the indented lines under it.
      const entries = help.split(/\n(?= {2}\S)/).map((e) => e.replace(/\s+/g, ' '));
      for (const entry of entries) {
        assert.ok((entry.match(/default/g) || []).length <= 1, `${command}: '${entry}' names a default twice`);
      }
      for (const name of ['--seconds', '--rate', '--count']) {
        const entry = entries.find((e) => e.includes(`${name} <`));
        if (entry) assert.match(entry, /\b0: /, `${command} ${name}: what 0 means`);
      }
    }
  });

  it('takes 0 for unlimited where the help says so', async function () {
    const run = await runIxy(['generate', model.addresses[0], '--rate', '0', '--count', '0', '--seconds', '1'], { env });
    assert.strictEqual(run.code, 0, run.stderr);
  });

  it('says so when the link does not come up in time', async function () {
    await model.link(0, false);
    try {
      await failsWith(['generate', model.addresses[0], '--link-timeout', '300', '--count', '1'], /did not come up/, env);
    } finally {
      await model.link(0, true);
    }
  });

  it('takes hugepages from the kernel (memfd_create) when /mnt/huge is not mounted', async function () {
    const run = inMountNamespace('umount /mnt/huge && exec "$NODE" "$IXY" generate 0000:ff:00.0 --count 1', env);
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stdout, /TX 1 packets/);
  });

  it('says how to fix running out of hugepages', async function () {
    // A hugetlbfs instance limited to 2 pages: the mempool (4 pages) cannot be had.
    const run = inMountNamespace('umount /mnt/huge && mount -t hugetlbfs -o size=4M nodev /mnt/huge && exec "$NODE" "$IXY" generate 0000:ff:00.0 --count 1', env);
    assertOneLineError(run, /not enough free hugepages.*setup-hugetlbfs\.sh/);
  });

  it('says it needs root', async function () {
    const run = runVia('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, IXY, 'generate', '0000:ff:00.0'], env);
    assertOneLineError(run, /needs root/);
  });

  it('lists the model\'s ports as supported 82599s', function () {
    const out = execFileSync(process.execPath, [IXY, 'list'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    for (const address of model.addresses) assert.match(out, new RegExp(`${address.replace(/\./g, '\\.')}\\s+8086:10fb\\s+\\S+\\s+ixgbe\\s+Intel 82599ES`));
  });

  it('stops forward cleanly on SIGINT with final totals', async function () {
    const run = await runIxy(['forward', ...model.addresses], {
      env,
      onStart: (child) => {
        child.stdout.once('data', () => setTimeout(() => child.kill('SIGINT'), 1500));
      },
    });
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stdout, /RX: +[\d.]+ [kM]?pps +[\d.]+ Mbit\/s \| TX: /);
    assert.match(run.stdout, /total RX \d+ packets/);
  });

  // Issue 34, 6: every frame the forwarder received is in its totals, sent or dropped, and
  // what it says it sent is what the NIC sent. Port 0 receives 20,000 frames/s, port 1 stops
  // taking TX descriptors for stallMs; SIGINT comes sigintAfterMs into the stall.
  async function forwardThroughStall(stallMs, sigintAfterMs) {
    const [a, b] = model.addresses;
    await model.clear(0);
    await model.clear(1);
    await model.source(0, { rate: 20000 });
    let run;
    try {
      run = await runIxy(['forward', a, b], {
        env,
        onStart: (child) => {
          child.stdout.once('data', async () => {
            await sleep(500);
            await model.stall(1, stallMs);
            await sleep(sigintAfterMs);
            child.kill('SIGINT');
          });
        },
      });
    } finally {
      await model.sourceOff(0);
    }
    await assertForwardAccounts(run, model, a, b);
    return run;
  }

  it('forward: the frames a reset after a TX hang dropped are in the totals', async function () {
    this.timeout(30000);
    // The hang is found 2 to 3 s into the stall; a stall of 6 s keeps the reset well inside
    // it, where the model takes no descriptor while the driver counts what it discards.
    const run = await forwardThroughStall(6000, 7500);
    assert.match(run.stdout, /TX queue 0 hung \(frames pending, none sent for 2 s with the link up\): reset it, [1-9]\d* frames dropped/);
    assert.match(run.stdout, /, [1-9]\d* unsent on the ring at a reset after a hang or at the stop\)/);
  });

  it('forward: SIGINT during a TX stall counts the frames still on the ring as dropped, not sent', async function () {
    this.timeout(30000);
    const run = await forwardThroughStall(10000, 1000);
    assert.match(run.stdout, /, [1-9]\d* unsent on the ring at a reset after a hang or at the stop\)/);
  });

  // Issue 34, 7: SIGINT and SIGTERM stop the command with its totals and exit 0 from its
  // start: here while it waits for a link that stays down (for a minute, were it not stopped).
  for (const [signal, command, args] of [['SIGINT', 'forward', []], ['SIGTERM', 'forward', []], ['SIGINT', 'generate', []], ['SIGINT', 'pcap', ['FILE']]]) {
    it(`${command}: ${signal} during the link wait ends it with its totals and exit 0`, async function () {
      this.timeout(60000);
      const file = path.join(os.tmpdir(), `ixy-linkwait-${process.pid}.pcap`);
      const ports = command === 'forward' ? model.addresses : [model.addresses[1]];
      await model.link(1, false);
      let run;
      try {
        run = await runIxy([command, ...ports, ...args.map((a) => (a === 'FILE' ? file : a)), '--link-timeout', '60000'], {
          env,
          timeoutMs: 30000,
          onStart: (child) => setTimeout(() => child.kill(signal), 1500),
        });
      } finally {
        await model.link(1, true);
      }
      assert.deepStrictEqual({ code: run.code, signal: run.signal }, { code: 0, signal: null }, run.stderr);
      const printed = command === 'pcap' ? run.stderr : run.stdout;
      for (const address of ports) assert.match(printed, new RegExp(`\\[${address.replace(/\./g, '\\.')}\\] total RX 0 packets 0 bytes, TX 0 packets 0 bytes, RX missed \\d+, TX dropped 0`));
      if (command === 'pcap') assert.ok(!fs.existsSync(file), 'a file for a capture that never began');
    });
  }

  it('forward: SIGINT the moment it says "forwarding" ends it with its totals and exit 0, every time', async function () {
    this.timeout(60000);
    for (let i = 0; i < 5; i++) {
      const run = await runIxy(['forward', ...model.addresses], { env, onStart: (child) => child.stdout.once('data', () => child.kill('SIGINT')) });
      assert.deepStrictEqual({ code: run.code, signal: run.signal }, { code: 0, signal: null }, `run ${i}: ${run.stderr}`);
      for (const address of model.addresses) assert.match(run.stdout, new RegExp(`\\[${address.replace(/\./g, '\\.')}\\] total RX \\d+ packets`));
    }
  });

  it('runs the demo: model, traffic, forwarding and a report whose numbers add up', async function () {
    const run = await runIxy(['demo', '--seconds', '2', '--rate', '300000']);
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stdout, /forwarding 0000:ff:00\.0/);
    // Each total is followed by the = and + lines that add up to it, each explained.
    const rows = [...run.stdout.matchAll(/^ +([=+]?) ?([A-Za-z ]+?) +(\d+)( {2}\S.*)?$/gm)];
    assert.strictEqual(rows.filter((r) => r[2] === 'offered').length, 2, run.stdout);
    let total = null;
    let sum = 0;
    const check = () => { if (total) assert.strictEqual(sum, Number(total[3]), `'${total[2]}' does not add up in:\n${run.stdout}`); };
    for (const row of rows) {
      if (row[1] === '') {
        check();
        total = row;
        sum = 0;
      } else {
        assert.ok(row[4], `'${row[2]}' is not explained`);
        assert.ok(Number(row[3]) >= 0);
        sum += Number(row[3]);
      }
    }
    check();
    for (const m of run.stdout.matchAll(/= delivered +(\d+)/g)) assert.ok(Number(m[1]) > 0, 'the model delivered frames to the driver');
    assert.match(run.stdout, /sink on 0000:ff:00\.1: \d+ frames checked, \d+ sequence gaps \(places where frames went missing/);
  });

  for (const signal of ['SIGINT', 'SIGTERM']) {
    it(`ixy model starts ports with a config, says where they are, and leaves nothing behind on ${signal}`, async function () {
      let printed = '';
      let attached = null;
      let signalled = false; // set before the first await: a later chunk of stdout must not signal twice
      const run = await runIxy(['model', '--ports', '3', '--config', 'source 0 rate=1000; sink 1'], {
        onStart: (child) => {
          child.stdout.on('data', async (d) => {
            printed += d;
            if (signalled || !/Ctrl-C stops the model/.test(printed)) return;
            signalled = true;
            const dir = /^ {2}export IXY_PCI_ROOT=(\S+)$/m.exec(printed)[1];
            attached = await Model.attach(dir);
            await attached.waitFor(0, (s) => s.rxOffered > 0, 5000); // the config's source runs
            attached.close();
            child.kill(signal);
          });
        },
      });
      assert.strictEqual(run.code, 0, run.stderr);
      assert.strictEqual(run.stderr, '');
      assert.deepStrictEqual(attached.addresses, ['0000:ff:00.0', '0000:ff:00.1', '0000:ff:00.2']);
      assert.match(run.stdout, /^ {2}0000:ff:00\.2 {2}MAC 02:00:00:00:ff:02$/m);
      assert.match(run.stdout, new RegExp(`^control socket: ${attached.socket} `, 'm'));
      assert.match(run.stdout, /device model stopped\n$/);
      assert.ok(!fs.existsSync(attached.dir), `${attached.dir} is still there`);
      assert.throws(() => process.kill(attached.pid, 0), { code: 'ESRCH' }, 'the model process is still running');
    });
  }

  it('ixy model says in one line what is wrong with a config', async function () {
    await failsWith(['model', '--config', 'source 9'], /^ixy: .*--config 'source 9': bad port/);
  });

  it('leaves no hugepages or hugetlbfs files behind', async function () {
    await model.stop();
    model = null;
    assert.deepStrictEqual(hugetlbfsFiles(), []);
    assert.strictEqual(hugepageBytes(), hugepagesBefore);
  });
});
