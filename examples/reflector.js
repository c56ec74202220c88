#!/usr/bin/env node
'use strict';

// Sends every received frame back out of the port it came in on, with source and
// destination MAC swapped: a loopback "reflector" for testing a link partner or a
// traffic generator. Ctrl-C prints the totals and exits.
//
//   sudo node examples/reflector.js 0000:03:00.0 [--debug]
//
// --debug turns on buffer ownership checks (double free, use after free throw IxyError).
// In your own project: require('ixy').
const ixy = require('..');

const { swapMacs } = ixy.packet;

// A tight loop: let V8 inline the driver's receive and send into it (docs/api.md, "Tight loops").
ixy.tuneJit();

async function main(address, debug) {
  const dev = await ixy.open(address, { debug });
  // Closing the device ends the for-await loop below at its next step. Counters are read
  // before: a closed device has no registers left to read.
  let totals = null;
  const stop = () => {
    totals = dev.stats();
    dev.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`reflecting on ${dev.address} (${dev.mac}); Ctrl-C stops`);
  let dropped = 0;

  for await (const batch of dev.receive(0, { batchSize: 32 })) {
    for (let i = 0; i < batch.count; i++) swapMacs(batch.data(i));
    // The frames that fit on the TX ring now belong to the driver (it frees them once
    // sent); those that did not (batch.ids[batch.sent..count)) are freed by the iterator
    // at the next step: dropped, as a switch with a full queue would.
    dropped += batch.count - dev.txBatch(0, batch);
  }
  console.log(`received ${totals.rxPackets}, reflected ${totals.txPackets}, dropped ${dropped} (TX ring full)`);
}

main(process.argv[2], process.argv.includes('--debug')).catch((err) => {
  console.error(`reflector: ${err.message}`);
  process.exitCode = 1;
});
