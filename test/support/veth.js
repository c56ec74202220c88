'use strict';

// veth pairs in network namespaces of this test process, for the AF_XDP backend's tests
// (test/xdp*.test.js): names that say whose they are (ixyx-PID-...), made with iproute2
// and deleted, with everything in them, by removeAll() in each suite's `after`.
const { execFileSync, spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { outcome } = require('./helpers');

const IXY = path.join(__dirname, '..', '..', 'bin', 'ixy.js');
const made = new Set();
let counter = 0;

function ip(...args) {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// Why AF_XDP tests cannot run here, or null when they can.
function xdpMissing() {
  if (process.getuid() !== 0) return 'AF_XDP tests need root (namespaces, XDP programs)';
  let protocols = '';
  try {
    protocols = fs.readFileSync('/proc/net/protocols', 'utf8');
  } catch { /* no procfs: say so below */ }
  if (!/^XDP\s/m.test(protocols)) return 'this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS: no XDP in /proc/net/protocols)';
  if (!fs.existsSync('/proc/sys/kernel/unprivileged_bpf_disabled')) return 'this kernel has no bpf() (CONFIG_BPF_SYSCALL)';
  return null;
}

// In a mocha before(): skips the suite, saying why, where AF_XDP tests cannot run.
function skipWithoutXdp(context) {
  const missing = xdpMissing();
  if (!missing) return;
  console.log(`      skipped: ${missing}`);
  context.skip();
}

function namespace(tag) {
  const ns = `ixyx-${process.pid}-${tag}-${counter++}`;
  ip('netns', 'add', ns);
  made.add(ns);
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  // IPv4 only: no router solicitations or MLD reports among the frames a test counts.
  execFileSync('ip', ['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1'], { stdio: 'ignore' });
  return ns;
}

// A veth pair, end a in nsA and end b in nsB, both up; `queues` RX and TX queues each.
// addresses: { a: '10.x.y.1/24', b: ... } to give either end an IPv4 address. Checksum
// offload is off on both ends: veth leaves a TCP or UDP checksum to be filled in later
// (CHECKSUM_PARTIAL), which never happens to a frame that goes to user space through XDP,
// so that the far side would drop it (a real NIC fills it in before the wire).
function vethPair(nsA, a, nsB, b, { queues = 1, addresses = {}, up = true } = {}) {
  ip('link', 'add', a, 'netns', nsA, 'numtxqueues', String(queues), 'numrxqueues', String(queues), 'type', 'veth',
    'peer', 'name', b, 'netns', nsB, 'numtxqueues', String(queues), 'numrxqueues', String(queues));
  for (const [ns, dev, key] of [[nsA, a, 'a'], [nsB, b, 'b']]) {
    if (addresses[key]) ip('-n', ns, 'addr', 'add', addresses[key], 'dev', dev);
    if (up) ip('-n', ns, 'link', 'set', dev, 'up');
    execFileSync('ip', ['netns', 'exec', ns, 'ethtool', '-K', dev, 'tx', 'off'], { stdio: 'ignore' });
  }
}

function mac(ns, dev) {
  return JSON.parse(ip('-n', ns, '-j', 'link', 'show', 'dev', dev))[0].address;
}

// Whether an XDP program is attached to dev (ip link shows "prog/xdp" or "xdp..." then).
function xdpAttached(ns, dev) {
  return /\bxdp/.test(ip('-n', ns, 'link', 'show', 'dev', dev).split('\n').slice(1).join('\n'));
}

// `node bin/ixy.js args...` inside ns; resolves { code, signal, stdout, stderr }.
function runIxyIn(ns, args, { onStart = null, timeoutMs = 60000 } = {}) {
  return runIn(ns, process.execPath, [IXY, ...args], { onStart, timeoutMs });
}

function runIn(ns, file, args, { onStart = null, timeoutMs = 60000 } = {}) {
  return outcome(spawnIn(ns, file, args), { onStart, timeoutMs });
}

// A process in ns: `ip netns exec` execs it, so the child's pid is the process's own.
function spawnIn(ns, file, args, options = {}) {
  return spawn('ip', ['netns', 'exec', ns, file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

// A python3 program that sends UDP datagrams first..first + count - 1 to to:port, each
// numbered in its payload's first four bytes (big-endian, then 60 bytes of 'x'), from
// `sockets` sockets in turn (their flows spread over a veth's TX queues, and so over its
// peer's RX queues), gapMs apart (0: as fast as the kernel takes them).
function numberedDatagrams({ to, port, count, first = 0, sockets = 1, gapMs = 0 }) {
  return `import socket, time\nss = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(${sockets})]\n` +
    `for i in range(${first}, ${first + count}):\n    ss[i % len(ss)].sendto(i.to_bytes(4, 'big') + b'x' * 60, ('${to}', ${port}))\n` +
    (gapMs > 0 ? `    time.sleep(${gapMs / 1000})\n` : '');
}

// Resolves once check() is true (polling every 20 ms), or rejects after timeoutMs.
async function until(check, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Deletes every namespace this process made (and with them their veth ends).
function removeAll() {
  for (const ns of made) {
    try {
      ip('netns', 'del', ns);
    } catch { /* already gone */ }
    made.delete(ns);
  }
}

module.exports = { IXY, xdpMissing, skipWithoutXdp, namespace, vethPair, mac, xdpAttached, runIxyIn, runIn, spawnIn, numberedDatagrams, until, removeAll, ip };
