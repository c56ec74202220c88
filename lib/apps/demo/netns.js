'use strict';

// Network namespaces with a TAP interface in each, for wiring the device model's ports to
// the kernel's network stack (native/model/README.md, "TAP interfaces"): made and removed
// with iproute2, their counters read as `ip -s link` shows them. lib/apps/demo/real-net.js
// builds the two-namespace set-up of `ixy demo --real` from these; test/model/tap.test.js uses
// one namespace.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { IxyError } = require('../../host/errors');

const TAP = 'ixy0'; // the TAP's name inside each namespace
// Frames of at most 1514 bytes, 1518 with FCS: the most an 82599 port takes on RX and
// sends on TX without jumbo frames (MAXFRS after reset, 8.2.3.22.13), and what the
// driver's 2 KiB buffers hold.
const MTU = 1500;
const TOOLS = { ip: 'iproute2', ping: 'iputils-ping', curl: 'curl', python3: 'python3', setpriv: 'util-linux' };

function run(file, args) {
  return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// Throws one line naming what is missing (and the Debian package) unless all is there.
function checkTools(names = Object.keys(TOOLS)) {
  if (process.getuid && process.getuid() !== 0) {
    throw new IxyError('ENOTROOT', 'real traffic needs root (network namespaces, TAP interfaces, the model\'s DMA): run as root');
  }
  const paths = (process.env.PATH || '').split(':');
  const missing = names.filter((n) => !paths.some((dir) => fs.existsSync(path.join(dir, n))));
  if (missing.length) {
    throw new IxyError('ENOTOOL', `real traffic needs ${missing.join(', ')}: install them (apt-get install ${missing.map((n) => TOOLS[n]).join(' ')})`);
  }
}

// The name of a namespace of this process: ixy-PID-SUFFIX.
function namespaceName(suffix) {
  return `ixy-${process.pid}-${suffix}`;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code !== 'ESRCH';
  }
}

// Which namespaces are ours is written down, not guessed from their names: before `ip
// netns add`, an entry REGISTRY/NAME says which process (pid and start time, so that a
// reused pid is not taken for it) made it. Only namespaces with an entry whose process is
// gone are stale; a name that merely looks like ours (a user's ixy-999999-lab) is not.
// The directory is root's and private (0700), as only root makes namespaces.
const REGISTRY = '/run/ixy-netns';

// The start time of process pid (/proc/PID/stat, field 22, in clock ticks since boot), or
// null when there is no such process.
function startTime(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1].split(' ')[19];
  } catch {
    return null;
  }
}

// The registry directory, made if missing; refused unless it is a private directory of this
// user (someone else's could list namespaces for us to delete).
function registry() {
  try {
    fs.mkdirSync(REGISTRY, { mode: 0o700 });
  } catch (err) {
    if (err.code !== 'EEXIST') throw new IxyError('EREALNET', `cannot make ${REGISTRY}: ${err.code}`);
  }
  const st = fs.lstatSync(REGISTRY);
  if (!st.isDirectory() || st.uid !== process.geteuid() || (st.mode & 0o777) !== 0o700) {
    throw new IxyError('EREALNET', `${REGISTRY} is not a private directory of this user: refusing to trust what it lists; remove it`);
  }
  return REGISTRY;
}

// Namespaces this user's earlier processes made (their entries) whose process is gone (it
// was killed with SIGKILL). Nothing else is touched.
function removeStaleNamespaces() {
  const dir = registry();
  for (const name of fs.readdirSync(dir)) {
    const [pid, start] = fs.readFileSync(path.join(dir, name), 'latin1').trim().split(' ');
    if (start !== undefined && startTime(Number(pid)) === start) continue; // still running
    deleteNamespace(name);
  }
}

// A namespace with a loopback and TAP `TAP` (no IPv6, so that the kernel sends nothing on
// its own: no router solicitations, no MLD), address `address`/24, up. The TAP has no
// carrier until the model attaches to it and the port's link is up. A namespace of that
// name that exists already is not ours: EEXIST, and it is left alone.
function makeNamespace(ns, address) {
  if (fs.existsSync(path.join('/run/netns', ns))) {
    throw new IxyError('EEXIST', `network namespace ${ns} exists already, and not by this process: remove it ('ip netns del ${ns}') if nothing uses it, then try again`);
  }
  const entry = path.join(registry(), ns);
  fs.writeFileSync(entry, `${process.pid} ${startTime(process.pid)}\n`, { mode: 0o600 });
  try {
    run('ip', ['netns', 'add', ns]);
  } catch (err) {
    fs.rmSync(entry, { force: true });
    const why = String(err.stderr || err.message).trim().split('\n')[0];
    throw new IxyError('EREALNET', `cannot make network namespace ${ns}: ${why}`);
  }
  try {
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    try {
      run('ip', ['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1']);
    } catch { /* a kernel without IPv6 sends none anyway */ }
    run('ip', ['-n', ns, 'tuntap', 'add', 'dev', TAP, 'mode', 'tap']);
    run('ip', ['-n', ns, 'link', 'set', TAP, 'mtu', String(MTU), 'up']);
    run('ip', ['-n', ns, 'addr', 'add', `${address}/24`, 'dev', TAP]);
  } catch (err) {
    deleteNamespace(ns); // made here: it goes with the failure
    const why = String(err.stderr || err.message).trim().split('\n')[0];
    throw new IxyError('EREALNET', `cannot set up network namespace ${ns}: ${why}`);
  }
}

// Deletes a namespace made by makeNamespace(), and its entry.
function deleteNamespace(ns) {
  try { run('ip', ['netns', 'del', ns]); } catch { /* not there */ }
  fs.rmSync(path.join(REGISTRY, ns), { force: true });
}

// The kernel's counters of the TAP in namespace ns (what `ip -s link` shows) and whether
// it is up: { rxPackets, rxBytes, rxDropped, txPackets, txBytes, txDropped, up }. `up` is
// the operational state, which the kernel sets after the carrier came (its link watch
// runs up to a second later) and with it starts to send.
function tapCounters(ns, tap = TAP) {
  const [link] = JSON.parse(run('ip', ['-n', ns, '-s', '-j', 'link', 'show', 'dev', tap]));
  const { rx, tx } = link.stats64;
  return {
    rxPackets: rx.packets, rxBytes: rx.bytes, rxDropped: rx.dropped,
    txPackets: tx.packets, txBytes: tx.bytes, txDropped: tx.dropped,
    up: link.operstate === 'UP',
  };
}

module.exports = { TAP, checkTools, namespaceName, removeStaleNamespaces, makeNamespace, deleteNamespace, tapCounters, isAlive };
