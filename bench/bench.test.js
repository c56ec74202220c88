'use strict';

// The bench's own tests (`npm run test:bench`; npm test runs only bench/smoke.test.js):
// a --quick run checked field by field, --node, the command lines, ab.js and npm run profile.
// No timing thresholds: a busy machine is slow, not broken.
const assert = require('assert');
const { execFile, execFileSync, spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { benchDriversLeft, suiteTmpDir, runBench } = require('../test/support/helpers');
const { sleep } = require('./run-one');

const RUN = path.join(__dirname, 'run.js');

function checkMeasurement(m, what) {
  for (const key of ['mpps', 'nsPerPacket']) {
    assert.ok(m[key] && m[key].min <= m[key].median && m[key].median <= m[key].max, `${what}.${key}: ${JSON.stringify(m[key])}`);
  }
  assert.ok(m.mpps.median > 0, `${what}: no packets moved`);
  assert.ok(m.runs.length >= 1 && m.runs.every((r) => r.packets > 0), `${what}: a run moved no packets`);
}

// The host's phase around each measurement (line-trip.c): two probes each, in ns, and
// every measurement counted in exactly one phase or as mixed.
function checkPhases(list, phases, what) {
  assert.ok(list.every((w) => w.trips.length === 2 && w.trips.every((t) => t > 0 && t < 1e6)), `${what} trips: ${JSON.stringify(list)}`);
  const near = list.filter((w) => w.trips.every((t) => t < phases.nearBelowNs)).length;
  const far = list.filter((w) => w.trips.every((t) => t >= phases.nearBelowNs)).length;
  assert.deepStrictEqual([phases.near.count, phases.far.count, phases.mixed], [near, far, list.length - near - far], what);
}

// Side by side in --quick: two window pairs, one in each of two sessions (one per run);
// both drivers moved frames in each window, and the ratio is the median (here the mean)
// of the two windows' JS/C ratios.
function checkSideBySide(sbs, what) {
  assert.strictEqual(sbs.rounds, 2);
  assert.strictEqual(sbs.sessions, 2);
  assert.strictEqual(sbs.windows.length, 2);
  assert.ok(sbs.windows.every((w) => w.js > 0 && w.c > 0), `${what} windows: ${JSON.stringify(sbs.windows)}`);
  const windowRatios = sbs.windows.map((w) => w.js / w.c);
  assert.ok(Math.abs(sbs.ratio - (windowRatios[0] + windowRatios[1]) / 2) < 1e-9, `${what} ratio ${sbs.ratio}`);
  assert.ok(sbs.ratios.min <= sbs.ratio && sbs.ratio <= sbs.ratios.max);
  checkPhases(sbs.windows, sbs.phases, what);
}

describe('npm run bench (--quick)', function () {
  this.timeout(120000);
  const tmpDir = suiteTmpDir('ixy-bench-');

  it('measures JS and C forwarding, generate and the model ceiling, and writes the results', async function () {
    const { results: r, stdout } = await runBench(['--quick', '--batches', '32', '--runs', '2', '--seconds', '0.5', '--warmup', '0.3', '--ring', '1024'], tmpDir());
    assert.ok(r.machine.nproc >= 1 && r.machine.node === process.version);
    assert.strictEqual(r.forward.length, 1);
    const row = r.forward[0];
    assert.strictEqual(row.batch, 32);
    assert.strictEqual(r.options.ringSize, 1024);
    assert.strictEqual(row.c.runs[0].driver.ring, 1024, 'the C yardstick ran with --ring');
    checkMeasurement(row.js, 'forward.js');
    checkMeasurement(row.c, 'forward.c');
    // The ratio pairs each JS run with the C run just before it: the median of two pairs.
    const pairs = row.js.runs.map((run, i) => run.mpps / row.c.runs[i].mpps);
    assert.strictEqual(pairs.length, 2);
    assert.ok(Math.abs(row.ratio - (pairs[0] + pairs[1]) / 2) < 1e-9, `ratio ${row.ratio} from pairs ${pairs}`);
    assert.ok(row.ratios.min <= row.ratio && row.ratio <= row.ratios.max);
    // C's mean frames per receive call: at most the batch. Empty polls count as calls,
    // and c-forward prints two decimals: on a busy machine the mean can read 0.00.
    assert.ok(row.c.rxPerCall.min >= 0 && row.c.rxPerCall.max <= 32, `C mean RX batch: ${JSON.stringify(row.c.rxPerCall)}`);
    assert.ok(Number.isFinite(row.js.heapBytesPerPacket) && row.js.heapBytesPerPacket >= 0, 'heap bytes per packet');
    checkSideBySide(row.sideBySide, 'forward side by side');
    checkPhases(row.pairs, row.phases, 'run pairs');
    assert.strictEqual(r.options.rounds, 2);
    assert.ok(Number.isInteger(row.js.gcs), 'GC count');
    checkMeasurement(r.generate.js, 'generate.js');
    checkMeasurement(r.generate.c, 'generate.c');
    checkSideBySide(r.generate.sideBySide, 'generate side by side');
    // generate's own cost: two run pairs, CPU ns per packet of each language.
    const gen = r.generate.standIn;
    assert.strictEqual(gen.pairs.length, 2);
    for (const p of gen.pairs) assert.ok(p.c > 0 && p.js > 0 && Math.abs(p.ratio - p.js / p.c) < 1e-9, JSON.stringify(p));
    assert.match(stdout, /own cost \(stand-in\), CPU +JavaScript [0-9.]+ ns\/pkt, C [0-9.]+ ns\/pkt/);
    checkMeasurement(r.ceiling[0].c, 'ceiling');
    // The drivers against their stand-in NICs, without the model: batch 32 in --quick,
    // two run pairs, the ratio their median.
    assert.strictEqual(r.standIn.length, 1);
    const own = r.standIn[0];
    assert.strictEqual(own.batch, 32);
    for (const lang of ['js', 'c']) assert.ok(own[lang].mpps.median > 0 && own[lang].nsPerPacket.median > 0, `stand-in ${lang}: ${JSON.stringify(own[lang])}`);
    assert.ok(own.ratios.min <= own.ratio && own.ratio <= own.ratios.max, `stand-in ratio ${JSON.stringify(own)}`);
    assert.match(stdout, /the drivers' own cost: forwarding against a stand-in NIC, no model/);
    assert.match(stdout, /forward, batch 32/);
    assert.match(stdout, /JavaScript \/ C, side by side/);
    // Both side-by-side drivers were stopped with SIGSTOP between windows: none may be
    // left behind, stopped or running.
    assert.deepStrictEqual(benchDriversLeft(), [], 'driver processes left behind');
  });
});

// `npm run bench -- --node PATH`: every JavaScript driver process of the comparison (runs,
// side by side, the stand-in) is started with that binary. The binary here is a script that
// writes down how it was called and runs this Node, so the test sees each start.
describe('npm run bench -- --node', function () {
  this.timeout(90000);
  const tmpDir = suiteTmpDir('ixy-bench-node-');

  it('runs each JavaScript driver with the binary given, and records its version', async function () {
    const log = path.join(tmpDir(), 'calls.log');
    const wrapper = path.join(tmpDir(), 'node');
    fs.writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    const args = ['--quick', '--batches', '32', '--runs', '1', '--rounds', '1',
      '--window', '50', '--seconds', '0.3', '--warmup', '0.2', '--node', wrapper];
    const { results, stdout } = await runBench(args, path.join(tmpDir(), 'results'), { timeoutMs: 80000 });
    const calls = fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
    assert.strictEqual(calls[0], '--version');
    const children = (script) => calls.filter((c) => c.includes(`bench/${script}`));
    // forward and generate runs, and one side-by-side session each, with js-child.js;
    // the drivers' own cost with stand-in.js, forwarding and generating.
    assert.strictEqual(children('js-child.js').length, 4, calls.join('\n'));
    assert.strictEqual(children('stand-in.js').length, 2, calls.join('\n'));
    assert.strictEqual(results.machine.node, process.version);
    assert.match(stdout, new RegExp(`^bench: JavaScript under Node ${process.version.replace(/\./g, '\\.')};`));
  });

  it('refuses a binary that is not Node.js in one line', function () {
    const r = spawnSync(process.execPath, [RUN, '--node', '/bin/true'], { encoding: 'utf8' });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr, /^bench: --node \/bin\/true: not a Node.js binary \(--version said '[^\n]*'\)\n$/);
  });
});

describe('npm run bench, bench:filter and profile, asked for help or given a wrong option', function () {
  for (const script of ['run.js', 'profile.js', 'filter.js']) {
    it(`${script}: --help lists the options and exits 0; an unknown option is one line and exit code 1`, function () {
      const file = path.join(__dirname, script);
      const help = execFileSync(process.execPath, [file, '--help'], { encoding: 'utf8' });
      assert.match(help, /^usage: npm run \w+/);
      assert.match(help, script === 'filter.js' ? /--rounds/ : /--seconds/);
      let failed = null;
      try {
        execFileSync(process.execPath, [file, '--bogus'], { encoding: 'utf8', stdio: 'pipe' });
      } catch (err) {
        failed = err;
      }
      assert.strictEqual(failed && failed.status, 1);
      assert.match(failed.stderr, /^\w+: unknown option --bogus .*\n$/);
    });
  }
});

describe('bench/instructions.js and the stand-in in steps', function () {
  it('the stand-in runs a fixed number of steps and reports their packets', function () {
    const standIn = path.join(__dirname, 'stand-in.js');
    const run = (cfg) => JSON.parse(execFileSync(process.execPath, [standIn, JSON.stringify(cfg)], { encoding: 'utf8' }).trim().split('\n').pop());
    assert.deepStrictEqual(run({ batch: 32, ring: 512, warmSteps: 2000, steps: 100 }), { packets: 100 * 2 * 32 });
    assert.deepStrictEqual(run({ mode: 'generate', batch: 32, ring: 512, warmSteps: 2000, steps: 100 }), { packets: 100 * 32 });
  });

  it('--help lists the options; an unknown option or mode is one line and exit code 1', function () {
    const file = path.join(__dirname, 'instructions.js');
    assert.match(execFileSync(process.execPath, [file, '--help'], { encoding: 'utf8' }), /^usage: node bench\/instructions\.js .*--mode/);
    for (const [argv, said] of [[['--bogus'], /^instructions: unknown option --bogus .*\n$/], [['--mode', 'fast'], /^instructions: --mode must be forward or generate\n$/]]) {
      const res = spawnSync(process.execPath, [file, ...argv], { encoding: 'utf8' });
      assert.strictEqual(res.status, 1);
      assert.match(res.stderr, said);
    }
  });
});

describe('npm run bench:filter', function () {
  this.timeout(120000);
  it('times ixy, the hand-written predicates and libpcap on frames where all three keep the same', function () {
    const out = execFileSync(process.execPath, [path.join(__dirname, 'filter.js'), '--rounds', '2', '--reps', '20'], { encoding: 'utf8' });
    assert.match(out, /^filter 'udp and dst port 5000 and src net 10\.0\.0\.0\/8': 4096 frames of 60 bytes, 768 kept;/);
    assert.match(out, /\nfilter 'vlan 100 and ip': 4096 frames of 60 bytes, 768 kept;/);
    assert.match(out, /\nixy\/hand, each expression:( [\d.]+x){6}\n$/);
    assert.match(out, /\nixy compileFilter +[\d.]+ ns\/frame/);
    assert.match(out, /\nhand-written JavaScript +[\d.]+ ns\/frame .* ixy\/hand [\d.]+x/);
    assert.match(out, /\nlibpcap pcap_offline_filter +[\d.]+ ns\/frame .* libpcap\/ixy [\d.]+x/);
  });
});

describe('bench/ab.js', function () {
  this.timeout(60000);
  const AB = path.join(__dirname, 'ab.js');
  const LIB = path.join(__dirname, '..', 'lib');

  it('runs two driver versions in alternating windows on one model and reports both', function (done) {
    execFile(process.execPath, [AB, LIB, LIB, '--rounds', '2', '--window', '100'], { timeout: 50000 }, (err, stdout, stderr) => {
      if (err) return done(new Error(`ab failed: ${stderr || err.message}`));
      try {
        const m = /^A ([\d.]+) Mpps {2}B ([\d.]+) Mpps {2}B\/A ([\d.]+) \[/.exec(stdout);
        assert.ok(m, `unexpected output: ${stdout}`);
        assert.ok(Number(m[1]) > 0 && Number(m[2]) > 0, 'both versions moved packets');
        done();
      } catch (e) {
        done(e);
      }
    });
  });

  it('refuses to give a rate for a version that forwards overwritten frames', function (done) {
    // A copy of lib/ whose receive() refills descriptors with buffers from below the top
    // of the free stack: buffers end up on the ring twice, as in a real bug once measured.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-ab-'));
    fs.cpSync(LIB, path.join(dir, 'lib'), { recursive: true });
    fs.symlinkSync(path.join(LIB, '..', 'build'), path.join(dir, 'build'));
    const rx = path.join(dir, 'lib', 'intel', 'rx-queue.js');
    const source = fs.readFileSync(rx, 'utf8');
    const broken = source.replace(/const fresh = words\[\((\w+) - k\) \| 0\]/, 'const fresh = words[($1 - 2 * k) | 0]');
    assert.notStrictEqual(broken, source, 'receive() no longer has the line this test breaks');
    fs.writeFileSync(rx, broken);
    execFile(process.execPath, [AB, LIB, path.join(dir, 'lib'), '--rounds', '1', '--window', '100'], { timeout: 50000 }, (err, stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true });
      try {
        assert.strictEqual(err && err.code, 1, `ab accepted the broken version: ${stdout}`);
        assert.match(stderr, /^ab: B \(.*\) forwarded \d+ damaged and \d+ out-of-sequence frames of \d+ \(\d+ lost\): its rate means nothing\n$/);
        done();
      } catch (e) {
        done(e);
      }
    });
  });

  it('refuses a wrong command line with one line and exit code 1', function (done) {
    execFile(process.execPath, [AB, LIB], (err, stdout, stderr) => {
      try {
        assert.strictEqual(err && err.code, 1);
        assert.match(stderr, /^ab: usage: ab\.js LIB_A LIB_B/);
        assert.strictEqual(stderr.trim().split('\n').length, 1);
        done();
      } catch (e) {
        done(e);
      }
    });
  });
});

describe('npm run profile', function () {
  this.timeout(60000);
  const PROFILE = path.join(__dirname, 'profile.js');
  const tmpDir = suiteTmpDir('ixy-profile-');

  it('forwards for the seconds asked, stops by itself and writes a flame graph of forward', function (done) {
    const out = path.join(tmpDir(), 'graph');
    // The timeout only keeps a hang from stalling the suite (the forwarder once ran on
    // until 0x was killed); a slow machine still has ample room.
    execFile(process.execPath, [PROFILE, '--seconds', '1', '--out', out], { timeout: 50000 }, (err, stdout, stderr) => {
      try {
        assert.ifError(err && new Error(`profile failed: ${err.killed ? 'still running after 50 s' : stderr}`));
        const m = /^flame graph: (.+\.html)$/m.exec(stdout);
        assert.ok(m, `no path to the graph in: ${stdout}`);
        assert.strictEqual(path.dirname(m[1]), out);
        assert.match(stdout, /total RX [1-9]\d* packets/, 'forward did not stop by itself and print its totals');
        // The graph holds samples of the driver's hot path, not only start-up.
        const ticks = fs.readdirSync(out).find((f) => f.endsWith('-v8.log.json'));
        assert.ok(ticks, `no profile data in ${out}: ${fs.readdirSync(out)}`);
        assert.match(fs.readFileSync(path.join(out, ticks), 'utf8'), /receive/);
        done();
      } catch (e) {
        done(e);
      }
    });
  });

  it('ends early on SIGTERM with a flame graph, and leaves neither 0x nor the forwarder running', async function () {
    const out = path.join(tmpDir(), 'graph');
    const child = spawn(process.execPath, [PROFILE, '--seconds', '40', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    try {
      // Wait until the forwarder runs, then note 0x and the processes it started.
      for (let i = 0; i < 300 && !/forwarding /.test(stdout); i++) await sleep(100);
      assert.match(stdout, /forwarding /, `forward never started: ${stderr}`);
      await sleep(500); // some samples of the forwarding loop
      const zeroX = processes().filter((p) => p.ppid === child.pid && p.cmdline.includes(`--output-dir ${out}`));
      assert.strictEqual(zeroX.length, 1, `0x: ${JSON.stringify(zeroX)}`);
      const started = [zeroX[0], ...processes().filter((p) => p.ppid === zeroX[0].pid)];
      assert.ok(started.length >= 2, `the forwarder under 0x: ${JSON.stringify(started)}`);
      child.kill('SIGTERM');
      assert.strictEqual(await exited, 0, stderr);
      // No totals here: under 0x the forwarder exits at once on SIGINT (0x preloads a
      // handler that calls process.exit()); the graph is what this run is for.
      const m = /^flame graph: (.+\.html)$/m.exec(stdout);
      assert.ok(m && path.dirname(m[1]) === out, `no path to the graph in: ${stdout}`);
      const ticks = fs.readdirSync(out).find((f) => f.endsWith('-v8.log.json'));
      assert.match(fs.readFileSync(path.join(out, ticks), 'utf8'), /receive/);
      for (const p of started) assert.ok(!isAlive(p.pid), `still running: ${JSON.stringify(p)}`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

// Every process of this machine: [{ pid, ppid, cmdline }] (ps, as the bench test above).
function processes() {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args=']).toString().trim().split('\n').map((line) => {
    const [, pid, ppid, cmdline] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return { pid: Number(pid), ppid: Number(ppid), cmdline };
  });
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
