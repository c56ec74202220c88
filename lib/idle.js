'use strict';

// What a polling loop does when its queues are empty (the `idle` option of open(),
// receive() and the commands):
//   'spin'      poll without pause, as a benchmark wants: a whole core, always.
//   'backoff'   poll while frames come; once the queues have stayed empty for
//               IDLE_AFTER_MS, sleep in the event loop for SLEEP_MS between single polls;
//               the first frame returns the loop to full polling.
//   'interrupt' once the queues have stayed empty for IDLE_AFTER_MS, arm the NIC's receive
//               interrupt, poll once more (a frame that came just before arming raised
//               none), then sleep in the event loop until the interrupt (lib/interrupts.js)
//               or INTERRUPT_SAFETY_MS; the first frame returns the loop to full polling
//               with the interrupt masked. Only devices driven through VFIO, and the
//               device model's (lib/model-irq.js), have interrupts: others refuse the
//               mode (EUNSUPPORTED, Device.interrupts()).
//
// The bound: while the loop sleeps, arriving frames wait in the RX ring and the NIC's RX
// packet buffer. Our ixgbe init gives packet buffer 0 all of its 512 KiB: 6,241 frames of
// 64 bytes (plus ~24 bytes of buffer overhead each, as the model counts them), and the
// ring has at least 384 of its 512 descriptors armed when idle (rxFreeThreshold 128): some
// 6,600 frames, 6.6 ms at 1 Mpps. A timer asked for SLEEP_MS fires a little late, so the
// loop is back a millisecond or a few after the first frame (bench/idle.js measures it;
// the README's Idle section has the figures): traffic that starts at a few Mpps of 64-byte
// frames loses nothing. In bytes the buffer is 0.4 ms of a 10 Gb/s line: a burst at line
// rate after idleness loses its start.
// A longer bound would cost less CPU when idle and lose more of a fast burst.
const { IxyError, shown } = require('./errors');

const IDLE_MODES = ['spin', 'backoff', 'interrupt'];
const IDLE_AFTER_MS = 5; // empty polls for this long before the first sleep
// setTimeout's granularity (shorter asks wait 1 ms too), and the longest sleep the bound
// above allows.
const SLEEP_MS = 1;
// How long an interrupt-waiting loop sleeps at most: should a frame slip in between the
// last poll and the arming without raising the interrupt, it waits no longer than this.
// One wake-up per second of idleness costs next to nothing.
const INTERRUPT_SAFETY_MS = 1000;

// Throws EINVAL for anything but one of IDLE_MODES; returns the mode (undefined or null:
// `fallback`, and null when that is not given either: the best the devices can do).
function idleMode(idle, fallback = null) {
  const mode = idle === undefined || idle === null ? fallback : idle;
  if (mode !== null && mode !== undefined && !IDLE_MODES.includes(mode)) {
    throw new IxyError('EINVAL', `idle must be 'spin', 'backoff' or 'interrupt', got ${shown(mode)}`);
  }
  return mode === undefined ? null : mode;
}

// The error for idle 'interrupt' on a NIC that is not driven through VFIO: only VFIO gives
// user space interrupts.
function needsVfio(address) {
  return new IxyError('EUNSUPPORTED', `idle 'interrupt' needs ${address} driven through VFIO (bind it to vfio-pci: 'ixy bind ${address}'); use 'backoff'`);
}

// The error for idle 'interrupt' on a device whose driver programs no receive interrupt
// (Device.interruptCapable false: a legacy virtio device).
function noInterrupts(dev) {
  return new IxyError('EUNSUPPORTED', `idle 'interrupt': the ${dev.driver} driver has no interrupts for ${dev.address}; use 'backoff'`);
}

// The default: 'interrupt' when every device can interrupt (driven through VFIO, or the
// device model's, by a driver that programs its interrupts), 'backoff' otherwise.
function bestIdle(devices) {
  return devices.length > 0 && devices.every((d) => typeof d.hasInterrupts === 'function' && d.hasInterrupts()) ? 'interrupt' : 'backoff';
}

// The idleness of one polling loop over `devices`, in mode 'backoff' or 'interrupt' (a
// 'spin' loop has none): the loop says when a poll found work (worked()), asks whether it
// has been idle long enough (idle()), and then sleeps (sleep()).
class Idler {
  constructor(mode, devices) {
    this.devices = devices;
    this.lines = mode === 'interrupt' ? devices.map((d) => d.interrupts()) : null; // EUNSUPPORTED without any
    this.workedAt = performance.now();
    this.endSleep = null; // ends the sleep in progress at once
    this.armed = false; // the devices' interrupts are unmasked
    this.seen = this.lines === null ? null : this.lines.map((line) => line.count); // interrupts, per line
  }

  // A poll found work: the loop polls at full speed again, with the interrupts masked.
  worked(now) {
    this.workedAt = now;
    if (this.armed) this.disarm();
  }

  disarm() {
    this.armed = false;
    for (const d of this.devices) if (!d.closed) d.disarmInterrupt(); // a closed device's registers are unmapped
  }

  // True once nothing has come for IDLE_AFTER_MS.
  idle(now) {
    return now - this.workedAt >= IDLE_AFTER_MS;
  }

  // One sleep, after which the loop polls once: 'backoff' a timer of SLEEP_MS;
  // 'interrupt' arms every device and calls pollOnce() first (a frame that came just
  // before the arming raised no interrupt): when that found work (true) it disarms and
  // resolves true at once, else it sleeps until an interrupt or INTERRUPT_SAFETY_MS.
  async sleep(pollOnce) {
    if (this.lines === null) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, SLEEP_MS);
        this.endSleep = () => { clearTimeout(timer); resolve(); };
      });
    } else {
      for (const d of this.devices) d.armInterrupt();
      this.armed = true;
      if (pollOnce()) {
        this.disarm();
        return true;
      }
      this.endSleep = () => { for (const line of this.lines) line.cancel(); };
      await Promise.race(this.lines.map((line) => line.wait(INTERRUPT_SAFETY_MS)));
      this.endSleep(); // the lines that did not fire stop waiting too
      // A device that interrupted is masked (a NIC's vector has masked itself, EIAM). The
      // others, and all after the safety timeout, stay armed while the loop polls once and,
      // finding nothing, arms them again: masking an armed vector only to unmask it
      // microseconds later is a pair of writes the device model cannot tell from none
      // (native/model/README.md, Interrupts), which left it masked and the loop asleep.
      // worked() masks them all when the loop goes back to full polling.
      for (let i = 0; i < this.lines.length; i++) {
        if (this.lines[i].count !== this.seen[i] && !this.devices[i].closed) this.devices[i].disarmInterrupt();
        this.seen[i] = this.lines[i].count;
      }
    }
    this.endSleep = null;
    return false;
  }

  // Ends a sleep still in progress, as one that found nothing: a loop that has ended
  // leaves no timer or wait behind.
  close() {
    if (this.endSleep !== null) this.endSleep();
  }
}

module.exports = { idleMode, bestIdle, needsVfio, noInterrupts, Idler };
