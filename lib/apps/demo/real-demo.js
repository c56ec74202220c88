'use strict';

// `ixy demo --real`: real traffic through the driver. Two network namespaces, each with a
// TAP wired to one port of the device model, and `ixy forward` between the ports
// (lib/apps/demo/real-net.js); then a ping and an HTTP download from one namespace to the other
// through the forwarder, and where every frame went, as the kernels, the driver and the
// model counted it.
const crypto = require('crypto');
const fs = require('fs');
const { RealNet } = require('./real-net');
const { checkTools } = require('./netns');
const { account } = require('./frame-account');

const DEMO_BYTES = 8 << 20;

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// seconds: null to end after the download; otherwise the set-up stays that long for the
// user's own commands (0: until Ctrl-C).
async function realDemo({ seconds = null, out = process.stdout } = {}) {
  checkTools(); // before the first line: a missing tool is the only line
  out.write('two network namespaces, a TAP in each wired to a port of the 82599 model, ixy forward between the ports:\n');
  const net = await RealNet.start();
  try {
    const [a, b] = net.model.addresses;
    const [nsA, nsB] = net.namespaces;
    out.write(`  ${nsA}: ${net.tap} ${net.ips[0]}/24 <-> model port ${a}\n`);
    out.write(`  ${nsB}: ${net.tap} ${net.ips[1]}/24 <-> model port ${b}\n`);
    out.write(`  ixy forward ${a} ${b} (pid ${net.forwarder.pid}): links up\n`);

    out.write(`\n$ ip netns exec ${nsA} ping -c 3 ${net.ips[1]}\n`);
    const ping = await net.ping(3);
    out.write(ping.output.split('\n').filter((l) => / bytes from |transmitted/.test(l)).map((l) => `${l}\n`).join(''));

    const file = net.makeFile('demo.bin', DEMO_BYTES);
    const url = await net.serve(1);
    out.write(`\n$ ip netns exec ${nsA} curl -o got.bin ${url}/demo.bin    # python3 -m http.server in ${nsB}\n`);
    const got = await net.download(`${url}/demo.bin`, 'got.bin');
    const same = sha256(got.file) === sha256(file);
    out.write(`${got.bytes} bytes in ${got.seconds.toFixed(2)} s: ${got.mbits.toFixed(0)} Mbit/s, SHA-256 ${same ? 'equal' : 'DIFFERENT'} to the file served\n`);

    if (seconds !== null && await linger(net, seconds, url, out) === 'signal') {
      // A Ctrl-C reached the model too, which then is gone: the forwarder's totals are all
      // there is. (It may have had the signal already; a second one does no harm.)
      net.forwarder.kill('SIGINT');
      let timer;
      await Promise.race([net.forwarder.exited, new Promise((r) => { timer = setTimeout(r, 5000); })]);
      clearTimeout(timer);
      out.write('\nstopped by a signal; the forwarder said:\n');
      out.write(net.forwarderOutput.split('\n').filter((l) => / total RX /.test(l)).map((l) => `${l}\n`).join(''));
      return { ping, download: got, same };
    }
    out.write('\nwhat crossed the forwarder, frame by frame (each TAP\'s kernel counters, the driver\'s totals):\n');
    const report = await net.finish();
    const directions = account(report, net.model.addresses);
    for (const d of directions) {
      const [from, to] = [net.namespaces[d.from], net.namespaces[d.to]];
      const [inPort, outPort] = [net.model.addresses[d.from], net.model.addresses[d.to]];
      out.write(`${from} -> ${to}:\n`);
      out.write(`  the kernel in ${from} sent     ${String(d.kernelSent).padStart(7)} frames\n`);
      out.write(`  the driver received on ${inPort} ${String(d.driverReceived).padStart(7)}   missed (RX ring full) ${d.driverMissed}, lost on the wire (no link) ${d.notReceived}\n`);
      out.write(`  the driver sent on ${outPort}     ${String(d.driverSent).padStart(7)}   dropped (held back, or unsent on the ring) ${d.txDropped}\n`);
      out.write(`  the kernel in ${to} received ${String(d.kernelReceived).padStart(7)}\n`);
      for (const [what, left, right] of d.checks) {
        if (left !== right) out.write(`  !! counts disagree: ${what}: ${left} and ${right}\n`);
      }
    }
    return { ping, download: got, same, report, directions };
  } finally {
    await net.stop();
  }
}

// Keeps the set-up for `seconds` (0: until SIGINT or SIGTERM); says what to try meanwhile.
// Resolves with 'time' or 'signal'.
async function linger(net, seconds, url, out) {
  const [nsA, nsB] = net.namespaces;
  out.write(`\nthe set-up stays ${seconds ? `for ${seconds} s` : 'until Ctrl-C'}; try, as root:\n`);
  out.write(`  ip netns exec ${nsA} ping ${net.ips[1]}\n`);
  out.write(`  ip netns exec ${nsA} curl -o /dev/null ${url}/demo.bin\n`);
  out.write(`  ip netns exec ${nsB} tcpdump -ni ${net.tap}\n`);
  let done;
  const ended = new Promise((resolve) => { done = resolve; });
  // While this listens, RealNet leaves the signal to it (it removes everything itself).
  const onSignal = () => done('signal');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = seconds ? setTimeout(() => done('time'), seconds * 1000) : null;
  try {
    return await ended;
  } finally {
    clearTimeout(timer);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

module.exports = { realDemo };
