'use strict';

// What a polling loop does when its queues are empty (the `idle` option of open(),
// receive() and the commands):
//   'spin'      poll without pause, as a benchmark wants: a whole core, always.
//   'backoff'   poll while frames come; once the queues have stayed empty for
//               IDLE_AFTER_MS, sleep in the event loop between single polls, the longer
//               the longer the loop has been idle (a SLEEP_RAMP-th of that), at most as
//               long as the devices hold the traffic that may come (lib/device/idle-bound.js): at
//               the rate the user named (open()'s `idleRate`, frames/s), else at the
//               highest rate the loop has carried, and at least 1 Mpps. The first frame
//               returns the loop to full polling.
//   'interrupt' once the queues have stayed empty for IDLE_AFTER_MS, arm the NIC's receive
//               interrupt, poll once more (a frame that came just before arming raised
//               none), then sleep in the event loop until the interrupt (lib/host/interrupts.js)
//               or INTERRUPT_SAFETY_MS; the first frame returns the loop to full polling
//               with the interrupt masked. Devices driven through VFIO, and the device
//               model's (lib/host/model-irq.js), have interrupts, and AF_XDP devices a line
//               per RX queue (its socket, readable once the kernel has put frames on its
//               RX ring): others refuse the mode (EUNSUPPORTED, Device.interrupts()).
//               Where the kernel fills the rings (AF_XDP: Device.kernelFillsRings), the
//               kernel's NAPI poll may need the loop's CPU, so even a busy loop does not
//               poll an empty ring again: it sleeps in ppoll() on the sockets until frames
//               come or its slice ends (waitForFrames()), as tcpdump sleeps in poll().
// A longer sleep costs less CPU when idle and loses more of traffic that starts faster
// than the bound's rate (bench/idle.js measures both).
const { IxyError, shown } = require('../host/errors');
const { native } = require('../host/native');
const { longestSleepMs, DEFAULT_START_RATE } = require('./idle-bound');

const IDLE_MODES = ['spin', 'backoff', 'interrupt'];
const IDLE_AFTER_MS = 5; // empty polls for this long before the first sleep
// setTimeout's granularity (shorter asks wait 1 ms too): the first sleeps, and the shortest.
const SLEEP_MS = 1;
// A backoff sleep is this fraction of the time the loop has been idle (within the bound).
const SLEEP_RAMP = 8;
// The loop's rate is measured over windows of at least this long while it works.
const RATE_WINDOW_MS = 10;
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
// device model's, by a driver that programs its interrupts, or an AF_XDP device with RX
// queues), 'backoff' otherwise.
function bestIdle(devices) {
  return devices.length > 0 && devices.every((d) => typeof d.hasInterrupts === 'function' && d.hasInterrupts()) ? 'interrupt' : 'backoff';
}

// The traffic rate the user named for the devices' idle bound (open()'s `idleRate`,
// frames/s): the lowest of them, or 0 for none. EINVAL for anything but a positive number.
function namedRate(devices) {
  let rate = 0;
  for (const d of devices) {
    const r = d.options ? d.options.idleRate : undefined;
    if (r === undefined || r === null) continue;
    if (typeof r !== 'number' || !(r > 0) || !Number.isFinite(r)) throw new IxyError('EINVAL', `idleRate must be a positive number of frames per second, got ${shown(r)}`);
    if (rate === 0 || r < rate) rate = r;
  }
  return rate;
}

// The idleness of one polling loop over `devices`, in mode 'backoff' or 'interrupt' (a
// 'spin' loop has none): the loop says when a poll found work (worked()), asks whether it
// has been idle long enough (idle()), and then sleeps (sleep()). `queue`: the one RX queue
// the loop polls (receive()), undefined for all of them; only a device with a line per
// queue (AF_XDP) tells them apart (Device.interruptLines()).
class Idler {
  constructor(mode, devices, queue) {
    this.devices = devices;
    this.lines = null; // the lines the loop sleeps on, in 'interrupt' mode
    this.owners = null; // the device of each line
    if (mode === 'interrupt') {
      this.lines = [];
      this.owners = [];
      for (const d of devices) {
        for (const line of d.interruptLines(queue)) { // EUNSUPPORTED without any
          this.lines.push(line);
          this.owners.push(d);
        }
      }
    }
    // The lines' fds, which waitForFrames() sleeps on, where the kernel fills every
    // device's rings; null where a NIC does (an empty poll is then polled again).
    this.readableFds = this.lines !== null && this.lines.length > 0 && devices.every((d) => d.kernelFillsRings)
      ? Int32Array.from(this.lines, (line) => line.fd) : null;
    this.workedAt = performance.now();
    this.endSleep = null; // ends the sleep in progress at once
    this.armed = false; // the devices' interrupts are unmasked
    this.seen = this.lines === null ? null : this.lines.map((line) => line.count); // interrupts, per line
    this.namedRate = namedRate(devices); // frames/s, or 0
    this.peakRate = 0; // the highest rate the loop has carried, frames/s
    this.rateAt = 0; // when the current rate window began (0: none yet)
    this.rateFrames = 0; // frames received by then
  }

  // A poll found work: the loop polls at full speed again, with the interrupts masked.
  worked(now) {
    this.workedAt = now;
    if (this.armed) this.disarm();
    if (now - this.rateAt >= RATE_WINDOW_MS) this.sampleRate(now);
  }

  // The rate of the window that ends now, into peakRate; a window that spans a sleep longer
  // than a second says little and is dropped.
  sampleRate(now) {
    let frames = 0;
    for (const d of this.devices) for (const q of d.rxQueues) frames += q.packets;
    if (this.rateAt > 0 && now - this.rateAt < 1000) {
      const rate = ((frames - this.rateFrames) * 1000) / (now - this.rateAt);
      if (rate > this.peakRate) this.peakRate = rate;
    }
    this.rateAt = now;
    this.rateFrames = frames;
  }

  // The next backoff sleep, in whole ms (setTimeout's unit).
  sleepMs(now) {
    const rate = this.namedRate > 0 ? this.namedRate : Math.max(DEFAULT_START_RATE, this.peakRate);
    const ms = Math.min((now - this.workedAt) / SLEEP_RAMP, longestSleepMs(this.devices, rate));
    return ms > SLEEP_MS ? Math.floor(ms) : SLEEP_MS;
  }

  disarm() {
    this.armed = false;
    for (const d of this.devices) if (!d.closed) d.disarmInterrupt(); // a closed device's registers are unmapped
  }

  // After a poll that found nothing, where readableFds is not null: sleeps in the kernel
  // until a socket has frames, at most `ms` (what is left of the loop's slice).
  waitForFrames(ms) {
    if (ms > 0) native().waitReadable(this.readableFds, ms);
  }

  // True once nothing has come for IDLE_AFTER_MS.
  idle(now) {
    return now - this.workedAt >= IDLE_AFTER_MS;
  }

  // One sleep, after which the loop polls once: 'backoff' a timer of sleepMs();
  // 'interrupt' arms every device and calls pollOnce() first (a frame that came just
  // before the arming raised no interrupt): when that found work (true) it disarms and
  // resolves true at once, else it sleeps until an interrupt or INTERRUPT_SAFETY_MS.
  async sleep(pollOnce) {
    if (this.lines === null) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, this.sleepMs(performance.now()));
        this.endSleep = () => { clearTimeout(timer); resolve(); };
      });
    } else {
      for (const d of this.devices) d.armInterrupt();
      this.armed = true;
      if (pollOnce()) {
        this.disarm();
        return true;
      }
      const waits = this.lines.map((line) => line.wait(INTERRUPT_SAFETY_MS));
      let endTimer = null; // a loop without lines (no RX queue) waits out the safety timeout
      if (waits.length === 0) {
        waits.push(new Promise((resolve) => {
          const timer = setTimeout(resolve, INTERRUPT_SAFETY_MS);
          endTimer = () => { clearTimeout(timer); resolve(); };
        }));
      }
      this.endSleep = () => {
        for (const line of this.lines) line.cancel();
        if (endTimer !== null) endTimer();
      };
      await Promise.race(waits);
      this.endSleep(); // the lines that did not fire stop waiting too
      // A device that interrupted is masked (a NIC's vector has masked itself, EIAM). The
      // others, and all after the safety timeout, stay armed while the loop polls once and,
      // finding nothing, arms them again: masking an armed vector only to unmask it
      // microseconds later is a pair of writes the device model cannot tell from none
      // (native/model/README.md, Interrupts), which left it masked and the loop asleep.
      // worked() masks them all when the loop goes back to full polling.
      for (let i = 0; i < this.lines.length; i++) {
        if (this.lines[i].count !== this.seen[i] && !this.owners[i].closed) this.owners[i].disarmInterrupt();
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

module.exports = { idleMode, bestIdle, needsVfio, noInterrupts, namedRate, Idler };
