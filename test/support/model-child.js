'use strict';
// Child process for test/model/model-lifecycle.test.js: a driver that is killed mid-transfer.
// argv: MODEL_JSON (dir, addresses). Allocates hugepages, receives forever.
const d = require('./model-driver');

const held = [];

async function main() {
  const model = JSON.parse(process.argv[2]);
  const dev = d.open(model, 0);
  // More hugepages to give back, held until the end (kept reachable: the collector would
  // unmap them once main() returns).
  held.push(d.addon.allocDma(4 * d.addon.HUGE_PAGE_SIZE));
  const mem = d.dmaMemory();
  d.busMaster(dev, true);
  await d.reset(dev);
  await d.linkUp(dev);
  await d.setupRx(dev, mem);
  process.stdout.write(`ready ${held[0].phys.length}\n`);
  let i = 0;
  setInterval(() => {                 // hand descriptors back: RX keeps running
    for (let k = 0; k < 64; k++, i = (i + 1) % 256) d.refillRx(mem, i);
    dev.write(d.R.RDT, (i + 255) % 256);
  }, 1);
}
main().catch((e) => { console.error(e.message); process.exit(1); });
