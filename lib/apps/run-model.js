'use strict';

// `ixy model`: the 82599 device model as a command, for trying the driver (or any tool)
// by hand. Starts the model with `ports` ports, runs the control commands of `config`
// ('source 0 rate=1000; sink 1'), says where everything is, and runs until SIGINT or
// SIGTERM; then it stops the model, which removes its directory and socket.
const { Model } = require('../model');

async function runModel({ ports = 2, config = '', dir, out = process.stdout } = {}) {
  const model = await Model.start({ ports, config: config ? [config] : [], dir });
  out.write(describe(model));
  await untilSignal();
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

// Resolves on the first SIGINT or SIGTERM, and takes both listeners away again.
function untilSignal() {
  return new Promise((resolve) => {
    const done = () => {
      process.removeListener('SIGINT', done);
      process.removeListener('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

module.exports = { runModel };
