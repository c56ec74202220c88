'use strict';

// Boots the test guest under QEMU (TCG) with NICs wired in pairs, runs guest tests, and
// returns what they reported. Every NIC's backend is recorded by QEMU's filter-dump into
// <workDir>/<name>.pcap: an independent record of what crossed the wire.
//
//   node test/vm/run.js [tests] [kinds]      e.g.  node test/vm/run.js smoke,igb igb
// prints the guest console and exits with the guest's mocha status.
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { build } = require('./build');
const topology = require('./guest/topology');

const MEMORY = '1536M';
const HUGEPAGES = 256; // 512 MiB of 2 MiB pages

// iommu: an emulated Intel IOMMU (VT-d) that the guest kernel uses (in passthrough for its
// own drivers and for ixy's sysfs path, iommu=pt; VFIO gives each group its own domain),
// and /init then loads VFIO and runs the tests as an unprivileged user (init.sh).
function qemuArgs({ kernel, initrd, workDir }, tests, nics, iommu = false) {
  const append = `console=ttyS0 quiet loglevel=3 panic=-1 ixytest=${tests.join(',')} ixypages=${HUGEPAGES}`;
  const args = [
    '-accel', 'tcg', '-cpu', 'max', '-smp', '1', '-M', iommu ? 'q35,kernel-irqchip=split' : 'q35', '-m', MEMORY,
    '-nodefaults', '-display', 'none', '-serial', 'stdio', '-no-reboot',
    '-kernel', kernel, '-initrd', initrd,
    '-append', iommu ? `${append} intel_iommu=on iommu=pt ixyvfio=${nics.filter((n) => topology.KINDS[n.kind].vfio).map((n) => n.address).join(',')}` : append,
  ];
  // Before the NICs: a device created before the IOMMU would bypass it.
  if (iommu) args.push('-device', 'intel-iommu,intremap=on,caching-mode=on');
  for (const nic of nics) {
    const id = `n${nic.slot}`;
    const kind = topology.KINDS[nic.kind];
    // A TAP made beforehand (tapScript), with as many queues as the NIC is to offer pairs.
    if (nic.tap > 0) args.push('-netdev', `tap,id=${id},ifname=${nic.tapName},script=no,downscript=no,vhost=off${nic.tap > 1 ? `,queues=${nic.tap}` : ''}`);
    else args.push('-netdev', `hubport,id=${id},hubid=${nic.hub}`);
    // romfile= (empty): no option ROM, which would cost seconds of TCG time per NIC.
    const options = nic.options ? `,${nic.options}` : '';
    args.push('-device', `${kind.device},netdev=${id},mac=${nic.mac},romfile=,bus=pcie.0,addr=0x${nic.slot.toString(16)}${options}`);
    // QEMU's filters take netdevs of one queue only.
    if (!(nic.tap > 1)) args.push('-object', `filter-dump,id=f${nic.slot},netdev=${id},file=${path.join(workDir, `${nic.name}.pcap`)}`);
  }
  return args;
}

// For NICs on TAP interfaces: QEMU runs in a network namespace of its own (unshare, as
// root), where this script makes the TAPs (multi_queue where they have several queues),
// puts them on one bridge with each NIC's MAC bound to its TAP (frames go to that port
// only, never flooded to the others) and IPv6 off (the kernel sends nothing of its own),
// then becomes QEMU ("$@"). The namespace, bridge and TAPs end with QEMU.
function tapScript(nics) {
  const lines = [
    'set -e',
    'for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6; do if [ -w "$f" ]; then echo 1 > "$f"; fi; done',
    'ip link add ixybr type bridge',
    'ip link set ixybr up',
  ];
  for (const nic of nics.filter((n) => n.tap > 0)) {
    lines.push(`ip tuntap add dev ${nic.tapName} mode tap${nic.tap > 1 ? ' multi_queue' : ''}`);
    lines.push(`ip link set ${nic.tapName} master ixybr up`);
    lines.push(`bridge fdb add ${nic.mac} dev ${nic.tapName} master static`);
  }
  lines.push('exec "$@"');
  return lines.join('\n');
}

// The command that runs QEMU: itself, or in a network namespace of its own (tapScript).
function qemuCommand(qemu, args, nics) {
  if (!nics.some((n) => n.tap > 0)) return { file: qemu, args };
  return { file: 'unshare', args: ['--net', '--', 'sh', '-c', tapScript(nics), 'qemu-in-netns', qemu, ...args] };
}

// Parses the guest's @@ixy lines (see guest/reporter.js).
function parseConsole(text) {
  const result = { tests: [], data: [], files: [], dmesg: [], done: null, exit: null, bootSeconds: null, nodeVersion: null };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const m = /^@@ixy (\w+) ?(.*)$/.exec(line);
    if (!m) continue;
    const [, kind, rest] = m;
    if (kind === 'pass' || kind === 'pending') result.tests.push({ state: kind, title: rest });
    else if (kind === 'fail') {
      const at = rest.indexOf(' :: ');
      result.tests.push({ state: 'fail', title: at < 0 ? rest : rest.slice(0, at), error: at < 0 ? '' : rest.slice(at + 4) });
    } else if (kind === 'data') result.data.push(JSON.parse(rest));
    else if (kind === 'file') {
      const at = rest.indexOf(' ');
      result.files.push({ name: rest.slice(0, at), bytes: Buffer.from(rest.slice(at + 1), 'base64') });
    }
    else if (kind === 'done') {
      const [passes, failures, pending, ms] = rest.split(' ').map(Number);
      result.done = { passes, failures, pending, ms };
    } else if (kind === 'exit') result.exit = Number(rest);
    else if (kind === 'boot') result.bootSeconds = Number(rest.split(' ')[0]);
    else if (kind === 'node') result.nodeVersion = rest;
    else if (kind === 'dmesg') result.dmesg.push(rest);
  }
  return result;
}

// Builds (cached) and boots; resolves with the parsed result plus the console text, the
// NICs with their pcap paths, and timings. Kills QEMU when `timeoutMs` passes.
async function runGuest({ tests = ['smoke'], kinds = [], iommu = false, timeoutMs = 600000, echo = null } = {}) {
  const t0 = Date.now();
  const image = build();
  const buildSeconds = (Date.now() - t0) / 1000;
  const nics = topology.nics(kinds).map((n) => ({ ...n, pcap: path.join(image.workDir, `${n.name}.pcap`) }));
  const command = qemuCommand(image.qemu, qemuArgs(image, tests, nics, iommu), nics);
  const t1 = Date.now();
  const { text, code, timedOut } = await new Promise((resolve, reject) => {
    // `shell` is interactive: the terminal is the serial console (Ctrl-A X quits QEMU).
    const interactive = tests[0] === 'shell';
    const child = spawn(command.file, command.args, { stdio: interactive ? 'inherit' : ['pipe', 'pipe', 'pipe'] });
    let out = '';
    if (interactive) {
      child.on('close', (c) => resolve({ text: '', code: c, timedOut: false }));
      return;
    }
    const onData = (d) => {
      out += d;
      if (echo) echo.write(d);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    let killed = false;
    const timer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (c) => { clearTimeout(timer); resolve({ text: out, code: c, timedOut: killed }); });
  });
  fs.writeFileSync(path.join(image.workDir, 'console.log'), text);
  fs.rmSync(image.initrd, { force: true }); // 100+ MB; the pcaps and console stay
  const result = parseConsole(text);
  // Files the guest sent (guest/traffic.js reportFile) land beside the pcaps; only plain
  // names, so a guest cannot write elsewhere.
  for (const f of result.files) {
    if (/^[\w.-]+$/.test(f.name)) fs.writeFileSync(path.join(image.workDir, f.name), f.bytes);
  }
  return {
    ...result, console: text, qemuExit: code, timedOut, nics, workDir: image.workDir,
    buildSeconds, bootToOffSeconds: (Date.now() - t1) / 1000,
  };
}

module.exports = { runGuest, parseConsole, qemuArgs, qemuCommand };

if (require.main === module) {
  const tests = (process.argv[2] || 'smoke').split(',');
  const kinds = process.argv[3] ? process.argv[3].split(',') : [];
  const iommu = kinds.some((k) => topology.KINDS[k].vfio);
  const timeoutMs = tests.some((t) => t.startsWith('bench-')) ? 60 * 60 * 1000 : 600000;
  runGuest({ tests, kinds, iommu, timeoutMs, echo: process.stdout }).then((r) => {
    const failed = r.tests.filter((t) => t.state === 'fail').length;
    const ok = r.exit === 0 && r.done !== null && failed === 0 && !r.timedOut;
    process.stderr.write(`[vm] build ${r.buildSeconds.toFixed(1)} s, boot to power-off ${r.bootToOffSeconds.toFixed(1)} s, ` +
      `${r.tests.length} tests, ${failed} failed${r.timedOut ? ', TIMED OUT' : ''}; files in ${r.workDir}\n`);
    process.exit(ok ? 0 : 1);
  }, (err) => {
    process.stderr.write(`[vm] ${err.message}\n`);
    process.exit(2);
  });
}
