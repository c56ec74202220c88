'use strict';
// A process that opens AF_XDP devices through the library, for test/xdp/xdp-errors.test.js:
//   node xdp-child.js '<json: [[name, options], ...]>' <then>
// prints one JSON line: { opened: [[mode, xdpMode]], pages: ['huge' | 'plain'] } once all are open, or { code, message }
// for the first that fails; then <then>: 'hold' (receives until a signal ends it),
// 'throw' (an uncaught exception 200 ms later), 'count' (receives for 2 s, prints
// { received }) or 'close' (closes and exits).
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
  const pages = (d) => (d.pools.length && d.pools[0].memory.hugepages === false ? 'plain' : 'huge');
  console.log(JSON.stringify({ opened: devs.map((d) => [d.mode, d.xdpMode]), pages: devs.map(pages) }));
  if (then === 'close') {
    for (const d of devs) d.close();
  } else if (then === 'count') {
    // receives for 2 s, then prints { received } and closes
    const batch = new PacketBatch(32);
    let received = 0;
    const end = Date.now() + 2000;
    const poll = () => {
      received += devs[0].rxBatch(0, batch);
      batch.release();
      if (Date.now() < end) setTimeout(poll, 1);
      else {
        console.log(JSON.stringify({ received }));
        for (const d of devs) d.close();
      }
    };
    poll();
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
