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
const pci = require('./pci');
const vfio = require('./vfio');
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
// every way out until unguard(). bar: its mapped register BAR or null; stopBits: [offset,
// bits] pairs whose bits the signal handler clears, in order (see AdvancedNic's dmaStopBits).
// Returns the signals the handler has (the others have a handler of the program's own).
function guard(device, { bar = null, stopBits = [] } = {}) {
  install();
  if (guarded.has(device)) return native().armSignals();
  const pairs = Uint32Array.from(stopBits.flat());
  let id;
  try {
    // Bus Master is cleared through the config space: the VFIO device's region, or sysfs.
    const viaVfio = vfio.deviceOf(device.address);
    id = viaVfio ? native().guardDevice(bar, viaVfio.fd, pairs, viaVfio.configOffset)
      : native().guardDevice(bar, pci.deviceFile(device.address, 'config'), pairs);
  } catch (err) {
    throw fromNative(err, `cannot open the config space of ${device.address}`);
  }
  guarded.set(device, id);
  return native().armSignals();
}

// Takes `device` out of the guard. Call it before its BAR is unmapped: the signal handler
// writes to that BAR (the addon also does this itself when it unmaps one).
function unguard(device) {
  const id = guarded.get(device);
  if (id === undefined) return;
  guarded.delete(device);
  native().unguardDevice(id, false);
}

// Clears the device's Bus Master bit (PCI 3.0, 6.2.2) and takes it out of the guard, for
// close() once the queues are stopped. The bit is cleared through the config file opened
// at guard(), not looked up again: a program that changed IXY_PCI_ROOT since, or a
// directory that went away, must not send the write to another device (or nowhere).
// A device that was never guarded is looked up by address (pci.disableBusMastering).
// Returns the error instead of throwing it: close() releases everything else first and
// reports it last.
function release(device) {
  const id = guarded.get(device);
  try {
    if (id === undefined) {
      pci.disableBusMastering(device.address);
    } else {
      guarded.delete(device);
      native().unguardDevice(id, true);
    }
    return null;
  } catch (err) {
    return fromNative(err, `cannot clear Bus Master of ${device.address}`);
  }
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
    release(device); // an error: nothing more can be done from here
  }
}

module.exports = { guard, unguard, release, stopAll, FATAL_SIGNALS };
