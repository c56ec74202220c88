'use strict';

// `ixy model`: the 82599 device model as a command, for trying the driver (or any tool)
// by hand. Starts the model with `ports` ports, runs the control commands of `config`
// ('source 0 rate=1000; sink 1'), says where everything is, and runs until SIGINT or
// SIGTERM, or until the command that started it is gone; then it stops the model, which
// removes its directory and socket.
const fs = require('fs');
const { Model } = require('../model');

const WATCH_MS = 200;

async function runModel({ ports = 2, config = '', dir, out = process.stdout } = {}) {
  // Listening before anything is printed: a script may signal as soon as it reads the
  // lines below, and a signal before the listeners would kill this process outright
  // instead of stopping the model.
  const stopped = untilSignalOrOrphaned();
  const model = await Model.start({ ports, config: config ? [config] : [], dir });
  out.write(describe(model));
  await stopped;
  await model.stop();
  out.write('device model stopped\n');
}

function describe(model) {
  const lines = [`device model running (pid ${model.pid}), ${model.ports.length} port${model.ports.length === 1 ? '' : 's'}:`];
  for (const p of model.ports) lines.push(`  ${p.address}  MAC ${p.mac}`);
  lines.push(
    `directory:      ${model.dir}`,
    `control socket: ${model.socket} (commands: native/model/README.md; from JavaScript: Model.attach('${model.dir}'))`,
    'point ixy (or any driver that reads IXY_PCI_ROOT) at it, e.g. from another shell:',
    `  export IXY_PCI_ROOT=${model.dir}`,
    `  ixy ${model.ports.length > 1 ? `forward ${model.addresses[0]} ${model.addresses[1]}` : `pcap ${model.addresses[0]} -`}`,
    'Ctrl-C stops the model.',
  );
  return `${lines.join('\n')}\n`;
}

// Resolves on the first SIGINT or SIGTERM, or once the command that started this one is
// gone: `npx ixy model &` then `kill $!` kills npx (npm passes no signal on), leaving
// this process behind. So it also ends when its parent changes (it was re-parented) or
// when the leader of its process group dies: a shell's background job is a process
// group, led by the command the shell started (npx), and `$!` is that leader.
function untilSignalOrOrphaned() {
  const parent = process.ppid;
  const leader = processGroup();
  const watchLeader = leader !== process.pid && leader > 1;
  return new Promise((resolve) => {
    const done = () => {
      process.removeListener('SIGINT', done);
      process.removeListener('SIGTERM', done);
      clearInterval(watcher);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
    const watcher = setInterval(() => {
      if (process.ppid !== parent || (watchLeader && !alive(leader))) done();
    }, WATCH_MS);
    watcher.unref();
  });
}

// This process's group (field 5 of /proc/self/stat, after the parenthesised name).
function processGroup() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return -1;
  }
}

// Whether pid runs (a zombie has ended: its parent just has not collected it yet).
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

module.exports = { runModel };
