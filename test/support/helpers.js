'use strict';

// Shared by the driver and CLI tests: run the `ixy` command, decode pcap files with tshark,
// and check that a run left nothing behind.
const assert = require('assert');
const { spawn, execFile, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { parseTotals } = require('../../lib/apps/demo/frame-account');

const IXY = path.join(__dirname, '..', '..', 'bin', 'ixy.js');

// The processes runIxy() started: theirs are the DMA files a test may ask about.
const started = new Set();

// Resolves with { code, signal, stdout, stderr } once `child` (piped stdout and stderr) has
// ended; SIGKILL after timeoutMs. `onStart(child)` may, for example, send it a signal later.
function outcome(child, { onStart = null, timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (onStart) onStart(child);
  });
}

// Runs `ixy args...`: outcome() of it.
function runIxy(args, { env = {}, onStart = null, timeoutMs = 60000 } = {}) {
  const child = spawn(process.execPath, [IXY, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid) started.add(child.pid);
  return outcome(child, { onStart, timeoutMs });
}

// tshark's view of a pcap file: one array of field values per frame. IPv4 header and UDP
// checksums are verified (ip.checksum.status, udp.checksum.status: 'Good' or 1 when
// correct, 'Bad' or 0 when wrong, 2 when there is none to verify).
function tsharkFields(file, fields) {
  const args = ['-r', file, '-o', 'ip.check_checksum:TRUE', '-o', 'udp.check_checksum:TRUE', '-o', 'tcp.check_checksum:TRUE', '-T', 'fields', '-E', 'separator=|'];
  for (const f of fields) args.push('-e', f);
  const out = execFileSync('tshark', args, { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  return out.split('\n').filter((l) => l.length > 0).map((l) => l.split('|'));
}

// The hugepage mappings of process `pid` (this one by default), the DMA memory it holds:
// the files it mapped from /mnt/huge (its own, or another's as the model maps its clients'
// pages), or the addon's memfd fallback. `of`: only the files process `of` made
// (the addon names them ixy-PID-N). A process that is gone holds none.
function hugepageRanges(pid = 'self', of = null) {
  let maps;
  try {
    maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
  } catch {
    return [];
  }
  const mine = of === null ? (l) => l.includes('/mnt/huge/') || l.includes('/memfd:ixy-dma') : (l) => l.includes(`/mnt/huge/ixy-${of}-`);
  return maps.split('\n').filter(mine).map((l) => {
    const [from, to] = l.split(' ')[0].split('-').map((x) => parseInt(x, 16));
    return to - from;
  });
}

function hugepageMappings(pid = 'self', of = null) {
  return hugepageRanges(pid, of).length;
}

// Bytes of hugepages process `pid` maps (hugepageRanges).
function hugepageBytes(pid = 'self', of = null) {
  return hugepageRanges(pid, of).reduce((sum, bytes) => sum + bytes, 0);
}

// The DMA files left in /mnt/huge by this process or the ones runIxy() started (the addon
// unlinks each at once; one left means a process died between open and unlink). Files of
// other processes on the machine are theirs to account for.
function hugetlbfsFiles() {
  const ours = new Set([process.pid, ...started]);
  return fs.readdirSync('/mnt/huge').filter((f) => ours.has(Number((/^ixy-(\d+)-/.exec(f) || [])[1])));
}

// For tests that ask V8 whether the hot paths stay optimised: runs `body` in a child node
// that may use %-natives (%OptimizeFunctionOnNextCall optimises at once there), with the
// queue classes and PacketBatch, and the stand-in port and NIC (openPort, standInNic:
// lib/warm-up/stand-in.js) in scope. body writes one JSON value to stdout;
// returns it, parsed.
const LIB = path.join(__dirname, '..', '..', 'lib');
const STAND_IN = path.join(LIB, 'warm-up', 'stand-in.js');
const QUEUE_PREAMBLE = `
  const lib = ${JSON.stringify(LIB)};
  const { RxQueue } = require(lib + '/intel/rx-queue');
  const { TxQueue } = require(lib + '/intel/tx-queue');
  const { PacketBatch } = require(lib + '/memory/batch');
  const { openPort, standInNic } = require(${JSON.stringify(STAND_IN)});
  const ixgbeLayout = require(lib + '/intel/ixgbe/registers');
`;
function runOptimising(body) {
  const flags = ['--allow-natives-syntax', '--no-concurrent-recompilation'];
  return JSON.parse(execFileSync(process.execPath, [...flags, '-e', QUEUE_PREAMBLE + body], { encoding: 'utf8' }));
}

// A temporary directory for the mocha suite this is called in: made before its tests,
// removed with everything in it after them. Returns a function that gives its path.
function suiteTmpDir(prefix) {
  let dir = null;
  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

// A PCI function's sysfs directory as a fake tree needs it: `dir` with vendor, device (an
// 82599 unless `device` says otherwise), class (Ethernet) and a config space of `configBytes`.
function fakePciDevice(dir, { device = '0x10fb', configBytes = 4096 } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'vendor'), '0x8086\n');
  fs.writeFileSync(path.join(dir, 'device'), `${device}\n`);
  fs.writeFileSync(path.join(dir, 'class'), '0x020000\n');
  fs.writeFileSync(path.join(dir, 'config'), Buffer.alloc(configBytes));
}

// A device model of `ports` ports for the enclosing describe(), which the driver finds
// through IXY_PCI_ROOT while its tests run. Returns a function that gives the Model.
function modelForSuite(ports = 1) {
  const { Model } = require('../../lib/model');
  let model = null;
  before(async function () {
    model = await Model.start({ ports });
    process.env.IXY_PCI_ROOT = model.dir;
  });
  after(async function () {
    delete process.env.IXY_PCI_ROOT;
    if (model) await model.stop();
  });
  return () => model;
}

// For assert.throws/rejects: `err` is an IxyError with `code` and a one-line message that
// matches `pattern`.
function assertIxyError(err, code, pattern) {
  assert.strictEqual(err.name, 'IxyError', err.stack);
  assert.strictEqual(err.code, code, err.message);
  assert.match(err.message, pattern);
  assert.ok(!err.message.includes('\n'), 'one line');
  return true;
}

// CPU seconds (user + system) that process `pid` has used so far: this process's from
// process.cpuUsage(), another's from /proc/PID/stat (clock ticks of 1/100 s).
function cpuSecondsOf(pid) {
  if (pid === process.pid) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// CPU that process `pid` (this one unless given) used while fn() ran, as a share of one
// core over the wall time.
async function cpuShare(fn, pid = process.pid) {
  const cpu0 = cpuSecondsOf(pid);
  const t0 = performance.now();
  await fn();
  return (cpuSecondsOf(pid) - cpu0) / ((performance.now() - t0) / 1000);
}

// Runs `node bench/run.js args... --results dir` and resolves with { results, stdout } once
// it has exited and written exactly one results file named like `pattern`.
async function runBench(args, dir, { pattern = /\.json$/, timeoutMs = 110000 } = {}) {
  const run = path.join(__dirname, '..', '..', 'bench', 'run.js');
  const stdout = await new Promise((resolve, reject) => {
    const env = { ...process.env, IXY_TEST_OWNER: String(process.pid) };
    execFile(process.execPath, [run, ...args, '--results', dir], { timeout: timeoutMs, env }, (err, out, stderr) => {
      if (err) reject(new Error(`bench ${args.join(' ')} failed: ${stderr || err.message}`));
      else resolve(out);
    });
  });
  const files = fs.readdirSync(dir).filter((f) => pattern.test(f));
  assert.strictEqual(files.length, 1, `one results file in ${dir}, found ${files.join(', ')}`);
  return { results: JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8')), stdout };
}

// After `ixy forward A B` ran while the model stalled port 1's TX (model.stall(1, ms)): it
// exited 0, what it says it sent on B is what port 1 sent, and every frame it received on A
// was sent or dropped on B. Ends the stall. Returns its totals (parseTotals).
async function assertForwardAccounts(run, model, a, b) {
  assert.strictEqual(run.code, 0, run.stderr);
  const totals = parseTotals(run.stdout);
  const nic = await model.stats(1);
  await model.stall(1, 0);
  assert.ok(totals[b], run.stdout);
  assert.strictEqual(totals[b].txPackets, nic.txFrames, `frames said sent on ${b} against the model's:\n${run.stdout}`);
  assert.strictEqual(totals[a].rxPackets, totals[b].txPackets + totals[b].txDropped, `frames received on ${a} against sent + dropped on ${b}:\n${run.stdout}`);
  return totals;
}

// The command lines of the benchmark's driver processes (the C forwarder, js-child.js,
// stand-in.js) that runBench() of this process started, directly or not (they inherit its
// IXY_TEST_OWNER), still running or stopped. Other benchmarks on the machine are not ours.
function benchDriversLeft() {
  const mark = `\0IXY_TEST_OWNER=${process.pid}\0`;
  const left = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let args;
    let environ;
    try {
      args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      environ = `\0${fs.readFileSync(`/proc/${pid}/environ`, 'utf8')}`;
    } catch {
      continue;   // gone meanwhile
    }
    const driver = args.includes('build/c-forward') || args.includes('bench/js-child.js') || args.includes('bench/stand-in.js');
    if (driver && environ.includes(mark)) left.push(args);
  }
  return left;
}

module.exports = { IXY, outcome, assertForwardAccounts, assertIxyError, benchDriversLeft, cpuShare, runBench, runIxy, tsharkFields, hugetlbfsFiles, hugepageBytes, hugepageMappings, runOptimising, suiteTmpDir, modelForSuite, fakePciDevice };
