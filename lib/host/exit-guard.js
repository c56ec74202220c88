'use strict';

// Stops every open device however the process leaves. A NIC keeps doing DMA into the
// hugepages it was given until its queues are off or its Bus Master bit is clear; after the
// process is gone those pages belong to someone else. close() stops the device; this covers
// the ways out that skip it:
//
//   - 'exit': a program that ends without close(), process.exit(), an uncaught exception or
//     unhandled rejection (Node emits 'exit' for all of them). Each device still open is
//     stopped (its stop(): queues and receiver off) and its Bus Master bit cleared,
//     synchronously, as 'exit' listeners must be, and leaves the addon's registry. Node runs
//     no later 'exit' listener once one throws, so this one goes first; when a program's
//     own listener, put before it later, throws, the addon's atexit hook (native/guard.cc)
//     stops what is still registered, as the signal handler does. The registry keeps the
//     two from stopping a device twice.
//   - fatal signals, where no JavaScript runs: the addon's handler (native/guard.cc) clears
//     the register bits the driver registered (stopBits) and Bus Master, then lets the
//     signal end the process as it would have. It only takes signals whose action is the
//     default; a program with its own process.on(signal) listener decides for itself.
//   - SIGKILL cannot be caught by anyone. A device driven through VFIO is reset by the
//     kernel when its last fd closes (lib/host/vfio.js); a device driven through sysfs is not.
const { native } = require('./native');
const { fromNative } = require('./errors');

const FATAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGABRT'];

const guarded = new Map(); // device -> id in the addon's registry
let installed = false;

function install() {
  if (installed) return;
  installed = true;
  process.prependListener('exit', stopAll); // first: see the header
  // libuv resets a signal to SIG_DFL when its last JavaScript listener goes (it has done so
  // by the time 'removeListener' is emitted): take it again then.
  process.on('removeListener', (name) => {
    if (FATAL_SIGNALS.includes(name) && process.listenerCount(name) === 0) native().armSignals();
  });
}

// Registers `device` (an object with `address` and `stop()`): from now on it is stopped on
// every way out until release(). bar: its mapped register BAR or null; stopBits: [offset,
// bits] pairs whose bits the signal handler clears, in order (see lib/intel/nic.js
// dmaStopBits); config: where its backend reaches config space, to clear Bus Master there
// (DeviceHandle.guard(): [the config file] or [the VFIO device fd, the region's offset]).
// Returns the signals the handler has (the others have a handler of the program's own).
function guard(device, { bar = null, stopBits = [], config }) {
  install();
  if (guarded.has(device)) return native().armSignals();
  const pairs = Uint32Array.from(stopBits.flat());
  let id;
  try {
    id = native().guardDevice(bar, config[0], pairs, ...config.slice(1));
  } catch (err) {
    throw fromNative(err, `cannot open the config space of ${device.address}`);
  }
  guarded.set(device, id);
  return native().armSignals();
}

// Clears the device's Bus Master bit (PCI 3.0, 6.2.2) and takes it out of the guard, for
// close() once the queues are stopped: call it before the BAR is unmapped, as the signal
// handler writes to that BAR. The bit is cleared through the config space opened at
// guard(), not looked up again: a program that changed IXY_PCI_ROOT since, or a directory
// that went away, must not send the write to another device (or nowhere). Returns false
// for a device that was never guarded (its handle clears Bus Master itself).
function release(device) {
  const id = guarded.get(device);
  if (id === undefined) return false;
  guarded.delete(device);
  try {
    native().unguardDevice(id, true);
  } catch (err) {
    throw fromNative(err, `cannot clear Bus Master of ${device.address}`);
  }
  return true;
}

// The 'exit' listener: every device still registered is stopped and loses Bus Master.
// One device failing does not keep the others running.
function stopAll() {
  for (const device of [...guarded.keys()]) {
    try {
      device.stop();
    } catch {
      // Bus Master below stops its DMA all the same.
    }
    try {
      release(device);
    } catch {
      // nothing more can be done from here
    }
  }
}

module.exports = { guard, release, stopAll, FATAL_SIGNALS };
