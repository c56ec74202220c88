'use strict';
// A process that opens AF_XDP devices through the library, for test/xdp-errors.test.js:
//   node xdp-child.js '<json: [[name, options], ...]>' <then>
// prints one JSON line: { opened: [mode, xdpMode] } once all are open, or { code, message }
// for the first that fails; then <then>: 'hold' (receives until a signal ends it),
// 'throw' (an uncaught exception 200 ms later) or 'close' (closes and exits).
const { open } = require('../../lib/index');
const { PacketBatch } = require('../../lib/memory/batch');

async function main() {
  const [list, then = 'close'] = process.argv.slice(2);
  const devs = [];
  try {
    for (const [name, options] of JSON.parse(list)) devs.push(await open(name, options));
  } catch (err) {
    console.log(JSON.stringify({ code: err.code, message: err.message }));
    for (const d of devs) d.close();
    return;
  }
  console.log(JSON.stringify({ opened: devs.map((d) => [d.mode, d.xdpMode]) }));
  if (then === 'close') {
    for (const d of devs) d.close();
  } else if (then === 'throw') {
    setTimeout(() => { throw new Error('an exception nobody catches'); }, 200);
  } else {
    const batch = new PacketBatch(32);
    const poll = () => {
      for (const d of devs) if (d.rxQueues.length && d.rxBatch(0, batch) > 0) batch.release();
      setTimeout(poll, 1);
    };
    poll();
  }
}

main();
