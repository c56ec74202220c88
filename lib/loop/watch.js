'use strict';

// What every app loop watches beside its steps, in one place. SIGINT, SIGTERM and `stop`
// (the app's AbortSignal, lib/apps/stop-signal.js) end the run as 'signal'; `signal`
// (ixy.run()'s AbortSignal) as 'aborted', even when either was aborted before the run
// began. Each second every device is checked (check(): link changes and recovered TX hangs
// become event lines) and, with `report`, its rates since the last second are reported
// (lib/loop/report.js); a check that throws (EDEVICELOST) ends the run as 'failed' and is
// kept in `failure` for the loop to throw. A loop goes on while `reason` is null.
const { RateMeter } = require('./rates');

// What check() found on a device, as events; a device of its own making (tests, tools)
// may offer check()'s lines alone.
function eventsOf(device) {
  if (typeof device.checkEvents === 'function') return device.checkEvents();
  return device.check().map((text) => ({ type: 'message', text }));
}

class Watch {
  constructor({ devices, lines, report = true, stop = null, signal = null }) {
    this.reason = null;
    this.failure = null;
    this.stop = stop;
    this.signal = signal;
    this.onSignal = () => { this.reason = 'signal'; };
    this.onAbort = () => { this.end('aborted'); };
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
    if (stop) {
      if (stop.aborted) this.onSignal();
      else stop.addEventListener('abort', this.onSignal);
    }
    if (signal) {
      if (signal.aborted) this.onAbort();
      else signal.addEventListener('abort', this.onAbort, { once: true });
    }
    const meters = devices.map((d) => new RateMeter(d));
    this.reporter = setInterval(() => {
      try {
        for (const d of devices) for (const event of eventsOf(d)) lines.event(d.address, event);
      } catch (err) {
        this.failure = err;
        this.reason = 'failed';
        return;
      }
      if (report) for (const m of meters) lines.rates(m.device.address, m.sample());
    }, 1000);
  }

  // Ends the run for `reason`, unless something ended it already.
  end(reason) {
    if (this.reason === null) this.reason = reason;
  }

  close() {
    clearInterval(this.reporter);
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
    if (this.stop) this.stop.removeEventListener('abort', this.onSignal);
    if (this.signal) this.signal.removeEventListener('abort', this.onAbort);
  }
}

module.exports = { Watch };
