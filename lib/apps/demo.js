'use strict';

// `ixy demo`: the whole stack on any Linux box. Starts the 82599 device model with two
// ports, each fed by a traffic source and checked by a sink, points the driver at the
// model's devices, forwards between them, then shows what the driver and the model saw.
const { Model } = require('../model');
const { forward } = require('./forward');

async function demo({ seconds = 5, batchSize = 32, rate = 0, real = false, out = process.stdout } = {}) {
  // --real: the kernel's own traffic instead of the model's sources (lib/apps/demo/real-demo.js).
  if (real) return require('./demo/real-demo').realDemo({ seconds, out });
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
    out.write("where each port's frames went (the model's counts, and the driver's):\n");
    for (const [from, to] of [[truth[0], truth[1]], [truth[1], truth[0]]]) {
      out.write(directionReport(from, to, result.stats[from.address], result.stats[to.address]));
    }
    return { ...result, model: truth };
  } finally {
    delete process.env.IXY_PCI_ROOT;
    await model.stop();
  }
}

// The account of one direction: the frames of the source on port `from`, forwarded by the
// driver out of port `to`, to the sink there. from/to: the model's stats of the two ports
// (native/model/README.md); driverFrom/driverTo: the forwarder's totals for them. Each
// total is followed by the lines (= and +) that add up to it.
function directionReport(from, to, driverFrom, driverTo) {
  const arrived = from.rxDelivered + from.rxDropNoDesc + from.sourceBacklog + from.rxDropDisabled;
  const received = driverFrom.rxPackets;
  const rows = [
    ['offered', from.rxOffered, `by the model's source on ${from.address}`],
    ['= delivered', from.rxDelivered, "written by the NIC into the driver's RX ring"],
    ['+ ring full', from.rxDropNoDesc, 'dropped by the NIC: no free RX descriptor'],
    ['+ waiting', from.sourceBacklog, "still in the NIC's packet buffer when the source stopped"],
    ['+ too late', from.rxDropDisabled, 'offered after the driver had stopped receiving'],
  ];
  // Filtered or broken frames, or frames for released memory: none in the demo's traffic.
  if (arrived !== from.rxOffered) rows.push(['+ other', from.rxOffered - arrived, 'dropped for another reason (see native/model/README.md)']);
  rows.push(
    ['delivered', from.rxDelivered, ''],
    ['= received', received, 'taken from that ring by the driver'],
    ['+ on the ring', from.rxDelivered - received, 'still there when the driver stopped'],
    ['received', received, ''],
    ['= sent', to.txFrames, `taken by the NIC from ${to.address}'s TX ring, to the sink there`],
    ['+ held back', driverTo.txHeldBack, 'held by the driver for a full TX ring when it stopped: discarded'],
    ['+ unsent', driverTo.txUnsent, 'still on that TX ring at a reset after a hang or when the driver stopped: discarded'],
  );
  const lines = rows.map(([label, n, what]) => `${label.padStart(15)} ${String(n).padStart(11)}  ${what}`.trimEnd());
  return `${from.address} -> ${to.address}:\n${lines.join('\n')}\n` +
    `  sink on ${to.address}: ${to.sinkFrames} frames checked, ${to.sinkSeqErrors} sequence gaps ` +
    `(places where frames went missing: the drops above), ${to.sinkBadFrames} broken frames\n`;
}

module.exports = { demo };
