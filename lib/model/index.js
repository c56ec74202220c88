'use strict';
// Start and control the 82599 device model (native/model; its executable, ixy-model, comes
// from the build the addon came from: lib/host/native.js), or attach to one that runs
// already (Model.attach(dir): `ixy model` started it, say). The model prints one JSON
// "ready" line, then answers one JSON line per command line on its UNIX control socket.
// See native/model/README.md.

const childProcess = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');
const { IxyError, shown } = require('../host/errors');
const { checkOptionNames } = require('../host/option-names');
const { nativeFile, REMEDY } = require('../host/native');

const running = new Set();

// The `source` command's options besides rate, in the order they are sent.
const SOURCE_OPTIONS = ['size', 'count', 'flows', 'dst', 'ipsum', 'udpsum', 'tcpsum', 'fcs',
  'proto', 'sip', 'dip', 'sport', 'dport', 'vary', 'zipf'];
const START_OPTIONS = ['ports', 'config', 'binary', 'dir', 'device', 'iommu', 'args'];

// A port number for a control command: a whole number (the model says whether it exists).
function checkPort(port) {
  if (!Number.isInteger(port) || port < 0) throw new IxyError('EINVAL', `a model port is a whole number, got ${shown(port)}`);
}

// A crashed test must not leave models (and their hugepage mappings) behind.
process.on('exit', () => {
  for (const model of running) {
    try { process.kill(model.pid, 'SIGKILL'); } catch { /* already gone */ }
    model._removeDir();
  }
});

function modelError(message, code) {
  return new IxyError(code, message);
}

class Model {
  // where: the model's ready line or its reply to `info` (pid, dir, socket, ports);
  // child: the model's process when this one started it, else null (attached).
  constructor(where, child) {
    this.pid = where.pid;
    this.dir = where.dir;
    this.socket = where.socket;
    this.ports = where.ports;
    this.addresses = where.ports.map((p) => p.address);
    this._child = child;
    this._exited = child ? new Promise((resolve) => child.once('exit', resolve)) : null;
    this._conn = null;
    this._pending = [];   // { resolve, reject } in command order
    this._buffer = '';
    this._stopped = false;
  }

  // The model's executable, from the build the addon came from (a prebuild or node-gyp's).
  static binaryPath() {
    const bin = nativeFile('ixy-model');
    if (!fs.existsSync(bin)) {
      throw modelError(`device model not built (${bin} missing): ${REMEDY}`, 'ENOMODEL');
    }
    return bin;
  }

  // Start a model; resolves when it printed its ready line. device: PCI device ID(s) in
  // hex, one per port ('10fb' or ['10fc', '10fb']); iommu: iommu_group/type to show.
  static start(options) {
    const { ports = 2, config = [], binary, dir, device, iommu, args = [] } = checkOptionNames('Model.start()', options, START_OPTIONS);
    const bin = binary || Model.binaryPath();
    // --parent: the model exits when this process dies, even by SIGKILL or an unhandled
    // SIGINT, when no 'exit' handler runs.
    const argv = ['--ports', String(ports), '--parent', String(process.pid), ...args];
    if (dir) argv.push('--dir', dir);
    if (device !== undefined) argv.push('--device', [].concat(device).join(','));
    if (iommu !== undefined) argv.push('--iommu', iommu);
    if (config.length) argv.push('--config', config.join('; '));
    const child = childProcess.spawn(bin, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    return new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      let done = false;
      const fail = (message) => {
        if (done) return;
        done = true;
        reject(modelError(message, 'EMODELSTART'));
      };
      child.stderr.on('data', (d) => { err += d; });
      child.on('error', (e) => fail(`cannot start ${bin}: ${e.message}`));
      child.on('exit', (code, signal) => {
        const line = err.trim().split('\n').pop();
        fail(line || `ixy-model exited (${code ?? signal}) before it was ready`);
      });
      child.stdout.on('data', (d) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl < 0 || done) return;
        done = true;
        let ready;
        try {
          ready = JSON.parse(out.slice(0, nl));
        } catch {
          child.kill('SIGKILL');
          reject(modelError(`unexpected output from ixy-model: ${out.slice(0, nl)}`, 'EMODELSTART'));
          return;
        }
        const model = new Model(ready, child);
        running.add(model);
        child.stderr.removeAllListeners('data');
        child.stderr.on('data', (d) => process.stderr.write(d));
        resolve(model);
      });
    });
  }

  // Connects to the model that runs at `dir` (its control socket, `socket` if it was
  // started with --socket), to read its stats and send it commands from another process.
  // close() lets go of it; stop() asks it to quit.
  static async attach(dir, { socket = path.join(String(dir), 'control.sock') } = {}) {
    const model = new Model({ pid: null, dir, socket, ports: [] }, null);
    let where;
    try {
      where = await model.command('info');
    } catch (err) {
      model.close();
      const why = err.message.replace(/^model connection lost: /, '');
      throw modelError(`no device model answers at ${socket}: ${why} (is 'ixy model' running?)`, 'ENOMODEL');
    }
    return new Model({ ...where, dir, socket }, null);
  }

  _connect() {
    if (this._conn) return;
    this._conn = net.connect(this.socket);
    this._conn.setEncoding('utf8');
    this._conn.on('data', (d) => this._onData(d));
    const failAll = (e) => {
      const pending = this._pending;
      this._pending = [];
      this._conn = null;
      for (const p of pending) p.reject(modelError(`model connection lost: ${e ? e.message : 'closed'}`, 'EMODEL'));
    };
    this._conn.on('error', failAll);
    this._conn.on('close', () => failAll(null));
  }

  _onData(chunk) {
    this._buffer += chunk;
    let nl;
    while ((nl = this._buffer.indexOf('\n')) >= 0) {
      const line = this._buffer.slice(0, nl);
      this._buffer = this._buffer.slice(nl + 1);
      const p = this._pending.shift();
      // An idle connection does not keep the process alive (an attached script may end).
      if (this._pending.length === 0) this._conn.unref();
      if (!p) continue;
      let reply;
      try {
        reply = JSON.parse(line);
      } catch {
        p.reject(modelError(`bad reply from model: ${line}`, 'EMODEL'));
        continue;
      }
      if (reply.ok) p.resolve(reply);
      else p.reject(modelError(reply.error, 'EMODEL'));
    }
  }

  // Send one raw protocol line; replies come back in order on one connection.
  command(line) {
    if (this._stopped) return Promise.reject(modelError('model is stopped', 'EMODEL'));
    this._connect();
    this._conn.ref();
    return new Promise((resolve, reject) => {
      this._pending.push({ resolve, reject });
      this._conn.write(`${line}\n`);
    });
  }

  async stats(port) {
    const reply = await this.command(port === undefined ? 'stats' : `stats ${port}`);
    return port === undefined ? reply.ports : reply.ports[0];
  }

  // Options as the `source` command's (native/model/README.md, "Control protocol"); vary
  // may be an array of field names.
  source(port, options) {
    const { rate = 0, ...rest } = checkOptionNames('source()', options, ['rate', ...SOURCE_OPTIONS]);
    checkPort(port);
    let line = `source ${port} rate=${rate}`;
    for (const name of SOURCE_OPTIONS) {
      const value = rest[name];
      if (value !== undefined) line += ` ${name}=${Array.isArray(value) ? value.join(',') : value}`;
    }
    return this.command(line);
  }

  // The port's RSS hash of an IPv4 tuple with the key the driver programmed (RSSRK), and
  // the queue its RETA names: { hash, queue }. Without ports, over the addresses only.
  async hash(port, src, dst, sport, dport) {
    const ports = sport === undefined ? '' : ` ${sport} ${dport}`;
    const { hash, queue } = await this.command(`hash ${port} ${src} ${dst}${ports}`);
    return { hash, queue };
  }

  sourceOff(port) { return this.command(`source ${port} off`); }
  sink(port, { check = false } = {}) { return this.command(`sink ${port} check=${check ? 1 : 0}`); }
  cable(a, b) { return this.command(`cable ${a} ${b}`); }
  // Transmitted frames of the port into a pcap file, each with its wire timestamp;
  // nanoseconds: the nanosecond pcap format (magic 0xa1b23c4d) instead of microseconds.
  pcapOut(port, file, { nanoseconds = false } = {}) {
    return this.command(`pcap-out ${port} ${file || 'off'}${file && nanoseconds ? ' ts=ns' : ''}`);
  }

  // The port's line: 'paced' (10 Gb/s, the default) or 'unlimited' (frames take no wire time).
  wire(port, mode) { return this.command(`wire ${port} ${mode}`); }

  // Latency truth (README, "Latency truth"): latencyOn() starts recording on every port
  // (and clears), latency(port) is the histogram of the frames that left `port`.
  latencyOn() { return this.command('latency on'); }
  latencyOff() { return this.command('latency off'); }
  async latency(port) {
    const histogram = await this.command(`latency ${port}`); // a reply that is not ok rejects
    delete histogram.ok;
    return histogram;
  }

  pcapIn(port, file, { loop = false, rate = 0 } = {}) {
    return this.command(`pcap-in ${port} ${file} loop=${loop ? 1 : 0} rate=${rate}`);
  }

  link(port, up) { return this.command(`link ${port} ${up ? 'up' : 'down'}`); }
  stall(port, ms) { return this.command(`stall ${port} ${ms}`); }
  // Wires the port to TAP interface `ifname` (made with `ip tuntap`), in network
  // namespace `netns` if given; tapOff() unwires it. See native/model/README.md.
  tap(port, ifname, { netns } = {}) { return this.command(`tap ${port} ${ifname}${netns ? ` netns=${netns}` : ''}`); }
  tapOff(port) { return this.command(`tap ${port} off`); }
  clear(port) { return this.command(`clear ${port}`); }

  // Poll the port's stats until predicate(stats) is true.
  async waitFor(port, predicate, timeoutMs = 2000) {
    const end = Date.now() + timeoutMs;
    let last;
    for (;;) {
      last = await this.stats(port);
      if (predicate(last)) return last;
      if (Date.now() > end) {
        throw modelError(`timed out after ${timeoutMs} ms waiting on port ${port}: ${JSON.stringify(last)}`, 'ETIMEDOUT');
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  // What the model makes in its directory (its ports and its socket), and the directory
  // if nothing else is left, for a model that died before it could: whatever else is there
  // the model did not make, and stays.
  _removeDir() {
    const made = [...this.addresses.map((a) => path.join(this.dir, a)), this.socket];
    for (const file of made) {
      try { fs.rmSync(file, { recursive: true, force: true }); } catch { /* best effort */ }
    }
    try { fs.rmdirSync(this.dir); } catch { /* gone, or holds what is not ours */ }
  }

  // Closes this process's connection to the model; the model runs on.
  close() {
    if (this._conn) this._conn.destroy();
    this._conn = null;
  }

  // Stops the model: SIGTERM, wait for the exit, remove the directory if the model could
  // not. An attached model is asked to quit, and this waits until it has let go.
  async stop() {
    if (this._child === null) return this._quit();
    if (this._stopped) return this._exited;
    this._stopped = true;
    this.close();
    if (this._child.exitCode === null && this._child.signalCode === null) {
      this._child.kill('SIGTERM');
      const timer = setTimeout(() => this._child.kill('SIGKILL'), 5000);
      await this._exited;
      clearTimeout(timer);
    }
    this._removeDir();
    running.delete(this);
  }

  // stop() of an attached model: `quit`, then wait for the model to close the connection
  // (it does so when it exits, after removing its directory).
  async _quit() {
    if (this._stopped) return;
    await this.command('quit');
    const conn = this._conn;
    this._stopped = true;
    if (conn && !conn.destroyed) await new Promise((resolve) => { conn.ref(); conn.once('close', resolve); });
    this._conn = null;
  }
}

module.exports = { Model };
