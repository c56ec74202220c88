'use strict';

// AF_XDP on veth pairs (issue 45): `ixy forward xdp:s2 xdp:d2` against the C AF_XDP
// forwarder (c-xdp-forward.c, the same rings and scheme in C), and `ixy pcap xdp:s2`
// against tcpdump on the same interface, the C receiver on the same rings and the npm
// libpcap bindings `cap` and `pcap`.
//
//   npm run bench -- --xdp [--seconds S] [--runs N] [--batch N] [--results DIR]
//
// Set-up, made fresh for each run in namespaces of this process and deleted after it:
//   [src] s1 ==veth== s2 [fwd] d2 ==veth== d1 [dst]
// The source (c-xdp-forward, on CPU 0; what is measured runs on CPU 1) sends 60-byte UDP
// frames into s1 as fast as the kernel takes them, to a MAC nobody has (the kernel behind
// d1 drops them early); it sends in one of two ways, below. A run starts the source, then
// the forwarder (or the capture) for S seconds; what it forwarded (captured) over S is its
// rate. C and JavaScript alternate run by run and the ratio is the median of each pair's
// ratio: the machine's speed drifts, and on a shared machine it drifts a lot. Every
// capture gets a deep buffer: ixy pcap and the C receiver 8192-entry RX and fill rings,
// tcpdump -B 65536 (64 MiB), the libpcap packages 64 MiB. ixy pcap runs with its default
// idle, as a user's would: on AF_XDP 'interrupt', which sleeps in the event loop on the
// socket's fd as tcpdump sleeps in poll() (the forwarders spin: they measure the ceiling).
// The npm packages `cap` and `pcap` (libpcap through Node) are measured where
// bench/libpcap-child.js finds them (IXY_CAP_DIR: a folder where `npm install cap pcap` ran).
//
// Captures: a veth's receive work (its XDP program and the copy into the UMEM, or the
// kernel's stack and AF_PACKET's copy for libpcap) runs in the NAPI poll of the CPU that
// sent, so with the source on CPU 0 a capture's kernel half took the source's CPU: the
// source slowed to what source and capture together managed, every capture kept up with
// it, and their ratio said nothing. For captures s2 therefore polls in a
// NAPI thread of its own (GRO on, /sys/class/net/s2/threaded, and s1's TSO off: see
// withSource()), pinned to the capture's CPU: the source's CPU only sends, and each capture
// pays for its whole path, kernel and user space, on CPU 1. The table shows both parts per
// frame captured: the NAPI thread's CPU (kernel) and the capture's own processes' (process,
// their system calls included).
//
// Forwarding is measured with the source `generate`, captures with both, because veth
// receives in two ways:
//   generate  c-xdp-forward sends through an AF_XDP socket on s1 (copy mode): s2 receives
//             skbs. To run an XDP program on one, veth first copies it into a page with
//             XDP's headroom (skb_pp_cow_data), a cost no NIC has and only AF_XDP pays.
//   redirect  the kernel runs an XDP program that redirects one frame to s1 over and over
//             (c-xdp-forward redirect: BPF_PROG_TEST_RUN with live frames): s2 receives XDP
//             frames in pages with headroom. Its XDP program runs on them as on a
//             native-XDP NIC's receive buffers, and for tcpdump the kernel builds an skb
//             around each, as such a NIC's driver does for XDP_PASS.
const { execFileSync, spawn } = require('child_process');
const path = require('path');
const { eachOption } = require('./args');
const { spread, machine, writeResults } = require('./summary');
const { buildCXdpForward } = require('./c-build');
const { cpuSeconds } = require('./host');

const IXY = path.join(__dirname, '..', 'bin', 'ixy.js');
const CAPTURE_RING = 8192; // RX and fill ring entries of the AF_XDP captures, ixy's and C's
const USAGE = `usage: npm run bench -- --xdp [options]
  --seconds S     measured seconds per run (default 3)
  --runs N        run pairs per measurement (default 3)
  --batch N       batch size of both forwarders (default 32)
  --results DIR   where the JSON goes (default bench/results)`;

function parseArgs(argv) {
  const o = { seconds: 3, runs: 3, batch: 32, results: path.join(__dirname, 'results') };
  eachOption(argv, USAGE, (a, next) => {
    if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--batch') o.batch = Number(next());
    else if (a === '--results') o.results = next();
    else return false;
    return true;
  });
  if (!(o.seconds >= 2) || !Number.isInteger(o.runs) || o.runs < 1) throw new Error('--seconds must be at least 2 (a capture\'s CPU is taken over its middle), --runs positive');
  if (!Number.isInteger(o.batch) || o.batch < 1 || o.batch > 256) throw new Error('--batch must be 1..256');
  return o;
}

function sh(file, args) {
  return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// The three namespaces and two veth pairs; returns the namespaces' names.
function setUp(tag) {
  const ns = ['src', 'fwd', 'dst'].map((n) => `ixyb-${process.pid}-${tag}-${n}`);
  for (const n of ns) sh('ip', ['netns', 'add', n]);
  sh('ip', ['link', 'add', 's1', 'netns', ns[0], 'type', 'veth', 'peer', 'name', 's2', 'netns', ns[1]]);
  sh('ip', ['link', 'add', 'd2', 'netns', ns[1], 'type', 'veth', 'peer', 'name', 'd1', 'netns', ns[2]]);
  for (const [n, dev] of [[ns[0], 's1'], [ns[1], 's2'], [ns[1], 'd2'], [ns[2], 'd1']]) sh('ip', ['-n', n, 'link', 'set', dev, 'up']);
  return ns;
}

function tearDown(ns) {
  for (const n of ns) {
    try {
      sh('ip', ['netns', 'del', n]);
    } catch { /* gone */ }
  }
}

// Runs `file args` in namespace ns, on CPU `cpu` (the source on 0, what is measured on 1,
// so that the two do not take turns on one CPU); resolves its stdout and stderr.
function runIn(ns, file, args, cpu = 1) {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, 'taskset', '-c', String(cpu), file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Whether bench/libpcap-child.js finds the npm package `name` (IXY_CAP_DIR).
function libpcapInstalled(name) {
  try {
    require.resolve(name, { paths: [process.env.IXY_CAP_DIR || process.cwd(), __dirname] });
    return true;
  } catch {
    return false;
  }
}

// The kernel threads named `napi/<dev>-<id>` (threaded NAPI), by pid.
function napiThreads(dev) {
  let out = '';
  try {
    out = sh('pgrep', ['-x', `napi/${dev}-[0-9]+`]);
  } catch { /* none: pgrep exits 1 */ }
  return new Set(out.split('\n').filter(Boolean));
}

// s2 in ns polls in a NAPI thread of its own on CPU `cpu` (see the top). Its thread is the
// one that appears when threaded NAPI is switched on (other namespaces may have an s2 too);
// it goes with the namespace. Returns its pid, or throws saying what is missing.
function napiThreadOn(ns, dev, cpu) {
  const before = napiThreads(dev);
  sh('ip', ['netns', 'exec', ns, 'ethtool', '-K', dev, 'gro', 'on']); // veth polls by NAPI only with GRO or XDP
  sh('ip', ['netns', 'exec', ns, 'sh', '-c', `echo 1 > /sys/class/net/${dev}/threaded`]);
  const mine = [...napiThreads(dev)].filter((pid) => !before.has(pid));
  if (mine.length !== 1) throw new Error(`threaded NAPI on ${dev}: expected one new napi/${dev} thread, found ${mine.length}`);
  sh('taskset', ['-pc', String(cpu), mine[0]]);
  return mine[0];
}

// The CPU seconds the processes of namespace ns (the capture's, whatever it forks) use from
// 1 s into a capture of S seconds to 0.5 s before its end, past its start-up and before its
// exit: { cpu, seconds }. Frames are assumed to come evenly over the run.
async function captureCpu(ns, seconds) {
  const total = () => sh('ip', ['netns', 'pids', ns]).split('\n').filter(Boolean).reduce((sum, pid) => {
    try {
      return sum + cpuSeconds(pid);
    } catch {
      return sum; // gone in between
    }
  }, 0);
  const span = seconds - 1.5;
  await sleep(1000);
  const before = total();
  await sleep(span * 1000);
  return { cpu: total() - before, seconds: span };
}

// One run: the source on s1, then `measure(ns)` (a promise of { packets, seconds }). For a
// capture, s2's receive work runs on the capture's CPU (napiThreadOn()), and what that
// work cost is kernelNs: the NAPI thread's CPU over the run per frame captured. The source
// sends through an AF_XDP socket on s1 (generate: s2 gets skbs), or with `redirect` has an
// XDP program redirect frames to s1 (s2 gets XDP frames; see the top).
async function withSource(o, cBinary, tag, measure, { capture = false, redirect = false } = {}) {
  const ns = setUp(tag);
  try {
    // veth hands a frame to its peer's NAPI poll only when the sender makes no TSO frames
    // (else to the backlog of the sending CPU, the source's). Attaching XDP to s2 turns
    // s1's TSO off by itself; off here, every capture's kernel work is s2's NAPI thread's.
    if (capture) sh('ip', ['netns', 'exec', ns[0], 'ethtool', '-K', 's1', 'tso', 'off']);
    const napi = capture ? napiThreadOn(ns[1], 's2', 1) : null;
    const seconds = String(o.seconds + 4);
    const source = runIn(ns[0], cBinary, redirect ? ['redirect', 's1', seconds] : ['generate', 's1', seconds, String(o.batch)], 0);
    await sleep(1000);
    const napiBefore = napi === null ? 0 : cpuSeconds(napi);
    const window = capture ? captureCpu(ns[1], o.seconds) : null;
    const r = await measure(ns);
    const kernelNs = napi === null ? null : ((cpuSeconds(napi) - napiBefore) * 1e9) / r.packets;
    const own = window === null ? null : await window;
    const processNs = own === null ? null : (own.cpu * 1e9) / ((r.packets * own.seconds) / r.seconds);
    const offered = JSON.parse((await source).stdout);
    return { mpps: r.packets / r.seconds / 1e6, packets: r.packets, seconds: r.seconds, offeredMpps: offered.mpps, kept: r.kept, kernelNs, processNs };
  } finally {
    tearDown(ns);
  }
}

// A capture that kept up with its source: in its median run it captured at least 95% of
// the source's rate, and kept nearly all that reached it. Its ratio then says nothing.
function sourceBound(r) {
  return r.mpps.median >= 0.95 * r.offeredMpps.median && !(r.kept && r.kept.median < 0.99);
}

// What a libpcap package's failure said, in one line: a crash (a signal, glibc's
// "malloc(): corrupted ...") is named as one.
function libpcapFailure(err) {
  const last = err.message.split('\n').map((l) => l.trim()).filter(Boolean).slice(-1)[0] || err.message;
  return /signal|corrupt|abort|double free|SIGSEGV|SIGABRT/i.test(err.message) ? `crashed (${last})` : `failed (${last})`;
}

function totalsOf(stdout) {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((e) => e.type === 'total');
}

const MEASURES = {
  // The C forwarder's own count of frames it sent on, both ways.
  cForward: (o, c) => async (ns) => {
    const r = await runIn(ns[1], c, ['forward', 's2', 'd2', String(o.seconds), String(o.batch)]);
    if (r.code !== 0) throw new Error(`c-xdp-forward: ${r.stderr.trim()}`);
    return JSON.parse(r.stdout);
  },
  jsForward: (o) => async (ns) => {
    const r = await runIn(ns[1], process.execPath, [IXY, 'forward', '--idle', 'spin', '--batch', String(o.batch), '--seconds', String(o.seconds), '--json', 'xdp:s2', 'xdp:d2']);
    if (r.code !== 0) throw new Error(`ixy forward: ${r.stderr.trim()}`);
    return { packets: totalsOf(r.stdout).reduce((sum, t) => sum + t.txPackets, 0), seconds: o.seconds };
  },
  jsCapture: (o) => async (ns) => {
    const r = await runIn(ns[1], process.execPath, [IXY, 'pcap', '--ring', String(CAPTURE_RING), '--batch', String(o.batch), '--seconds', String(o.seconds), '--json', 'xdp:s2', '/dev/null']);
    if (r.code !== 0) throw new Error(`ixy pcap: ${r.stderr.trim()}`);
    const [t] = totalsOf(r.stdout);
    return { packets: t.rxPackets, seconds: o.seconds, kept: t.rxPackets / (t.rxPackets + t.rxMissed) };
  },
  libpcap: (o, name) => async (ns) => {
    const r = await runIn(ns[1], process.execPath, [path.join(__dirname, 'libpcap-child.js'), name, 's2', String(o.seconds)]);
    if (r.code !== 0) throw new Error(`${name}: ${r.signal ? `killed by ${r.signal}: ` : `exit ${r.code}: `}${r.stderr.trim()}`);
    return JSON.parse(r.stdout);
  },
  // The C receiver: what an AF_XDP capture that does nothing with its frames reaches.
  cReceive: (o, c) => async (ns) => {
    const r = await runIn(ns[1], c, ['receive', 's2', String(o.seconds), String(o.batch), String(CAPTURE_RING)]);
    if (r.code !== 0) throw new Error(`c-xdp-forward receive: ${r.stderr.trim()}`);
    return JSON.parse(r.stdout);
  },
  tcpdump: (o) => async (ns) => {
    const r = await runIn(ns[1], 'timeout', ['-s', 'INT', String(o.seconds), 'tcpdump', '-i', 's2', '-w', '/dev/null', '-B', '65536', '-n']);
    const m = /^(\d+) packets? captured/m.exec(r.stderr);
    const seen = /^(\d+) packets? received by filter/m.exec(r.stderr);
    if (!m || !seen) throw new Error(`tcpdump: ${r.stderr.trim()}`);
    return { packets: Number(m[1]), seconds: o.seconds, kept: Number(m[1]) / Number(seen[1]) };
  },
};

// Runs a and b alternately, o.runs times each; their spreads and the median ratio a/b.
// options: withSource()'s.
async function pair(o, c, [nameA, a], [nameB, b], options = {}) {
  const runs = { [nameA]: [], [nameB]: [] };
  const ratios = [];
  for (let i = 0; i < o.runs; i++) {
    const rb = await withSource(o, c, `${nameB}${i}`, b, options);
    const ra = await withSource(o, c, `${nameA}${i}`, a, options);
    runs[nameA].push(ra);
    runs[nameB].push(rb);
    ratios.push(ra.mpps / rb.mpps);
    process.stdout.write(`  run ${i + 1}: ${nameA} ${ra.mpps.toFixed(4)} Mpps (offered ${ra.offeredMpps.toFixed(4)}), ${nameB} ${rb.mpps.toFixed(4)} Mpps (offered ${rb.offeredMpps.toFixed(4)})\n`);
  }
  const summary = (list) => ({
    mpps: spread(list.map((r) => r.mpps)), offeredMpps: spread(list.map((r) => r.offeredMpps)), kept: spread(list.map((r) => r.kept)),
    kernelNs: list[0].kernelNs === null ? null : spread(list.map((r) => r.kernelNs)),
    processNs: list[0].processNs === null ? null : spread(list.map((r) => r.processNs)), runs: list,
  });
  return { [nameA]: summary(runs[nameA]), [nameB]: summary(runs[nameB]), ratio: spread(ratios) };
}

// What ixy pcap is set beside: [name, what it is, its measure]. The libpcap packages are
// measured where found; the second list names those that are not.
function capturePeers(o, c) {
  const peers = [
    ['tcpdump', 'tcpdump -i s2 -w /dev/null', MEASURES.tcpdump(o)],
    ['c', 'c-xdp-forward receive on the same rings, which keeps nothing', MEASURES.cReceive(o, c)],
  ];
  const missing = [];
  for (const name of ['cap', 'pcap']) {
    if (libpcapInstalled(name)) peers.push([name, `the npm ${name} package (libpcap), counting its packet events`, MEASURES.libpcap(o, name)]);
    else missing.push(name);
  }
  return { peers, missing };
}

// Every capture pair with both sources (see the top): captures[source][peer] is a pair()
// or, for a libpcap package that crashed or failed, { failed }.
async function measureCaptures(o, c, peers) {
  const captures = {};
  for (const source of ['generate', 'redirect']) {
    captures[source] = {};
    for (const [name, what, measure] of peers) {
      process.stdout.write(`capture, source ${source}: ixy pcap xdp:s2 /dev/null against ${what}:\n`);
      try {
        captures[source][name] = await pair(o, c, ['js', MEASURES.jsCapture(o)], [name, measure], { capture: true, redirect: source === 'redirect' });
      } catch (err) {
        if (name !== 'cap' && name !== 'pcap') throw err;
        captures[source][name] = { failed: libpcapFailure(err) };
        process.stdout.write(`  ${name}: ${captures[source][name].failed}\n`);
      }
    }
  }
  return captures;
}

function printTable(forward, captures, missing) {
  const f = (s) => `${s.median.toFixed(4)} [${s.min.toFixed(4)}..${s.max.toFixed(4)}]`;
  // kept: of the frames that reached the capture, the share it kept (ixy: rxMissed, the
  // kernel's count of frames a socket had no room for; tcpdump: "received by filter").
  const k = (s) => (s && s.kept ? `${(100 * s.kept.median).toFixed(1)} %` : '-');
  // kernel: the NAPI thread's CPU ns per frame captured (captures only; see withSource()).
  const kn = (s) => (s.kernelNs ? s.kernelNs.median.toFixed(0) : '-');
  // process: the capture's own CPU (user and system) ns per frame (captureCpu()).
  const pn = (s) => (s.processNs ? s.processNs.median.toFixed(0) : '-');
  const out = (text) => process.stdout.write(text);
  out('\n| what | median Mpps [min..max] | source\'s Mpps over its whole run | kept | kernel ns/frame | process ns/frame |\n| --- | --- | --- | --- | --- | --- |\n');
  const row = (what, s) => out(`| ${what} | ${f(s.mpps)} | ${f(s.offeredMpps)} | ${k(s)} | ${kn(s)} | ${pn(s)} |\n`);
  row('forward, ixy (JS)', forward.js);
  row('forward, C', forward.c);
  const ratios = [`forward JS/C ${forward.ratio.median.toFixed(2)}`];
  const limited = [];
  for (const [source, peers] of Object.entries(captures)) {
    for (const [name, p] of Object.entries(peers)) {
      if (p.failed) {
        ratios.push(`${source}: ${name} ${p.failed}`);
        continue;
      }
      row(`capture (${source}), ixy pcap beside ${name}`, p.js);
      row(`capture (${source}), ${name}`, p[name]);
      ratios.push(`${source}: ixy/${name} ${p.ratio.median.toFixed(2)}`);
      for (const [what, r] of [['ixy pcap', p.js], [name, p[name]]]) if (name !== 'c' && sourceBound(r)) limited.push(`${what} (${source})`);
    }
  }
  out(`${ratios.join(', ')} (medians of pairs)\n`);
  if (missing.length) out(`not measured, not installed (IXY_CAP_DIR): ${missing.join(', ')}\n`);
  if (limited.length) out(`source-bound: ${limited.join(', ')} captured what the source offered (the source, not the capture, was the limit there)\n`);
}

async function main(argv) {
  const o = parseArgs(argv);
  const c = buildCXdpForward();
  const date = new Date();
  process.stdout.write(`AF_XDP on veth pairs: 60-byte frames, ${o.runs} run pairs of ${o.seconds} s, batch ${o.batch}\n`);
  process.stdout.write('forward, source generate: ixy forward xdp:s2 xdp:d2 against c-xdp-forward forward:\n');
  const forward = await pair(o, c, ['js', MEASURES.jsForward(o)], ['c', MEASURES.cForward(o, c)]);
  const { peers, missing } = capturePeers(o, c);
  const captures = await measureCaptures(o, c, peers);
  printTable(forward, captures, missing);
  const file = writeResults(o.results, 'xdp-', date, { date: date.toISOString(), machine: machine(), options: o, forward, captures, missing });
  process.stdout.write(`results: ${file}\n`);
}

module.exports = { main };
