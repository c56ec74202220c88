'use strict';

// Real traffic through the driver: two network namespaces, each with a TAP interface that
// is wired to one port of the 82599 device model, and `ixy forward` between the two ports.
// The kernel's own ARP, ICMP and TCP on both sides then talk through the JavaScript driver:
//
//   namespace ixy-PID-a                                                namespace ixy-PID-b
//   ixy0 198.18.0.1/24 =TAP= model port 0 <- ixy forward -> model port 1 =TAP= ixy0 198.18.0.2/24
//
// Used by `ixy demo --real` and test/commands/real-traffic.test.js. The forwarder is a command that
// gets the two PCI addresses and IXY_PCI_ROOT; nothing here depends on how the driver maps
// the device. Everything made here is removed on every way out: stop(), an exception or
// process.exit() (an 'exit' handler), SIGINT/SIGTERM/SIGHUP (removed, then the signal ends
// the process as it would have, unless the program listens to it itself and calls stop()),
// and after a SIGKILL at the next start (namespaces whose process is gone). Processes run
// in a namespace get SIGKILL when this process dies (setpriv --pdeathsig); the model stops
// then too (--parent), and the forwarder follows when its device is gone.
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Model } = require('../../model');
const { TAP, checkTools, namespaceName, removeStaleNamespaces, makeNamespace, deleteNamespace, tapCounters, isAlive } = require('./netns');
const { IxyError } = require('../../host/errors');
const { parseTotals } = require('./frame-account');

const SUBNET = '198.18.0'; // 198.18.0.0/15 is set aside for benchmarking network devices (RFC 2544)
const IXY = path.join(__dirname, '..', '..', '..', 'bin', 'ixy.js');

const live = new Set(); // RealNets not stopped yet

function cpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

class RealNet {
  constructor() {
    this.namespaces = [namespaceName('a'), namespaceName('b')];
    this.ips = [`${SUBNET}.1`, `${SUBNET}.2`];
    this.tap = TAP;
    this.model = null;
    this.forwarder = null; // the child process
    this.forwarderOutput = '';
    this.children = new Set(); // processes in the namespaces
    this.made = []; // the namespaces makeNamespace() made: the only ones removed
    this.tmp = null;
    this._stopping = null;
  }

  // Makes the namespaces and TAPs, starts the model with each TAP on one port and the
  // forwarder between the ports; resolves when both TAPs are up, that is when the driver
  // has brought both links up (a TAP's carrier follows its port's link). forwarder(model)
  // returns the command to run (default: `ixy forward` of this package).
  static async start({ forwarder = null, linkTimeoutMs = 15000 } = {}) {
    checkTools();
    RealNet.removeStale();
    const net = new RealNet();
    live.add(net);
    watchWaysOut();
    try {
      net.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `ixy-real-${process.pid}-`));
      net.namespaces.forEach((ns, i) => {
        makeNamespace(ns, net.ips[i]);
        net.made.push(ns);
      });
      net.model = await Model.start({
        ports: 2,
        config: net.namespaces.map((ns, port) => `tap ${port} ${TAP} netns=${ns}`),
      });
      const [a, b] = net.model.addresses;
      const argv = forwarder ? forwarder(net.model) : [process.execPath, IXY, 'forward', a, b];
      net.forwarder = spawn(argv[0], argv.slice(1), {
        env: { ...process.env, IXY_PCI_ROOT: net.model.dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      net.forwarder.exited = new Promise((resolve) => net.forwarder.once('close', (code, signal) => resolve({ code, signal })));
      net.forwarder.stdout.on('data', (d) => { net.forwarderOutput += d; });
      net.forwarder.stderr.on('data', (d) => { net.forwarderOutput += d; });
      await net._waitForLinks(linkTimeoutMs);
      return net;
    } catch (err) {
      await net.stop();
      throw err;
    }
  }

  // What RealNets of processes that are gone left behind (killed with SIGKILL, no handler
  // ran): their namespaces (lib/apps/demo/netns.js) and temporary directories, those that are
  // private directories of this user as mkdtemp makes them.
  static removeStale() {
    removeStaleNamespaces();
    for (const name of fs.readdirSync(os.tmpdir())) {
      const m = /^ixy-real-(\d+)-/.exec(name);
      if (!m || isAlive(Number(m[1]))) continue;
      const dir = path.join(os.tmpdir(), name);
      const st = fs.lstatSync(dir);
      if (st.isDirectory() && st.uid === process.geteuid() && (st.mode & 0o777) === 0o700) fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  async _waitForLinks(timeoutMs) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (this.namespaces.every((ns) => tapCounters(ns).up)) return;
      if (this.forwarder.exitCode !== null || this.forwarder.signalCode !== null) {
        const last = this.forwarderOutput.trim().split('\n').pop();
        throw new IxyError('EREALNET', `the forwarder ended before the links came up: ${last}`);
      }
      if (Date.now() > end) throw new IxyError('ELINKTIMEOUT', `the TAPs were not up after ${timeoutMs} ms: the forwarder did not bring the links up`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  // Starts argv in namespace side (0: a, 1: b); the process is killed by stop(), and with
  // SIGKILL when this process dies. Returns the child; child.done resolves with
  // { code, signal, stdout, stderr }.
  spawnIn(side, argv) {
    const child = spawn('ip', ['netns', 'exec', this.namespaces[side], 'setpriv', '--pdeathsig', 'KILL', ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    this.children.add(child);
    child.done = new Promise((resolve) => {
      child.once('error', (err) => { stderr += err.message; });
      child.once('close', (code, signal) => {
        this.children.delete(child);
        resolve({ code, signal, stdout, stderr });
      });
    });
    return child;
  }

  // Runs argv in namespace side to its end (killed after timeoutMs).
  async runIn(side, argv, { timeoutMs = 60000 } = {}) {
    const child = this.spawnIn(side, argv);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const result = await child.done;
    clearTimeout(timer);
    return result;
  }

  // `ping -c count` from side a to b's address; resolves with { sent, received, output }.
  async ping(count = 3, { from = 0, intervalS = 0.2 } = {}) {
    const r = await this.runIn(from, ['ping', '-c', String(count), '-i', String(intervalS), '-W', '2', this.ips[1 - from]]);
    const m = /(\d+) packets transmitted, (\d+) received/.exec(r.stdout);
    return { sent: m ? Number(m[1]) : 0, received: m ? Number(m[2]) : 0, output: r.stdout + r.stderr };
  }

  // A file of `bytes` random bytes in this RealNet's temporary directory; returns its path.
  makeFile(name, bytes) {
    const file = path.join(this.tmp, name);
    const fd = fs.openSync(file, 'w');
    const chunk = Buffer.alloc(1 << 20);
    for (let left = bytes; left > 0; left -= chunk.length) {
      crypto.randomFillSync(chunk);
      fs.writeSync(fd, chunk, 0, Math.min(left, chunk.length));
    }
    fs.closeSync(fd);
    return file;
  }

  // `python3 -m http.server` in namespace side, serving the temporary directory; resolves
  // with its URL once it listens.
  async serve(side = 1, port = 8000) {
    const child = this.spawnIn(side, ['python3', '-u', '-m', 'http.server', '--bind', this.ips[side], '--directory', this.tmp, String(port)]);
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const end = Date.now() + 10000;
    while (!out.includes('Serving HTTP')) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > end) {
        child.kill('SIGKILL');
        const r = await child.done;
        throw new IxyError('EREALNET', `python3 -m http.server did not start: ${r.stderr.trim().split('\n').pop() || 'timed out'}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    this.server = child;
    return `http://${this.ips[side]}:${port}`;
  }

  // `curl` of url in namespace side into file `name` of the temporary directory; resolves
  // with { bytes, seconds, mbits, file, cpu } (cpu: seconds each process used meanwhile).
  async download(url, name, { side = 0, onProgress = null } = {}) {
    const file = path.join(this.tmp, name);
    const pids = { forwarder: this.forwarder.pid, model: this.model.pid, server: this.server && this.server.pid };
    const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
    const child = this.spawnIn(side, ['curl', '-sS', '--fail', '-o', file, '-w', '%{size_download} %{time_total}', url]);
    before.client = 0;
    const clientPid = child.pid;
    let clientCpu = 0;
    const watch = setInterval(() => {
      clientCpu = Math.max(clientCpu, cpuSeconds(clientPid));
      if (onProgress) onProgress(fs.existsSync(file) ? fs.statSync(file).size : 0);
    }, 20);
    const r = await child.done;
    clearInterval(watch);
    const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid) - before[k]]));
    cpu.client = clientCpu;
    if (r.code !== 0) throw new IxyError('EREALNET', `curl ${url} failed: ${r.stderr.trim() || `exit ${r.code ?? r.signal}`}`);
    const [bytes, seconds] = r.stdout.trim().split(' ').map(Number);
    return { bytes, seconds, mbits: (bytes * 8) / seconds / 1e6, file, cpu };
  }

  // Both TAPs' kernel counters.
  counters() {
    return this.namespaces.map((ns) => tapCounters(ns));
  }

  // Waits until neither TAP's counters change for ms (the kernels have nothing more to say).
  async quiet(ms = 300, timeoutMs = 10000) {
    const end = Date.now() + timeoutMs;
    let last = JSON.stringify(this.counters());
    let since = Date.now();
    while (Date.now() - since < ms && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      const now = JSON.stringify(this.counters());
      if (now !== last) {
        last = now;
        since = Date.now();
      }
    }
  }

  // Stops the forwarder (SIGINT: it prints its totals) and returns what every part counted:
  // { totals (the driver's, by PCI address), model (stats per port), kernel (per TAP) },
  // for account() (frame-account.js).
  // It first waits until the TAPs have been quiet for settleMs: the driver's drop counters
  // clear when read, and the model hands counts over only into a register that was read
  // as 0 (native/model/README.md, "clear-on-read by handoff"), so what the model counted
  // after one of the forwarder's once-a-second reads reaches the driver at the next one.
  async finish({ settleMs = 2200 } = {}) {
    await this.quiet(settleMs);
    if (this.forwarder.exitCode === null && this.forwarder.signalCode === null) this.forwarder.kill('SIGINT');
    const timer = setTimeout(() => this.forwarder.kill('SIGKILL'), 5000);
    const exit = await this.forwarder.exited;
    clearTimeout(timer);
    const totals = parseTotals(this.forwarderOutput);
    if (exit.code !== 0 || Object.keys(totals).length !== 2) {
      const last = this.forwarderOutput.trim().split('\n').pop();
      throw new IxyError('EREALNET', `the forwarder ended with ${exit.code ?? exit.signal} and no totals: ${last}`);
    }
    return { totals, model: await this.model.stats(), kernel: this.counters() };
  }

  // Removes everything: processes in the namespaces, the forwarder, the model, the
  // namespaces (and with them the TAPs) and the temporary directory. Safe twice.
  stop() {
    if (!this._stopping) this._stopping = this._stop();
    return this._stopping;
  }

  async _stop() {
    for (const child of this.children) child.kill('SIGKILL');
    await Promise.all([...this.children].map((c) => c.done));
    if (this.forwarder) {
      if (this.forwarder.exitCode === null && this.forwarder.signalCode === null) this.forwarder.kill('SIGTERM');
      const timer = setTimeout(() => this.forwarder.kill('SIGKILL'), 5000);
      await this.forwarder.exited;
      clearTimeout(timer);
    }
    if (this.model) await this.model.stop();
    this._removeSync();
  }

  // What can be done without waiting (a signal or 'exit' handler): kill, delete, remove.
  _removeSync() {
    for (const child of this.children) try { child.kill('SIGKILL'); } catch { /* gone */ }
    if (this.forwarder) try { this.forwarder.kill('SIGTERM'); } catch { /* gone */ }
    if (this.model && this.model.pid) try { process.kill(this.model.pid, 'SIGTERM'); } catch { /* gone */ }
    // A namespace lives on until its last process and the model's TAP descriptor are
    // gone; deleting the name now means nothing is left once they have exited.
    for (const ns of this.made) deleteNamespace(ns);
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
    live.delete(this);
    if (live.size === 0) unwatchWaysOut();
  }
}

// The ways out a process can see: 'exit' and the signals that end it by default.
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let watching = false;

function onExit() {
  for (const net of [...live]) net._removeSync();
}

function onSignal(signal) {
  // Left to the program when it listens to the signal itself (it calls stop()).
  if (process.listenerCount(signal) > 1) return;
  onExit();
  process.kill(process.pid, signal); // no listener now: the signal ends the process
}

function watchWaysOut() {
  if (watching) return;
  watching = true;
  process.on('exit', onExit);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function unwatchWaysOut() {
  watching = false;
  process.removeListener('exit', onExit);
  for (const s of SIGNALS) process.removeListener(s, onSignal);
}

module.exports = { RealNet };
