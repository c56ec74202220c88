'use strict';

// A cold start of `ixy forward` under V8's tracing, for the tests that ask what V8 did to the
// hot functions when the first frames came (test/commands/forward.test.js, test/commands/cold-start.test.js).
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { Model } = require('../../lib/model');
const { sleep } = require('../../lib/host/register-access');
const { IXY } = require('./helpers');

// Nanoseconds thread `pid` of process `pid` (its main thread: the forwarding loop) has
// spent runnable but waiting for a CPU (the second field of /proc/PID/schedstat).
function cpuWaitNs(pid) {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return 0;
  }
}

// `ixy forward ...args` on a fresh two-port model (port 1's sink checks the order) under the
// V8 trace `flags`; idle until it has printed `rateLines` lines of rates (one per port and
// second), then `frames` frames at `rate` frames/s into port 0; stopped (SIGINT) once they
// are through. V8 prints its trace through C stdio: under stdbuf -oL the file DIR/trace.txt
// holds V8's lines and the app's in the order they happened, so what follows the offset at
// which the traffic started is what the traffic caused.
// Resolves with { code, stderr, idleTrace, trafficTrace, ports: the model's stats,
// cpuWaitMs: how long the forwarding loop waited for a CPU while the frames came }.
async function tracedForward(dir, { flags, args = [], rateLines = 1, rate, frames }) {
  const model = await Model.start({ ports: 2, config: ['sink 0', 'sink 1 check=1'] });
  let child = null;
  try {
    const outFile = path.join(dir, 'trace.txt');
    const out = fs.openSync(outFile, 'w');
    const argv = ['-oL', process.execPath, ...flags, IXY, 'forward', ...args, ...model.addresses];
    child = spawn('stdbuf', argv, { env: { ...process.env, IXY_PCI_ROOT: model.dir }, stdio: ['ignore', out, 'pipe'] });
    fs.closeSync(out);
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 20000;
    while ((fs.readFileSync(outFile, 'utf8').match(/\] RX: /g) || []).length < rateLines) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`ixy forward printed no rate line: ${stderr}`);
      await sleep(50);
    }
    const trafficAt = fs.statSync(outFile).size;
    const waitBefore = cpuWaitNs(child.pid);
    await model.source(0, { rate, count: frames });
    await model.waitFor(0, (s) => s.rxOffered === frames, 30000);
    // The last frames through to the sink (or, should some be lost, a while to show it).
    await model.waitFor(1, (s) => s.sinkFrames === frames, 5000).catch(() => {});
    const cpuWaitMs = (cpuWaitNs(child.pid) - waitBefore) / 1e6;
    child.kill('SIGINT');
    const code = await exited;
    const trace = fs.readFileSync(outFile, 'utf8');
    return { code, stderr, idleTrace: trace.slice(0, trafficAt), trafficTrace: trace.slice(trafficAt), ports: await model.stats(), cpuWaitMs };
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await model.stop();
  }
}

// Frames the model could not place in port 0's RX ring (rxDropNoDesc) are the forwarder's
// fault unless the machine kept it off its CPU: on a busy machine it waits for one, and
// the frames that come meanwhile can overflow the ring and the packet buffer however
// ready the loop is. So losses count against the loop only beyond the frames offered
// (at `rate`) while it waited: the test owns what its forwarder did, not the machine.
function lossesBeyondCpuWait(run, rate) {
  const lost = run.ports[0].rxDropNoDesc;
  return Math.max(0, lost - Math.floor((run.cpuWaitMs * rate) / 1000));
}

module.exports = { tracedForward, lossesBeyondCpuWait };
