'use strict';

// A cold start of `ixy forward` under V8's tracing, for the tests that ask what V8 did to the
// hot functions when the first frames came (test/forward.test.js, test/cold-start.test.js).
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { Model } = require('../../lib/model');
const { sleep } = require('../../lib/host/register-access');
const { IXY } = require('./helpers');

// `ixy forward ...args` on a fresh two-port model (port 1's sink checks the order) under the
// V8 trace `flags`; idle until it has printed `rateLines` lines of rates (one per port and
// second), then `frames` frames at `rate` frames/s into port 0; stopped (SIGINT) once they
// are through. V8 prints its trace through C stdio: under stdbuf -oL the file DIR/trace.txt
// holds V8's lines and the app's in the order they happened, so what follows the offset at
// which the traffic started is what the traffic caused.
// Resolves with { code, stderr, idleTrace, trafficTrace, ports: the model's stats }.
async function tracedForward(dir, { flags, args = [], rateLines = 1, rate, frames }) {
  const model = await Model.start({ ports: 2, config: ['sink 0', 'sink 1 check=1'] });
  try {
    const outFile = path.join(dir, 'trace.txt');
    const out = fs.openSync(outFile, 'w');
    const argv = ['-oL', process.execPath, ...flags, IXY, 'forward', ...args, ...model.addresses];
    const child = spawn('stdbuf', argv, { env: { ...process.env, IXY_PCI_ROOT: model.dir }, stdio: ['ignore', out, 'pipe'] });
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
    await model.source(0, { rate, count: frames });
    await model.waitFor(0, (s) => s.rxOffered === frames, 30000);
    // The last frames through to the sink (or, should some be lost, a while to show it).
    await model.waitFor(1, (s) => s.sinkFrames === frames, 5000).catch(() => {});
    child.kill('SIGINT');
    const code = await exited;
    const trace = fs.readFileSync(outFile, 'utf8');
    return { code, stderr, idleTrace: trace.slice(0, trafficAt), trafficTrace: trace.slice(trafficAt), ports: await model.stats() };
  } finally {
    await model.stop();
  }
}

module.exports = { tracedForward };
