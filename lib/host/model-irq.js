'use strict';

// Interrupts from the device model (native/model/irqfd.c), the host backend beside VFIO's
// (lib/host/vfio.js): as VFIO_DEVICE_SET_IRQS takes an eventfd per MSI-X vector, the model
// takes one over its control socket (SCM_RIGHTS, the addon's sendFdLine) and adds 1 to it
// whenever it sends that vector, after EIMS, EITR, EIAC and EIAM have had their say. The
// InterruptLine (lib/host/interrupts.js) watches it as it watches VFIO's; the drivers program
// the same registers and do not know which backend delivers.
// A device is the model's when its directory sits beside the model's control socket
// (lib/host/backends.js modelSocket()).
const fs = require('fs');
const { IxyError } = require('./errors');
const { native } = require('./native');
const { InterruptLine } = require('./interrupts');

const VECTOR = 0; // the drivers' receive queues raise vector 0 (Device.setupInterrupts())

// A new interrupt line of `address`, a device of the model whose control socket is
// `socket`, after `setup()` (the driver's register programming).
function modelInterruptLine(address, socket, setup) {
  setup();
  const addon = native();
  const eventFd = addon.eventFd();
  let reply;
  try {
    reply = JSON.parse(addon.sendFdLine(socket, `irqfd ${address} ${VECTOR}`, eventFd));
  } catch (err) {
    reply = { ok: false, error: err.message };
  }
  if (!reply.ok) {
    fs.closeSync(eventFd);
    throw new IxyError('EUNSUPPORTED', `idle 'interrupt': the device model of ${address} took no interrupt line (${reply.error}); use 'backoff'`);
  }
  const release = () => {
    try {
      addon.sendFdLine(socket, `irqfd ${address} ${VECTOR} off`, -1);
    } catch {
      // the model has gone, and its copy of the eventfd with it
    }
  };
  return new InterruptLine({ eventFd, release });
}

module.exports = { modelInterruptLine };
