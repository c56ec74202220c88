'use strict';

// Child process for test/host/way-out.test.js: opens a port of the device model (IXY_PCI_ROOT),
// keeps it busy (receives what the model offers and sends it back out), and once frames
// flow both ways leaves the process the way argv[2] names:
//
//   close        dev.close(), then the program ends
//   end          the program ends without close()
//   exit3        process.exit(3)
//   exit-throws  process.exit(3) with an 'exit' listener of its own, added before open,
//                that throws (Node then runs no later 'exit' listener)
//   throw        an uncaught exception
//   segv         process.kill(process.pid, 'SIGSEGV')
//   abort        process.abort() (SIGABRT)
//   wait         prints "ready" and goes on forwarding until the parent sends a signal
//   listener     like wait, with a SIGINT listener of its own added before open: it
//                closes the device and exits with 7
//   unlistened   like wait, with a SIGINT listener added before open and removed after
//   reroot       points IXY_PCI_ROOT at argv[4] after open, then ends without close()
const ixy = require('../../lib');

async function main() {
  const [mode, address, otherRoot] = process.argv.slice(2);
  const onSigint = () => {
    dev.close();
    process.stdout.write('listener\n');
    process.exit(7);
  };
  if (mode === 'listener' || mode === 'unlistened') process.on('SIGINT', onSigint);
  if (mode === 'exit-throws') process.on('exit', () => { throw new Error('way-out test: an exit listener that throws'); });
  const dev = await ixy.open(address);
  if (mode === 'exit-throws') process.prependListener('exit', () => { throw new Error('way-out test: an exit listener that throws first'); });
  if (mode === 'unlistened') process.removeListener('SIGINT', onSigint);

  const batch = new ixy.PacketBatch(32);
  const forward = () => {
    if (dev.rxBatch(0, batch) > 0) dev.txBatch(0, batch);
    batch.release();
  };
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      forward();
      // Frames received, and frames the NIC has sent (not only queued): DMA both ways.
      if (dev.stats().rxPackets >= 64 && dev.txQueues[0].completed() >= 64) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });

  switch (mode) {
    case 'close':
      dev.close();
      return;
    case 'end':
      return;
    case 'reroot':
      process.env.IXY_PCI_ROOT = otherRoot;
      return;
    case 'exit3':
      process.exit(3);
      break;
    case 'exit-throws': // outside main(), whose catch would take the listener's exception
      setImmediate(() => process.exit(3));
      break;
    case 'throw':
      setImmediate(() => {
        throw new Error('way-out test: an exception nobody catches');
      });
      return;
    case 'segv':
      process.kill(process.pid, 'SIGSEGV');
      break;
    case 'abort':
      process.abort();
      break;
    default:
      // wait, listener, unlistened: busy until the parent's signal arrives.
      setInterval(forward, 1);
      process.stdout.write('ready\n');
  }
}

main().catch((err) => {
  process.stderr.write(`way-out-child: ${err.stack}\n`);
  process.exit(99);
});
