'use strict';

// `ixy demo`: the whole stack on any Linux box. Starts the 82599 device model with two
// ports, each fed by a traffic source and checked by a sink, points the driver at the
// model's devices, forwards between them, then shows what the driver and the model saw.
const { Model } = require('../model');
const { forward } = require('./forward');

async function demo({ seconds = 5, batchSize = 32, rate = 0, out = process.stdout } = {}) {
  const model = await Model.start({ ports: 2 });
  try {
    const [a, b] = model.addresses;
    for (const port of [0, 1]) {
      await model.sink(port, { check: true });
      await model.source(port, { rate, size: 60 });
    }
    out.write(`device model running (pid ${model.pid}): ports ${a} and ${b} at ${model.dir}\n`);
    out.write(`each port offers ${rate ? `${rate} frames/s` : 'as many 60-byte frames as its RX ring takes'}; ${seconds ? `forwarding for ${seconds} s` : 'forwarding until Ctrl-C'}\n`);
    // The driver finds PCI devices under IXY_PCI_ROOT: the one seam between it and the model.
    process.env.IXY_PCI_ROOT = model.dir;
    const result = await forward(a, b, { batchSize, seconds, out });
    for (const port of [0, 1]) await model.sourceOff(port);
    const truth = await model.stats();
    out.write('what the model saw:\n');
    for (const s of truth) {
      out.write(`[${s.address}] offered ${s.rxOffered}, delivered to the driver ${s.rxDelivered}, dropped (ring full) ${s.rxDropNoDesc}; ` +
        `transmitted by the driver ${s.txFrames}, sink sequence errors ${s.sinkSeqErrors}, bad frames ${s.sinkBadFrames}\n`);
    }
    return { ...result, model: truth };
  } finally {
    delete process.env.IXY_PCI_ROOT;
    await model.stop();
  }
}

module.exports = { demo };
